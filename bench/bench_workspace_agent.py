"""The workspace agent (a volume's file operations in a second container, over one exec) vs the
host's ``DirectoryFilesystem`` on a directory: one RPC, and the per-call snapshot at 0 and
10,000 files.

The agent runs the same core code, so the difference is the channel (framed JSON over the
engine's hijacked exec) plus the agent container's view of the volume. Both workspaces are
timed round-robin in the same run. Needs a working Podman and the python image.

Where the snapshot's extra time goes (cProfile in the agent, 2026-11-28, load average 17):
nearly all of it is the two ``open(O_CREAT)`` calls that store the edited file's content,
about 1 ms each on the snapshot volume inside the container against about 0.17 ms on the
host's own ext4 (the same disk); the RPC itself is about 0.3 ms.
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

SUITE = "workspace_agent"
Times = list[float]
_DIRS = 100  # directories of 100 files, as bench_workspace_scale


def _fill(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"d{i % _DIRS:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:05d}.txt").write_text(f"file {i}\n")


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, Times]:
    for fn in fns.values():
        fn()
    out: dict[str, Times] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def _edit_then_snapshot(fs: Any) -> Callable[[], object]:
    counter = iter(range(1 << 30))

    def call() -> object:
        fs.write("edited.txt", f"edit {next(counter)}\n", mode="overwrite")
        start = time.perf_counter()
        snap = fs.snapshot()
        elapsed = time.perf_counter() - start
        fs.discard(snap)
        return elapsed

    return call


def _timed(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, Times]:
    """Like ``_interleaved``, for callables that return their own measured seconds."""
    for fn in fns.values():
        fn()
    out: dict[str, Times] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            out[name].append(float(fn()))  # type: ignore[arg-type]
    return out


def figures(quick: bool) -> dict[str, Times]:
    """Seconds per run of each workload."""
    from haversack.filesystem import DirectoryFilesystem
    from haversack_podman import AgentFilesystem, get_service
    from haversack_podman._agent import create_volume

    repeats = 10 if quick else 50
    service = get_service(None)
    data: dict[str, Times] = {}
    for files in (0, 10_000):
        volume = create_volume(
            service, f"haversack-bench-{uuid.uuid4().hex[:12]}", uid=1000, gid=1000
        )
        try:
            with (
                tempfile.TemporaryDirectory() as tmp,
                AgentFilesystem(service, volume, uid=1000, gid=1000) as agent,
            ):
                root = Path(tmp) / "ws"
                root.mkdir()
                _fill(root, files)
                if files:
                    agent.seed({str(root): ""})
                host = DirectoryFilesystem(root, storage_parent=Path(tmp))
                try:
                    if files == 0:
                        data.update(
                            _interleaved(
                                {
                                    "rpc_exists_agent": functools.partial(agent.exists, "x"),
                                    "rpc_exists_host": functools.partial(host.exists, "x"),
                                },
                                repeats * 10,
                            )
                        )
                    data.update(
                        _timed(
                            {
                                f"snapshot_after_edit_{files}_files_agent": _edit_then_snapshot(
                                    agent
                                ),
                                f"snapshot_after_edit_{files}_files_host": _edit_then_snapshot(
                                    host
                                ),
                            },
                            repeats,
                        )
                    )
                finally:
                    host.close()
        finally:
            service.client.api.delete(f"/volumes/{volume}", params={"force": True})
    return data


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure, the agent's against the host's."""
    from _harness import Sample, result

    data = figures(quick)
    out = []
    for name, times in data.items():
        sample = Sample(tuple(times))
        if name.endswith("_host"):
            out.append(result(SUITE, name, sample, notes="floor: the host's own directory"))
            continue
        floor = name.replace("_agent", "_host")
        out.append(
            result(
                SUITE,
                name,
                sample,
                floor=(floor, Sample(tuple(data[floor]))),
                # An RPC must stay far below a fresh engine exec (about 100-260 ms).
                max_median_s=0.005 if name.startswith("rpc_") else 0.050,
            )
        )
    return out


if __name__ == "__main__":
    for key, times in figures("--quick" in sys.argv).items():
        print(f"{key}: median {statistics.median(times) * 1000:.3f} ms over {len(times)}")
