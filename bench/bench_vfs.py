"""VFS benchmark: the file tools through the executor, with the direct filesystem as floor.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``. Standalone
(``python bench/bench_vfs.py [--quick]``) it prints the raw figures. Every file is 4 KiB of
code-like text. Two families of figures, measured in the same run:

* direct calls on ``InMemoryFilesystem`` (the floor: what the engine costs), and
* the same operations as tool calls through a ``ToolExecutor`` over a prompt composed from
  the installed ``vfs`` pack (parse, policies, transaction snapshot, handler, render,
  ``ToolInvoked`` event): what a model's call costs.

Targets: read/write/edit under 40 µs per call through the executor, flat over a run and
within 1.3x at 10,000 files of the figure at 1,000; grep and glob over 1,000 files in under
14 ms / 10.5 ms (half the reference library's 28 ms / 21 ms).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import statistics
import time

from _harness import Result, Sample, measure, result

from haversack import Filesystem, Session, ToolExecutor
from haversack._packs import compose
from haversack_vfs import InMemoryFilesystem

SUITE = "vfs"
FILE_BYTES = 4096
GREP_TARGET_S = 0.014  # half the reference library's 28 ms
GLOB_TARGET_S = 0.0105  # half the reference library's 21 ms
TOOL_OP_TARGET_S = 40e-6  # read/write/edit through the executor
SCALE_TARGET = 1.3  # per-call cost at 10,000 files vs 1,000
FLAT_TARGET = 1.2  # last quarter of a run vs its first quarter
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


def fill(fs: Filesystem, n_files: int) -> None:
    """Write ``n_files`` 4 KiB files spread over 50 packages."""
    rng = random.Random(n_files)
    for i in range(n_files):
        fs.write(f"src/pkg{i % 50}/mod{i}.py", make_content(rng, i))


def build(n_files: int) -> InMemoryFilesystem:
    """A filesystem with ``n_files`` 4 KiB files spread over 50 packages."""
    fs = InMemoryFilesystem()
    fill(fs, n_files)
    return fs


class ToolBench:
    """An executor over a prompt composed from the ``vfs`` pack, its workspace pre-filled."""

    def __init__(self, n_files: int) -> None:
        prompt = compose(ns="bench", key="vfs", packs=["vfs"], strict=True)
        self.executor = ToolExecutor(prompt.render(), session=Session())
        self.fs: Filesystem = self.executor.resources.get(Filesystem)  # type: ignore[type-abstract]
        fill(self.fs, n_files)
        self.n_files = n_files
        self.paths = [f"src/pkg{i % 50}/mod{i}.py" for i in range(n_files)]
        self.content = make_content(random.Random(1), 7)
        self.state = {"i": 0, "new": 0, "edit": 0}
        self.call("read_file", {"path": self.paths[0]})  # read-before-write for the edits

    def call(self, name: str, arguments: dict[str, object]) -> object:
        result = self.executor.execute(name, arguments)
        if not result.success:
            raise RuntimeError(f"{name} failed in the benchmark: {result.message}")
        return result

    def next_path(self) -> str:
        self.state["i"] = (self.state["i"] + 7919) % self.n_files
        return self.paths[self.state["i"]]

    def read(self) -> object:
        return self.call("read_file", {"path": self.next_path()})

    def write(self) -> object:
        self.state["new"] += 1
        return self.call(
            "write_file", {"path": f"new/f{self.state['new']}.py", "content": self.content}
        )

    def edit(self) -> object:
        self.state["edit"] ^= 1
        old, new = ("EDIT-ME-A", "EDIT-ME-B") if self.state["edit"] else ("EDIT-ME-B", "EDIT-ME-A")
        return self.call("edit_file", {"path": self.paths[0], "old_string": old, "new_string": new})

    def close(self) -> None:
        self.executor.close()


def _flatness(fn: Callable[[], object], calls: int) -> float:
    """Median of the last quarter of ``calls`` consecutive calls over that of the first."""
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    quarter = calls // 4
    return statistics.median(times[-quarter:]) / statistics.median(times[:quarter])


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


def _scan_results(repeats: int) -> list[Result]:
    """grep and glob as tool calls over exactly 1,000 files, the direct call as floor."""
    direct = build(1_000)
    bench = ToolBench(1_000)
    out: list[Result] = []
    scans: list[tuple[str, str, dict[str, object], Callable[[], object], float]] = [
        (
            "grep 'TODO' (50 hits)",
            "grep",
            {"pattern": "TODO"},
            partial(direct.grep, "TODO"),
            GREP_TARGET_S,
        ),
        (
            "grep 'TODO' with glob '**/*.py'",
            "grep",
            {"pattern": "TODO", "glob": "**/*.py"},
            partial(direct.grep, "TODO", glob="**/*.py"),
            GREP_TARGET_S,
        ),
        (
            "glob '**/*.py'",
            "glob",
            {"pattern": "**/*.py"},
            partial(direct.glob, "**/*.py"),
            GLOB_TARGET_S,
        ),
    ]
    for label, tool, arguments, floor_fn, target in scans:
        floor = measure(floor_fn, repeats=repeats)
        sample = measure(partial(bench.call, tool, arguments), repeats=repeats)
        out.append(
            result(
                SUITE,
                f"tool {label}, 1,000 files",
                sample,
                floor=(f"direct {label}, 1,000 files", floor),
                max_median_s=target,
            )
        )
    bench.close()
    return out


def tool_results(quick: bool) -> list[Result]:
    """Read, write and edit through the executor at 1,000 and 10,000 files; grep and glob."""
    repeats = 300 if quick else 2000
    scan_repeats = 5 if quick else 30
    out: list[Result] = []
    per_op: dict[tuple[str, int], Sample] = {}
    for n_files in (1_000, 10_000):
        direct = build(n_files)
        floors = _cycle(direct, n_files)
        bench = ToolBench(n_files)
        ops = (
            ("read_file (4 KiB)", bench.read, "read (4 KiB)"),
            ("write_file (create 4 KiB)", bench.write, "write (create 4 KiB)"),
            ("edit_file (unique match, 4 KiB)", bench.edit, "edit (unique match, 4 KiB)"),
        )
        for name, fn, floor_name in ops:
            floor = measure(floors[floor_name], repeats=repeats)
            sample = measure(fn, repeats=repeats)
            per_op[(name, n_files)] = sample
            out.append(
                result(
                    SUITE,
                    f"tool {name}, {n_files:,} files",
                    sample,
                    floor=(f"direct {floor_name}, {n_files:,} files", floor),
                    max_median_s=TOOL_OP_TARGET_S,
                    notes="through ToolExecutor; floor = direct InMemoryFilesystem call",
                )
            )
        if n_files == 1_000:
            out.extend(_scan_results(scan_repeats))
            flat = _flatness(bench.read, repeats)
            out.append(
                Result(
                    suite=SUITE,
                    name=f"tool read_file, last/first quarter of {repeats} calls",
                    value=round(flat, 3),
                    unit="x",
                    target=f"≤ {FLAT_TARGET}x",
                    passed=flat <= FLAT_TARGET,
                    notes="flat over a run: the session's event log grows by one per call",
                )
            )
        bench.close()
    for name, _, _ in ops:
        ratio = per_op[(name, 10_000)].median_s / per_op[(name, 1_000)].median_s
        out.append(
            Result(
                suite=SUITE,
                name=f"tool {name}: 10,000 files vs 1,000",
                value=round(ratio, 3),
                unit="x",
                target=f"≤ {SCALE_TARGET}x",
                passed=ratio <= SCALE_TARGET,
            )
        )
    return out


def run(quick: bool) -> list[Result]:
    """Every figure as a harness :class:`Result`: direct engine figures, then tool calls."""
    direct = [
        result(SUITE, name, sample, max_median_s=target) if target else result(SUITE, name, sample)
        for name, sample, target in figures(quick)
    ]
    return direct + tool_results(quick)


def main() -> None:
    """Print the figures (standalone use)."""
    for item in run("--quick" in sys.argv):
        mark = "" if item.passed is None else ("  ok" if item.passed else "  MISSED")
        print(f"{item.name:70s} {item.display:>12s}{mark}")


if __name__ == "__main__":
    main()
