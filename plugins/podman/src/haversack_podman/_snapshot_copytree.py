"""Baseline snapshot strategy kept for comparison: a full copy of the tree each time."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import weakref
from pathlib import Path

from haversack.errors import FilesystemError

from ._runtime_dir import snapshots_dir

__all__ = ["CopyTreeSnapshotter"]


def _copy_meta(src: str, dst: str) -> None:
    shutil.copystat(src, dst, follow_symlinks=False)
    if os.geteuid() == 0:
        st = os.lstat(src)
        os.lchown(dst, st.st_uid, st.st_gid)


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy the contents of ``src`` into the existing directory ``dst`` with modes and owners."""
    for child in sorted(os.scandir(src), key=lambda e: e.name):
        target = dst / child.name
        if child.is_symlink():
            os.symlink(os.readlink(child.path), target)
        elif child.is_dir():
            target.mkdir()
            _copy_tree(Path(child.path), target)
        else:
            shutil.copyfile(child.path, target)
        _copy_meta(child.path, str(target))
    _copy_meta(str(src), str(dst))


class CopyTreeSnapshotter:
    """Exact but O(total size) per snapshot: copies the whole workspace every time."""

    def __init__(self, root: Path, *, storage_parent: Path | None = None) -> None:
        self.root = Path(root)
        parent = storage_parent or snapshots_dir()
        self._store = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-copytree-", dir=parent))
        self._count = 0
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._store, True)

    def snapshot(self) -> Path:
        """Copy the workspace into a new snapshot directory and return it."""
        self._count += 1
        target = self._store / str(self._count)
        target.mkdir()
        _copy_tree(self.root, target)
        return target

    def restore(self, snapshot: object) -> None:
        """Empty the workspace in place and copy the snapshot back."""
        if not isinstance(snapshot, Path) or snapshot.parent != self._store:
            raise FilesystemError("This snapshot was not taken by this snapshotter.")
        for child in os.scandir(self.root):
            if child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.path)
            else:
                os.unlink(child.path)
        _copy_tree(snapshot, self.root)
        os.chmod(self.root, stat.S_IMODE(os.lstat(snapshot).st_mode))

    def discard(self, snapshot: Path) -> None:
        """Delete one snapshot's copy."""
        shutil.rmtree(snapshot, ignore_errors=True)

    def close(self) -> None:
        """Delete all storage (idempotent)."""
        self._finalizer()
