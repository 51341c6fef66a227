"""DirectoryFilesystem benchmark: what link-safe resolution costs per file operation.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``. Standalone
(``python bench/bench_directory.py [--quick]``) it prints the raw figures.

One 4 KiB file three directories deep in a workspace of 1,000 files (on tmpfs, so the figures
show resolution and checks, not disk journalling); read, overwrite and a unique edit of it
through:

* ``DirectoryFilesystem`` resolving with ``openat2`` (``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``),
* ``DirectoryFilesystem`` with the portable per-component ``O_NOFOLLOW`` walk,
* the old realpath-then-open ``HostFilesystem`` of the Podman pack (racy; removed), loaded
  from git history (commit ``OLD_COMMIT``) so the comparison stays reproducible,
* ``os.open`` on the host path with the same reads, ``ftruncate`` and writes: the floor (no
  resolution, no checks at all).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Result, Sample, measure, result

from haversack.filesystem import DirectoryFilesystem

SUITE = "directory"
ROOT = Path(__file__).resolve().parent.parent
#: The last commit with the realpath-based ``HostFilesystem``.
OLD_COMMIT = "87fa06a"
OLD_PATH = "plugins/podman/src/haversack_podman/_hostfs.py"
TARGET = "src/pkg/mod/module.py"
LINE = "    value = compute(alpha, beta)  # a line of code-like text\n"


def _old_host_filesystem() -> type | None:
    """The removed ``HostFilesystem`` class, or ``None`` when git history is unavailable."""
    try:
        source = subprocess.run(
            ["git", "show", f"{OLD_COMMIT}:{OLD_PATH}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    source = source.replace(
        "from ._errors import WorkspaceEscapeError",
        "from haversack.errors import FilesystemError as WorkspaceEscapeError",
    ).replace(
        "from ._runtime_dir import snapshots_dir",
        "from haversack.filesystem import default_storage_parent as snapshots_dir",
    )
    module = types.ModuleType("old_hostfs")
    # Our own history, fetched from this repository: not outside input.
    exec(compile(source, "old_hostfs.py", "exec"), module.__dict__)
    cls: type = module.HostFilesystem
    return cls


def _workspace(root: Path) -> str:
    text = LINE * (4096 // len(LINE))
    for i in range(1000):
        folder = root / f"d{i % 20:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i:04d}.py").write_text(text)
    (root / TARGET).parent.mkdir(parents=True)
    (root / TARGET).write_text(text + "    marker = 1\n")
    return text


def _direct(root: Path) -> dict[str, Callable[[], object]]:
    """The same system calls as the filesystems make, minus resolution and checks: open by
    host path, truncate with ``ftruncate`` (not ``O_TRUNC``, whose ext4 flush-on-close
    heuristic would make the floor the slowest), write."""
    path = str(root / TARGET)

    def read() -> str:
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.read(fd, 1 << 20).decode("utf-8")
        finally:
            os.close(fd)

    def write(text: str) -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)

    original = read()
    return {
        "read": read,
        "overwrite": lambda: write(original),
        "edit": lambda: write(read().replace("marker = 1", "marker = 1")),
    }


def _through(fs: object) -> dict[str, Callable[[], object]]:
    text = fs.read_text(TARGET)  # type: ignore[attr-defined]
    return {
        "read": lambda: fs.read_text(TARGET),  # type: ignore[attr-defined]
        "overwrite": lambda: fs.write(TARGET, text, mode="overwrite"),  # type: ignore[attr-defined]
        "edit": lambda: fs.edit(TARGET, "marker = 1", "marker = 1"),  # type: ignore[attr-defined]
    }


def _interleaved(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, Sample]:
    """Time the implementations round-robin, so drift on a shared machine hits them alike."""
    for call in calls.values():
        measure(call, repeats=5)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in calls}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, call in calls.items():
                start = time.perf_counter_ns()
                call()
                times[name].append((time.perf_counter_ns() - start) / 1e9)
    finally:
        gc.enable()
    return {name: Sample(tuple(values)) for name, values in times.items()}


def figures(quick: bool) -> list[tuple[str, str, Sample]]:
    """``(operation, implementation, sample)`` for every pair."""
    repeats = 200 if quick else 2000
    out: list[tuple[str, str, Sample]] = []
    # On tmpfs when there is one: on a disk, truncating and rewriting allocated blocks costs
    # ~1 ms of journal work per write and buries the resolution cost this suite is about.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="bench-directory-", dir=shm) as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        _workspace(root)
        store = Path(tmp) / "store"
        store.mkdir()
        subjects: dict[str, dict[str, Callable[[], object]]] = {"os.open": _direct(root)}
        closers: list[Callable[[], None]] = []
        for label, use_openat2 in (("openat2", True), ("walk", False)):
            fs = DirectoryFilesystem(root, storage_parent=store, use_openat2=use_openat2)
            closers.append(fs.close)
            subjects[f"DirectoryFilesystem ({label})"] = _through(fs)
        old = _old_host_filesystem()
        if old is not None:
            host = old(root, snapshot_storage=store)
            closers.append(host.close)
            subjects["old HostFilesystem (realpath)"] = _through(host)
        try:
            for operation in ("read", "overwrite", "edit"):
                calls = {name: ops[operation] for name, ops in subjects.items()}
                for name, sample in _interleaved(calls, repeats).items():
                    out.append((operation, name, sample))
        finally:
            for close in closers:
                close()
    return out


def run(quick: bool) -> list[Result]:
    """Each implementation's median per operation, against ``os.open`` as the floor."""
    samples = figures(quick)
    floors = {op: sample for op, name, sample in samples if name == "os.open"}
    results: list[Result] = []
    for operation, name, sample in samples:
        label = f"{operation} a 4 KiB file 3 levels deep: {name}"
        if name == "os.open":
            results.append(
                result(SUITE, label, sample, notes="the floor: no resolution, no checks (tmpfs)")
            )
            continue
        results.append(result(SUITE, label, sample, floor=("os.open", floors[operation])))
    return results


def main() -> None:
    """Print the figures (standalone use)."""
    for item in run("--quick" in sys.argv):
        print(f"{item.name:75s} {item.display:>12s}  {item.notes}")


if __name__ == "__main__":
    main()
