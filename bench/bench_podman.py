"""Podman sandbox benchmark: exec latency (Sandbox vs podman-py vs CLI), container start,
private service start, and workspace snapshot strategies on 1,000 files.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``. Without the harness
the module runs standalone (``python bench/bench_podman.py [--quick]``) and prints raw
figures. Needs a working Podman and the images from ``python -m haversack_podman
build-images``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from haversack_podman import BUSYBOX_IMAGE, Sandbox, SandboxConfig, get_service, podman_env
from haversack_podman._snapshot import WorkspaceSnapshotter
from haversack_podman._snapshot_copytree import CopyTreeSnapshotter

N_FILES = 1000


Times = list[float]  # seconds per run


def _times(fn: Callable[[], object], repeats: int, warmup: int = 1) -> Times:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


# ---------------------------------------------------------------------- containers
def exec_figures(quick: bool) -> dict[str, Times]:
    """Median ms: Sandbox.exec(true), podman-py exec_run(true), CLI podman exec true,
    container create+start, and close (container and workspace removal)."""
    repeats = 10 if quick else 40
    service = get_service(None)
    data: dict[str, Times] = {"podman_service_ready": [service.startup_s]}
    config = SandboxConfig(image=BUSYBOX_IMAGE)
    with Sandbox(config) as sandbox:
        sandbox.start()
        data["sandbox_exec_true"] = _times(lambda: sandbox.exec(["true"]), repeats)
        data["sandbox_exec_cat_1KiB_stdin"] = _times(
            lambda: sandbox.exec(["cat"], stdin="x" * 1024), repeats
        )
        container = service.client.containers.get(sandbox.container_id)
        data["podman_py_exec_run_true"] = _times(
            lambda: container.exec_run(["true"], demux=True, user="1000:1000"), repeats
        )
        env = podman_env()
        cli = [shutil.which("podman") or "podman", "exec", sandbox.name, "true"]
        data["cli_podman_exec_true"] = _times(
            lambda: subprocess.run(cli, env=env, check=True, capture_output=True), repeats
        )
        data["sandbox_exec_timeout_1s"] = _times(
            lambda: sandbox.exec("sleep 30 & sleep 30", timeout_s=1), 3 if quick else 5, 0
        )

    starts: list[float] = []
    closes: list[float] = []
    for _ in range(3 if quick else 10):
        sandbox = Sandbox(config)
        t0 = time.perf_counter()
        sandbox.start()
        starts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sandbox.close()
        closes.append(time.perf_counter() - t0)
    data["container_create_start"] = starts
    data["sandbox_close"] = closes
    return data


# ---------------------------------------------------------------------- snapshots
def _populate(root: Path) -> None:
    for d in range(20):
        sub = root / f"dir{d:02d}"
        sub.mkdir()
        for f in range(N_FILES // 20):
            (sub / f"file{f:03d}.txt").write_bytes(os.urandom(512).hex().encode())


def _mutate(root: Path, round_: int) -> None:
    """What a failing shell command might do: edit, append, delete, create, chmod."""
    for d in range(10):
        with (root / f"dir{d:02d}" / "file000.txt").open("a") as fh:
            fh.write(f"round {round_}\n")
    for d in range(5):
        (root / f"dir{d:02d}" / "file001.txt").unlink(missing_ok=True)
        (root / f"dir{d:02d}" / f"new{round_}.txt").write_text("new")
    (root / f"newdir{round_}").mkdir()
    (root / "dir10" / "file002.txt").chmod(0o600)


class _GitSnapshotter:
    """git with GIT_DIR outside the workspace (not exact: only the exec bit of modes, no
    empty directories, no owners) - measured for comparison."""

    def __init__(self, root: Path, store: Path) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "GIT_DIR": str(store / "git"),
            "GIT_WORK_TREE": str(root),
            "GIT_AUTHOR_NAME": "s",
            "GIT_AUTHOR_EMAIL": "s@x",
            "GIT_COMMITTER_NAME": "s",
            "GIT_COMMITTER_EMAIL": "s@x",
        }
        self._git("init", "-q")

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], env=self.env, check=True, capture_output=True, text=True
        ).stdout.strip()

    def snapshot(self) -> str:
        self._git("add", "-A")
        return self._git("write-tree")

    def restore(self, tree: str) -> None:
        self._git("read-tree", tree)
        self._git("checkout-index", "-a", "-f")
        self._git("clean", "-fdxq")


def _fingerprint(root: Path) -> list[tuple[str, int, bytes]]:
    out = []
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out.append(
            (str(path.relative_to(root)), st.st_mode, path.read_bytes() if path.is_file() else b"")
        )
    return out


def snapshot_figures(quick: bool) -> dict[str, Any]:
    """Median ms per strategy: first snapshot, next snapshot after a small change, restore
    after a small change; plus whether the restore was exact (1.0) or not (0.0)."""
    repeats = 3 if quick else 10
    data: dict[str, Any] = {}
    strategies: dict[str, Callable[[Path, Path], Any]] = {
        "manifest": lambda root, store: WorkspaceSnapshotter(root, storage_parent=store),
        "copytree": lambda root, store: CopyTreeSnapshotter(root, storage_parent=store),
    }
    if shutil.which("git"):
        strategies["git"] = _GitSnapshotter
    for name, make in strategies.items():
        with tempfile.TemporaryDirectory() as tmp:
            root, store = Path(tmp) / "ws", Path(tmp) / "store"
            root.mkdir()
            store.mkdir()
            _populate(root)
            # Files written within _RACY_NS (20 ms) of a snapshot are always recopied; a real
            # workspace is not rewritten in the instant before a tool call.
            time.sleep(0.05)
            snapper = make(root, store)
            t0 = time.perf_counter()
            base = snapper.snapshot()
            data[f"snapshot_{name}_first"] = [time.perf_counter() - t0]
            expected = _fingerprint(root)
            nexts, restores, exact = [], [], True
            for i in range(repeats):
                _mutate(root, i)
                t0 = time.perf_counter()
                snapper.snapshot()
                nexts.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                snapper.restore(base)
                restores.append(time.perf_counter() - t0)
                exact = exact and _fingerprint(root) == expected
            data[f"snapshot_{name}_next"] = nexts
            data[f"snapshot_{name}_restore"] = restores
            data[f"snapshot_{name}_exact"] = exact
            if hasattr(snapper, "close"):
                snapper.close()
    return data


def figures(quick: bool) -> dict[str, Any]:
    """Every figure of the suite: run times in seconds, or a bool for exactness checks."""
    return {**exec_figures(quick), **snapshot_figures(quick)}


SUITE = "podman"
_FLOORS = {
    "sandbox_exec_true": ("podman_py_exec_run_true", 1.5),
    "snapshot_manifest_next": ("snapshot_copytree_next", 1.0),
    "snapshot_manifest_restore": ("snapshot_copytree_restore", 1.0),
}


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure."""
    from _harness import Result, Sample, result  # type: ignore[import-not-found]

    data = figures(quick)
    out = []
    for name, value in data.items():
        if isinstance(value, bool):
            out.append(
                Result(
                    suite=SUITE,
                    name=name,
                    value=value,
                    target="exact",
                    passed=value if "manifest" in name else None,
                )
            )
            continue
        floor = _FLOORS.get(name)
        if floor is None:
            out.append(result(SUITE, name, Sample(tuple(value))))
        else:
            out.append(
                result(
                    SUITE,
                    name,
                    Sample(tuple(value)),
                    floor=(floor[0], Sample(tuple(data[floor[0]]))),
                    max_ratio=floor[1],
                )
            )
    return out


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    median_ms = statistics.median(value) * 1000
    return f"{median_ms:9.1f} ms  (min {min(value) * 1000:.1f}, n={len(value)})"


def main() -> None:
    quick = "--quick" in sys.argv
    only_snap = "--snapshots" in sys.argv
    data = snapshot_figures(quick) if only_snap else figures(quick)
    for name, value in data.items():
        print(f"{name:36s} {_show(value)}")


if __name__ == "__main__":
    main()
