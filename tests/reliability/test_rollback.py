"""Exact rollback under attack: the workspace snapshotter alone and the real Podman sandbox.

Families (area ``rollback``): planted temporary names (symlink to a host canary, regular file,
hard link, FIFO, directory) at every name restore might use; special files surviving failed
calls; trees 1,100+ levels deep; sparse files (storage and host disk in allocated blocks);
byte and depth budgets; random failed commands compared with a full manifest before and after
(inexact rollbacks must be 0); and the garbage collector running inside ``restore``.
"""

from __future__ import annotations

import gc
import os
import random
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from haversack import Filesystem
from haversack.filesystem import DirectorySnapshotter, remove_tree
from haversack_podman import Sandbox

from ._canary import Canary
from ._harness import Harness, budget
from .test_sandbox import _harness


def _state(root: Path) -> dict[str, tuple[Any, ...]]:
    """A full manifest: kind, mode, owner, mtime, content or target, per path."""
    out: dict[str, tuple[Any, ...]] = {}
    stack = [root]
    while stack:
        directory = stack.pop()
        for entry in os.scandir(directory):
            st = entry.stat(follow_symlinks=False)
            rel = os.path.relpath(entry.path, root)
            data: Any = None
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode):
                data = (st.st_size, st.st_blocks > 0 and Path(entry.path).read_bytes()[:4096])
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(entry.path)
            out[rel] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, data)
    return out


# ---------------------------------------------------------------------- without Podman


def test_gc_inside_restore_never_deadlocks(figure, tmp_path: Path, monkeypatch) -> None:
    fig = figure("rollback", "garbage collection inside restore (snapshotter)")
    root, store = tmp_path / "ws", tmp_path / "store"
    root.mkdir()
    store.mkdir()
    (root / "a").write_text("a")
    s = DirectorySnapshotter(root, storage_parent=store)
    real_scandir = os.scandir
    rounds = budget(20, 300)

    def collecting(*args: Any) -> Any:
        gc.collect()
        return real_scandir(*args)

    def work() -> None:
        keep = s.snapshot()
        for i in range(rounds):
            (root / f"n{i}").write_text("x")
            cycle: list[Any] = [s.snapshot()]
            cycle.append(cycle)
            del cycle
            monkeypatch.setattr(os, "scandir", collecting)
            s.restore(keep)
            monkeypatch.setattr(os, "scandir", real_scandir)
            fig.case()
            fig.check(not (root / f"n{i}").exists(), f"round {i}: not rolled back")

    gc.disable()
    try:
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(300)  # a guard against hanging the suite, not a timing assertion
        fig.check(not thread.is_alive(), "restore deadlocked on a snapshot finalizer")
    finally:
        gc.enable()
        monkeypatch.undo()
    s.close()
    fig.assert_clean()


def test_random_operations_roll_back_exactly(figure) -> None:
    fig = figure("rollback", "random changes rolled back (snapshotter, tracked)")
    rng = random.Random(1234)
    names = ["a", "b", "c", "a/x", "b/y", "c/z"]
    with tempfile.TemporaryDirectory() as tmp:
        root, store = Path(tmp, "ws"), Path(tmp, "store")
        root.mkdir()
        store.mkdir()
        s = DirectorySnapshotter(root, storage_parent=store)
        try:
            for n in range(budget(60, 1500)):
                snap, before = s.snapshot(), _state(root)
                for _ in range(rng.randint(1, 6)):
                    _random_op(root, rng, names)
                if rng.random() < 0.5:
                    s.check_quota()
                s.restore(snap)
                fig.case()
                fig.check(_state(root) == before, f"round {n}: inexact rollback")
                if rng.random() < 0.5:  # a successful call: keep the changes
                    for _ in range(rng.randint(1, 4)):
                        _random_op(root, rng, names)
        finally:
            s.close()
    fig.note("inexact rollbacks", len(fig.problems))
    fig.assert_clean()


def _random_op(root: Path, rng: random.Random, names: list[str]) -> None:
    a, b = root / rng.choice(names), root / rng.choice(names)
    op = rng.choice(
        ["write", "append", "rm", "mkdir", "rmtree", "mv", "chmod", "link", "sym", "fifo", "sock"]
    )
    try:
        if op == "write":
            _write(a, os.urandom(rng.randint(0, 300)), os.O_TRUNC)
        elif op == "append":
            _write(a, b"+", os.O_APPEND)
        elif op == "rm":
            a.unlink()
        elif op == "mkdir":
            a.mkdir()
        elif op == "rmtree":
            remove_tree(a)
        elif op == "mv":
            os.rename(a, b)
        elif op == "chmod":
            a.chmod(rng.choice([0o600, 0o755, 0o700]))
        elif op == "link":
            os.link(a, b)
        elif op == "sym":
            b.symlink_to(a.name)
        elif op == "fifo":
            os.mkfifo(a)
        else:
            import socket

            sock = socket.socket(socket.AF_UNIX)
            try:
                sock.bind(str(a))
            finally:
                sock.close()
    except OSError:
        pass


# ---------------------------------------------------------------------- real Podman

