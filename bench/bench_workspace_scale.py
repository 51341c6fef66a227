"""Workspace scale benchmark: does a sandbox call cost O(change) or O(workspace)?

Through a real ``ToolExecutor`` (vfs + podman packs, busybox image), with 0 / 1,000 / 10,000
/ 50,000 filler files in the workspace (100 files of 512 bytes per directory) besides three
directories the edits go to (``edit0``..``edit2``, 100 files each, present at every size so
every size makes the same change): ``shell_execute("true")``, a one-file write through the
shell, and a failed command's rollback (an append in each edit directory, a new file,
``exit 1``), interleaved with the raw REST exec (podman-py
``exec_run(["true"])``) on the same container in the same run. Targets: each call at 50,000
files within 1.3x of the same call at 0 files; ``shell_execute("true")`` within 1.15x of the
raw exec at 1,000 files.

The host-side share of each call (snapshot, quota check, rollback) is also measured without a
container, with change tracking and with a full walk each time, because on a shared machine
Podman's own latency varies more than the whole difference being measured. So is a failed
call in a shared workspace (the user's own directory, journaled): target 1.3x at 50,000 files.
And so is the sandbox on a user's own directory (``workspace=``: the container works on a
private copy, synced before and written back after every command): the first command (the
full copy) and then a no-op command and a one-file write, at 0 / 10,000 / 50,000 files,
and the host-side share of those commands without a container (sync and write-back of the
copy, tracked and walking both trees each time); target: each at 50,000 files within 1.3x of
0 files.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``; standalone: ``python
bench/bench_workspace_scale.py [--quick] [--host | --shared | --sandbox]`` prints the medians.
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES = (0, 1_000, 10_000, 50_000)
PER_DIR = 100
Times = list[float]


EDIT_DIRS = ("edit0", "edit1", "edit2")


def _populate(root: Path, files: int) -> None:
    """``files`` filler files plus the edit directories (the same at every size)."""
    payload = b"x" * 512
    dirs = [f"dir{d:04d}" for d in range(files // PER_DIR)] + list(EDIT_DIRS)
    for name in dirs:
        sub = root / name
        sub.mkdir()
        for f in range(PER_DIR):
            (sub / f"file{f:03d}.txt").write_bytes(payload)


def _executor(workspace_root: Path) -> Any:
    import haversack
    from haversack_podman import BUSYBOX_IMAGE

    prompt = haversack.compose(
        ns="bench",
        key="scale",
        packs=["vfs", "podman"],
        config={"podman": {"image": BUSYBOX_IMAGE, "workspace_root": str(workspace_root)}},
        strict=True,
    )
    return haversack.ToolExecutor(prompt.render(), session=haversack.Session())


def _call(executor: Any, command: str, *, success: bool = True) -> Callable[[], object]:
    def call() -> object:
        result = executor.execute("shell_execute", {"command": command})
        if result.success is not success:
            raise RuntimeError(f"shell_execute({command!r}): {result.render()}")
        return result

    return call


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, Times]:
    for _ in range(2):
        for fn in fns.values():
            fn()
    out: dict[str, Times] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def figures(quick: bool) -> dict[str, Times]:
    """Seconds per call, per workload and workspace size."""
    from haversack_podman import Sandbox, get_service
    from haversack_podman._workspace import chown_tree

    repeats = 8 if quick else 30
    service = get_service(None)
    data: dict[str, Times] = {}
    for files in SIZES:
        with tempfile.TemporaryDirectory() as tmp, _executor(Path(tmp)) as executor:
            sandbox = executor.resources.get(Sandbox)
            _populate(sandbox.workspace, files)
            chown_tree(sandbox.workspace, sandbox.config.uid, sandbox.config.gid)
            time.sleep(0.05)  # past the racy window, as a real workspace would be
            _call(executor, "true")()  # starts the container, takes the first full snapshot
            container = service.client.containers.get(sandbox.container_id)
            edits = " ".join(f"echo y >> {d}/file000.txt;" for d in EDIT_DIRS)
            fns: dict[str, Callable[[], object]] = {
                f"shell_true_{files}": _call(executor, "true"),
                f"raw_exec_run_true_{files}": functools.partial(
                    container.exec_run, ["true"], demux=True, user="1000:1000"
                ),
                f"shell_write_one_file_{files}": _call(executor, "echo hello > out.txt"),
                f"shell_failed_rollback_{files}": _call(
                    executor, f"{edits} echo n > new.txt; exit 1", success=False
                ),
            }
            data.update(_interleaved(fns, repeats))
    return data


def overhead_figures(quick: bool) -> dict[str, Times]:
    """Seconds of the executor's host-side work per call (no container: what this module
    changes, free of Podman's noise): the snapshot before a call, the quota check after it,
    and a failed call's whole transaction (snapshot, three edits and a new file, quota check,
    restore), with change tracking and with a full walk each time."""
    from haversack.filesystem import DirectorySnapshotter

    repeats = 8 if quick else 30
    data: dict[str, Times] = {}
    for files in SIZES:
        for tracked in (True, False):
            tag = "tracked" if tracked else "fullwalk"
            with tempfile.TemporaryDirectory() as tmp:
                root, store = Path(tmp, "ws"), Path(tmp, "store")
                root.mkdir()
                store.mkdir()
                _populate(root, files)
                time.sleep(0.05)
                snapper = DirectorySnapshotter(root, storage_parent=store, track_changes=tracked)
                snapper.snapshot()
                edited = [root / d / "file000.txt" for d in EDIT_DIRS]
                failed_call = functools.partial(_failed_call, snapper, edited, root / "new.txt")

                fns: dict[str, Callable[[], object]] = {
                    f"host_snapshot_{tag}_{files}": snapper.snapshot,
                    f"host_check_quota_{tag}_{files}": snapper.check_quota,
                    f"host_failed_call_{tag}_{files}": failed_call,
                }
                data.update(_interleaved(fns, repeats))
                snapper.close()
    return data


def shared_figures(quick: bool) -> dict[str, Times]:
    """Seconds of a failed call's whole transaction in a *shared* workspace (the user's own
    directory: ``DirectoryFilesystem(shared=True)``, journaled, nothing walked): a mark, three
    appends and a new file through the file system, then the undo of exactly those."""
    from haversack.filesystem import DirectoryFilesystem

    repeats = 8 if quick else 30
    data: dict[str, Times] = {}
    for files in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp, "ws")
            root.mkdir()
            _populate(root, files)
            fs = DirectoryFilesystem(root, shared=True, storage_parent=Path(tmp))
            edited = [f"{d}/file000.txt" for d in EDIT_DIRS]

            def failed_call(fs: Any = fs, edited: list[str] = edited) -> None:
                mark = fs.snapshot()
                for path in edited:
                    fs.write(path, "y\n", mode="append")
                fs.write("new.txt", "n")
                fs.restore(mark)

            data.update(_interleaved({f"host_shared_failed_call_{files}": failed_call}, repeats))
            fs.close()
    return data


SANDBOX_SIZES = (0, 10_000, 50_000)


def sandbox_figures(quick: bool) -> dict[str, Times]:
    """Seconds per command of the sandbox on a user's own directory (its private copy kept in
    sync): the first command (which copies everything), then interleaved a no-op command,
    a one-file write, and the raw REST exec on the same container (Podman's own share)."""
    import haversack
    from haversack_podman import BUSYBOX_IMAGE, Sandbox, get_service

    repeats = 8 if quick else 30
    service = get_service(None)
    data: dict[str, Times] = {}
    for files in SANDBOX_SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp, "project")
            project.mkdir()
            _populate(project, files)
            prompt = haversack.compose(
                ns="bench",
                key="scale-own-dir",
                packs=["vfs", "podman"],
                config={"podman": {"image": BUSYBOX_IMAGE, "workspace": str(project)}},
                strict=True,
            )
            with haversack.ToolExecutor(prompt.render(), session=haversack.Session()) as executor:
                start = time.perf_counter()
                _call(executor, "true")()  # starts the container, copies the whole directory
                data[f"sandbox_first_command_{files}"] = [time.perf_counter() - start]
                sandbox = executor.resources.get(Sandbox)
                container = service.client.containers.get(sandbox.container_id)
                fns: dict[str, Callable[[], object]] = {
                    f"sandbox_shell_true_{files}": _call(executor, "true"),
                    f"sandbox_raw_exec_run_true_{files}": functools.partial(
                        container.exec_run, ["true"], demux=True, user=sandbox.config.user
                    ),
                    f"sandbox_write_one_file_{files}": _call(executor, "echo hello > out.txt"),
                }
                data.update(_interleaved(fns, repeats))
    return data


