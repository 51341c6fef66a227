"""VFS benchmark: per-operation cost with 1,000 and 10,000 files present, snapshots, grep, glob.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``. Standalone
(``python bench/bench_vfs.py [--quick]``) it prints the raw figures. Operations run directly
on ``InMemoryFilesystem``; every file is 4 KiB of code-like text. The reference library took
28 ms to grep and 21 ms to glob 1,000 such files; the targets are half of that.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Result, Sample, measure, result

from haversack_vfs import InMemoryFilesystem

SUITE = "vfs"
FILE_BYTES = 4096
GREP_TARGET_S = 0.014  # half the reference library's 28 ms
GLOB_TARGET_S = 0.0105  # half the reference library's 21 ms
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "import",
    "return",
    "def",
    "class",
    "self",
    "value",
    "result",
    "None",
    "True",
]


def make_content(rng: random.Random, index: int) -> str:
    """About 4 KiB of code-like lines; every 20th file has a TODO line; one EDIT-ME marker."""
    lines = [f"# module {index}", "EDIT-ME-A"]
    size = sum(len(line) + 1 for line in lines)
    while size < FILE_BYTES:
        line = "    " + " ".join(rng.choice(WORDS) for _ in range(6))
        if index % 20 == 0 and len(lines) == 10:
            line = "    # TODO: tidy this up"
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n")[:FILE_BYTES]


def build(n_files: int) -> InMemoryFilesystem:
    """A filesystem with ``n_files`` 4 KiB files spread over 50 packages."""
    rng = random.Random(n_files)
    fs = InMemoryFilesystem()
    for i in range(n_files):
        fs.write(f"src/pkg{i % 50}/mod{i}.py", make_content(rng, i))
    return fs


def _cycle(fs: InMemoryFilesystem, n_files: int) -> dict[str, Callable[[], object]]:
    rng = random.Random(1)
    content = make_content(rng, 7)
    paths = [f"src/pkg{i % 50}/mod{i}.py" for i in range(n_files)]
    state = {"i": 0, "new": 0, "edit": 0}

    def next_path() -> str:
        state["i"] = (state["i"] + 7919) % n_files
        return paths[state["i"]]

    def write_overwrite() -> object:
        return fs.write(next_path(), content, mode="overwrite")

    def write_create() -> object:
        state["new"] += 1
        return fs.write(f"new/f{state['new']}.py", content)

    def read() -> object:
        return fs.read(next_path())

    def edit() -> object:
        # Alternate the marker in one file so the text to replace is always unique.
        state["edit"] ^= 1
        old, new = ("EDIT-ME-A", "EDIT-ME-B") if state["edit"] else ("EDIT-ME-B", "EDIT-ME-A")
        return fs.edit(paths[0], old, new)

    def snapshot_then_write() -> object:
        fs.snapshot()
        return fs.write(next_path(), content, mode="overwrite")

    return {
        "write (overwrite 4 KiB)": write_overwrite,
        "write (create 4 KiB)": write_create,
        "read (4 KiB)": read,
        "edit (unique match, 4 KiB)": edit,
        "snapshot": fs.snapshot,
        "snapshot + write": snapshot_then_write,
    }


def figures(quick: bool) -> list[tuple[str, Sample, float | None]]:
    """(name, sample, target seconds or None) for every measured workload."""
    op_repeats = 200 if quick else 2000
    scan_repeats = 5 if quick else 30
    out: list[tuple[str, Sample, float | None]] = []
    for n_files in (1_000, 10_000):
        fs = build(n_files)
        for name, fn in _cycle(fs, n_files).items():
            out.append((f"{name}, {n_files:,} files", measure(fn, repeats=op_repeats), None))
    fs = build(1_000)
    scans: list[tuple[str, Callable[[], object], float | None]] = [
        ("grep 'TODO' (50 hits), 1,000 files", lambda: fs.grep("TODO"), GREP_TARGET_S),
        ("grep 'no such text', 1,000 files", lambda: fs.grep("no such text"), GREP_TARGET_S),
        (
            r"grep '^\s+def\b' (capped at 100), 1,000 files",
            lambda: fs.grep(r"^\s+def\b"),
            GREP_TARGET_S,
        ),
        (
            "grep 'TODO' with glob '**/*.py', 1,000 files",
            lambda: fs.grep("TODO", glob="**/*.py"),
            GREP_TARGET_S,
        ),
        (
            r"grep '\bdef\b' (10,000-match cap, ~10k hits), 1,000 files",
            lambda: fs.grep(r"\bdef\b", max_matches=10_000),
            None,
        ),
        ("glob '**/*.py', 1,000 files", lambda: fs.glob("**/*.py"), GLOB_TARGET_S),
        ("glob 'src/pkg7/*.py', 1,000 files", lambda: fs.glob("src/pkg7/*.py"), GLOB_TARGET_S),
    ]
    for name, fn, target in scans:
        out.append((name, measure(fn, repeats=scan_repeats), target))
    return out


def run(quick: bool) -> list[Result]:
    """Every figure as a harness :class:`Result`; grep and glob are judged against targets."""
    return [
        result(SUITE, name, sample, max_median_s=target) if target else result(SUITE, name, sample)
        for name, sample, target in figures(quick)
    ]


def main() -> None:
    """Print the raw medians (standalone use)."""
    quick = "--quick" in sys.argv
    for name, sample, target in figures(quick):
        median = sample.median_s
        text = f"{median * 1e6:10.1f} µs" if median < 1e-3 else f"{median * 1e3:10.2f} ms"
        mark = "" if target is None else ("  ok" if median <= target else "  MISSED")
        print(f"{name:60s} {text}{mark}")


if __name__ == "__main__":
    main()
