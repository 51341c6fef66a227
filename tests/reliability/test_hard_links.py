"""Hard links of every non-directory kind roll back exactly (area ``rollback``).

A workspace holds regular files, FIFOs, sockets, character devices and symbolic links (some
pointing at a canary outside the workspace), each with several hard links spread over
directories. Hypothesis drives random batches of changes through those names (new links
from other directories, unlinks, renames over them, mode changes shared by the inode,
replacements by another kind), then restores the snapshot taken before the batch. Restore
must bring back every name with its kind, mode, owner, target, content and link group
(which names share an inode, and each inode's link count), must agree with a full walk
(the tracked manifest may keep no stale key), and must never follow a link: the canary
outside keeps its content, mode, times and link count.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack.filesystem import DirectorySnapshotter

from ._canary import Canary
from ._harness import budget

DIRS = ("a", "b", "c/d")
KINDS = ("file", "fifo", "sock", "chr", "sym-in", "sym-out")
NAMES = tuple(f"{d}/{n}" for d in DIRS for n in ("x", "y", "z"))


def _make(path: Path, kind: str, canary: Path) -> None:
    if kind == "file":
        path.write_text(f"content of {path.name}\n")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sock":
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.bind(str(path))
        finally:
            sock.close()
    elif kind == "chr":
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
    elif kind == "sym-in":
        path.symlink_to("../a/x")
    else:
        path.symlink_to(canary)


def state(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every name's kind, mode, owner, link count, content or target, and its link group
    (the smallest name sharing its inode); directories by mode and owner."""
    out: dict[str, tuple[Any, ...]] = {}
    groups: dict[int, str] = {}
    stack = [root]
    while stack:
        directory = stack.pop()
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            st = entry.stat(follow_symlinks=False)
            rel = os.path.relpath(entry.path, root)
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
                out[rel] = ("dir", st.st_mode, st.st_uid, st.st_gid)
                continue
            groups[st.st_ino] = min(groups.get(st.st_ino, rel), rel)
            data: Any = None
            if stat.S_ISREG(st.st_mode):
                data = Path(entry.path).read_bytes()
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(entry.path)
            elif stat.S_ISCHR(st.st_mode):
                data = st.st_rdev
            out[rel] = (st.st_mode, st.st_uid, st.st_gid, st.st_nlink, data, st.st_ino)
    return {rel: v if v[0] == "dir" else (*v[:-1], groups[v[-1]]) for rel, v in out.items()}


def _manifest(snap: Any) -> dict[str, tuple[Any, ...]]:
    return {
        rel: (e.kind, e.mode, e.uid, e.gid, e.key, e.nlink, e.target)
        for rel, e in snap._flat().items()  # the snapshot's own record of each name
    }


_op = st.tuples(
    st.sampled_from(("link", "unlink", "rename", "chmod", "replace", "mkdir-over")),
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.sampled_from(KINDS),
)


def _apply(root: Path, canary: Path, op: tuple[str, str, str, str]) -> None:
    kind, a, b, new = op
    src, dst = root / a, root / b
    try:
        if kind == "link":
            os.link(src, dst, follow_symlinks=False)
        elif kind == "unlink":
            src.unlink()
        elif kind == "rename":
            os.rename(src, dst)
        elif kind == "chmod":
            if not src.is_symlink():
                src.chmod(0o640 if src.stat().st_mode & 0o7 else 0o607)
        elif kind == "replace":
            src.unlink(missing_ok=True)
            _make(src, new, canary)
        else:
            src.unlink()
            src.mkdir()
    except OSError:
        pass  # a missing source, an existing target: the change did not happen


def test_hard_links_of_every_kind_roll_back_exactly(figure) -> None:
    fig = figure("rollback", "hard links of every non-directory kind (snapshotter)")
    with tempfile.TemporaryDirectory() as tmp:
        canary = Canary.plant(Path(tmp, "outside"))
        outside_links = canary.path.stat().st_nlink

        @settings(
            max_examples=budget(30, 600),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            layout=st.lists(st.sampled_from(KINDS), min_size=3, max_size=3),
            spread=st.lists(st.sampled_from(NAMES), min_size=0, max_size=6),
            batches=st.lists(
                st.tuples(st.lists(_op, min_size=1, max_size=8), st.booleans()),
                min_size=1,
                max_size=4,
            ),
            tracked=st.booleans(),
        )
        def case(layout, spread, batches, tracked) -> None:
            work = Path(tempfile.mkdtemp(dir=tmp))
            root, store = work / "ws", work / "store"
            store.mkdir()
            for d in DIRS:
                (root / d).mkdir(parents=True)
            for name, kind in zip(("a/x", "b/x", "c/d/x"), layout, strict=True):
                _make(root / name, kind, canary.path)
            for i, name in enumerate(spread):  # hard links of the three across directories
                source = root / ("a/x", "b/x", "c/d/x")[i % 3]
                with contextlib.suppress(OSError):
                    os.link(source, root / name, follow_symlinks=False)
            snapper = DirectorySnapshotter(root, storage_parent=store, track_changes=tracked)
            full = DirectorySnapshotter(root, storage_parent=store, track_changes=False)
            try:
                for batch, keep in batches:
                    fig.case()
                    snap, before = snapper.snapshot(), state(root)
                    for op in batch:
                        _apply(root, canary.path, op)
                    snapper.restore(snap)
                    after = state(root)
                    if not fig.check(after == before, f"{batch}: inexact: {_diff(before, after)}"):
                        return
                    if tracked:
                        fig.check(
                            _manifest(snapper.snapshot()) == _manifest(full.snapshot()),
                            f"{batch}: the tracked manifest disagrees with a full walk",
                        )
                    if keep:  # a call that succeeded: its changes stay
                        for op in batch:
                            _apply(root, canary.path, op)
            finally:
                snapper.close()
                full.close()
            fig.check(not canary.intact(), f"the canary changed: {canary.intact()}")
            fig.check(
                canary.path.stat().st_nlink == outside_links,
                "the canary outside got a hard link",
            )

        case()
    fig.note("inexact rollbacks", len(fig.problems))
    fig.assert_clean()


def _diff(before: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    keys = sorted(set(before) | set(after))
    return [(k, before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)][:4]