def mirror_figures(quick: bool) -> dict[str, Times]:
    """Seconds of the host-side share of a command on a user's own directory, without a
    container (free of Podman's latency): the private copy's sync before a command and its
    write-back after it, for a no-op command and for a one-file write, with change tracking
    (``ChangeTracker`` on both sides) and with a whole walk of both trees each time (what
    every command cost before the trackers)."""
    from haversack_podman._mirror import Mirror

    repeats = 8 if quick else 30
    data: dict[str, Times] = {}
    for files in SANDBOX_SIZES:
        for tracked in (True, False):
            tag = "tracked" if tracked else "fullwalk"
            with tempfile.TemporaryDirectory() as tmp:
                user, copy = Path(tmp, "user"), Path(tmp, "copy")
                user.mkdir()
                copy.mkdir()
                _populate(user, files)
                mirror = Mirror(user, copy, track_changes=tracked)
                start = time.perf_counter()
                mirror.sync()
                data[f"mirror_first_sync_{tag}_{files}"] = [time.perf_counter() - start]

                def noop(mirror: Any = mirror) -> None:
                    mirror.sync()
                    mirror.write_back(lambda rel: None)

                def one_file(mirror: Any = mirror, copy: Path = copy) -> None:
                    mirror.sync()
                    (copy / "out.txt").write_text(f"hello {time.perf_counter_ns()}\n")
                    mirror.write_back(lambda rel: None)

                data.update(
                    _interleaved(
                        {
                            f"mirror_noop_command_{tag}_{files}": noop,
                            f"mirror_write_one_file_{tag}_{files}": one_file,
                        },
                        repeats,
                    )
                )
                mirror.close()
    return data