PLANT = {
    "symlink to a host canary": "ln -s {canary} {name}",
    "regular file": "echo planted > {name}",
    "hard link": "ln keep.txt {name}",
    "fifo": "mkfifo {name}",
    "directory": "mkdir {name}",
}
NAMES = (
    ".a.txt.haversack-tmp",
    ".haversack-0000000000000000.tmp",
    ".haversack-ffffffffffffffff.tmp",
    ".a.txt.tmp",
)


def _shell(h: Harness, command: str) -> Any:
    return h.executor.execute("shell_execute", {"command": command})


def _workspace(h: Harness) -> Path:
    return Path(h.executor.resources.get(Sandbox).workspace)


@pytest.mark.podman
def test_sandbox_rollback_attacks(podman_service: Any, tmp_path: Path, figure) -> None:
    fig = figure("rollback", "sandbox workspace: planted names, special files, depth, sparse")
    canary = Canary.plant(tmp_path / "outside")
    h = _harness(tmp_path)
    try:
        root = _workspace(h)
        fig.check(_shell(h, "echo a > a.txt && echo keep > keep.txt").success, "setup failed")
        # Planted names: every kind at every name restore might use.
        for label, template in PLANT.items():
            for name in NAMES:
                fig.case()
                planted = _shell(h, template.format(canary=canary.path, name=name))
                if not fig.check(planted.success, f"could not plant {label} {name}"):
                    continue
                before = _state(root)
                failed = _shell(h, "echo evil > a.txt; rm -f keep.txt; exit 1")
                fig.check(not failed.success, "the failing command succeeded")
                fig.check(_state(root) == before, f"{label} at {name}: inexact rollback")
                _shell(h, f"rm -rf {name}")
        # Special files made by successful commands survive failed ones.
        fig.check(
            _shell(
                h,
                "mkfifo p && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('s')\"",
            ).success,
            "could not make the special files",
        )
        for n in range(budget(3, 20)):
            fig.case()
            before = _state(root)
            _shell(h, f"rm -f p s; echo {n} > a.txt; exit 1")
            fig.check(_state(root) == before, f"round {n}: special files not restored")
            fig.check(stat.S_ISFIFO((root / "p").lstat().st_mode), "the FIFO is gone")
            fig.check(stat.S_ISSOCK((root / "s").lstat().st_mode), "the socket is gone")
        # A tree 1,100 levels deep: made, rolled back, deleted by the model.
        deep = "$(python3 -c \"print('/'.join(['d'] * 1100))\")"
        fig.case()
        fig.check(_shell(h, f"mkdir -p {deep} && touch {deep}/f").success, "deep tree refused")
        before = _state(root)
        _shell(h, "rm -rf d; exit 1")
        fig.check(_state(root) == before, "deep tree: inexact rollback")
        fig.case()
        fig.check(_shell(h, "rm -rf d").success, "the model could not delete the deep tree")
        fig.check(not (root / "d").exists(), "the deep tree is still there")
        # Sparse files: 3 GiB apparent, a few KiB stored.
        fig.case()
        fig.check(_shell(h, "truncate -s 3G sparse.img && echo x >> sparse.img").success, "")
        _shell(h, "true")
        fs = h.executor.resources.get(Filesystem)  # type: ignore[type-abstract]
        snapper = getattr(fs, "_snapshotter", None)
        if fig.check(isinstance(snapper, DirectorySnapshotter), f"no snapshotter on {fs!r}"):
            assert isinstance(snapper, DirectorySnapshotter)
            stored = sum(p.stat().st_blocks * 512 for p in snapper.storage.iterdir())
            fig.note("snapshot storage for a 3 GiB sparse file (bytes)", stored)
            fig.check(stored < 1024 * 1024, f"sparse file stored as {stored} bytes")
            _shell(h, "truncate -s 0 sparse.img; exit 1")
            st = (root / "sparse.img").stat()
            fig.check(st.st_size == 3 * 1024**3 + 2, "sparse file not restored")
            fig.check(st.st_blocks * 512 < 1024 * 1024, "sparse file restored dense")
            # Budgets: a command that leaves the workspace over one fails and is undone.
            snapper.max_bytes = 8 * 1024 * 1024
            for command in (
                "head -c 20000000 /dev/urandom > big",
                "dd if=/dev/zero of=z bs=1M count=30",
            ):
                fig.case()
                before = _state(root)
                result = _shell(h, command)
                fig.check(not result.success, f"{command!r}: over budget but succeeded")
                fig.check("over its budget" in result.render(), f"{command!r}: no budget message")
                fig.check(_state(root) == before, f"{command!r}: not rolled back")
            snapper.max_depth = 64
            fig.case()
            result = _shell(h, "mkdir -p $(python3 -c \"print('/'.join(['q'] * 100))\")")
            fig.check(not result.success and not (root / "q").exists(), "depth budget not held")
    finally:
        h.close()
        remove_tree(tmp_path / "workspaces")
    fig.problems.extend(canary.intact())
    fig.assert_clean()


def _write(path: Path, data: bytes, mode: int) -> None:
    # Never blocks: a FIFO without a reader fails (ENXIO) instead of waiting, a link (ELOOP).
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | mode, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