def _failed_call(snapper: Any, edited: list[Path], new: Path) -> None:
    snap = snapper.snapshot()
    for path in edited:
        with path.open("a") as fh:
            fh.write("y\n")
    new.write_text("n")
    snapper.check_quota()
    snapper.restore(snap)


SUITE = "workspace_scale"


def _floors() -> dict[str, tuple[str, float]]:
    big, none = SIZES[-1], SIZES[0]
    out = {
        f"{kind}_{big}": (f"{kind}_{none}", 1.3)
        for kind in ("shell_true", "shell_write_one_file", "shell_failed_rollback")
    }
    # The host-side share, with change tracking: the same change costs the same at any size.
    for kind in ("snapshot", "check_quota", "failed_call"):
        out[f"host_{kind}_tracked_{big}"] = (f"host_{kind}_tracked_{none}", 1.3)
    out[f"host_shared_failed_call_{big}"] = (f"host_shared_failed_call_{none}", 1.3)
    own, empty = SANDBOX_SIZES[-1], SANDBOX_SIZES[0]
    for kind in ("shell_true", "write_one_file"):
        out[f"sandbox_{kind}_{own}"] = (f"sandbox_{kind}_{empty}", 1.3)
    for kind in ("noop_command", "write_one_file"):
        out[f"mirror_{kind}_tracked_{own}"] = (f"mirror_{kind}_tracked_{empty}", 1.3)
    out["shell_true_1000"] = ("raw_exec_run_true_1000", 1.15)
    return out


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure, targets as ratios to their floors."""
    from _harness import Sample, result

    data = {
        **overhead_figures(quick),
        **shared_figures(quick),
        **figures(quick),
        **mirror_figures(quick),
        **sandbox_figures(quick),
    }
    floors = _floors()
    out = []
    for name, value in data.items():
        floor = floors.get(name)
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


def main() -> None:
    quick = "--quick" in sys.argv
    if "--shared" in sys.argv:
        data = shared_figures(quick)
    elif "--sandbox" in sys.argv:
        data = {**mirror_figures(quick), **sandbox_figures(quick)}
    elif "--host" in sys.argv:
        data = overhead_figures(quick)
    else:
        data = figures(quick)
    for name, value in data.items():
        print(f"{name:34s} {statistics.median(value) * 1000:8.1f} ms  (n={len(value)})")


if __name__ == "__main__":
    main()
