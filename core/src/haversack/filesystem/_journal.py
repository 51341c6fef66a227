"""``ChangeJournal``: the pre-image of exactly each path a call changed, so a rollback undoes
only the call's own changes and keeps everyone else's.

A workspace the user shares (their editor saves, another session commits, a build writes) is
not restored as a whole: that would revert whatever others did during a failing call. Each
change is made inside :meth:`ChangeJournal.record`, which keeps the state of the named paths
before the block (a file by a hard link to its inode in a private store, else a copy) and
after it. :meth:`ChangeJournal.undo` puts a path back only where it still holds the state the
call left; where someone else changed it since, their version is kept and the path is
reported in the :class:`~haversack.filesystem.RollbackReport`.

Writers that record here never modify a file in place (they write a new inode and rename it),
so a stored hard link is a frozen pre-image. Every record and undo holds the workspace's
cross-process lock (:func:`workspace_lock`), so two processes' check-then-restore steps never
interleave.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from haversack.errors import FilesystemError

from ._beneath import _DIR_FLAGS, Beneath
from ._protocol import RollbackReport
from ._snapshot import _copy, default_storage_parent

__all__ = ["ChangeJournal", "JournalMark", "PathState", "workspace_lock"]

Kind = Literal["missing", "file", "dir", "link", "other"]

_LINK_FALLBACK: Final = frozenset({errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES})


@dataclass(frozen=True, slots=True)
class PathState:
    """What one path held at one moment: its kind and enough of its inode to tell whether
    anyone changed it (a directory is compared by kind and mode only: its entries are paths of
    their own)."""

    kind: Kind
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    mode: int = 0
    target: str = ""

    def same(self, other: PathState) -> bool:
        """Whether ``other`` is this state (nobody changed the path in between)."""
        if self.kind != other.kind:
            return False
        if self.kind == "dir":
            return self.mode == other.mode
        return self == other


_MISSING = PathState("missing")


def _state(st: os.stat_result, target: str = "") -> PathState:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return PathState("dir", mode=stat.S_IMODE(mode))
    kind: Kind = "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"
    # ctime is left out: taking the pre-image by a hard link changes it.
    return PathState(kind, st.st_ino, st.st_size, st.st_mtime_ns, 0, stat.S_IMODE(mode), target)


class JournalMark:
    """A point in a journal: :meth:`ChangeJournal.undo` undoes what was recorded after it.

    Records are kept while a mark older than them is alive.
    """

    __slots__ = ("__weakref__", "seq")

    def __init__(self, seq: int) -> None:
        self.seq = seq

    def __repr__(self) -> str:
        return f"JournalMark({self.seq})"


@dataclass(slots=True)
class _Record:
    path: str
    seq: int
    before: PathState
    after: PathState
    stored: str | None  # name in the store holding the file's pre-image
    # Someone else changed the path after this record's change (a newer record took over):
    # the change is theirs to keep, whatever the path holds at undo time.
    superseded: bool = False


def _store_parent(root: str) -> Path:
    """Where pre-images can be hard links: a private directory on ``root``'s filesystem
    (``/tmp`` is often a tmpfs while projects live under the home directory)."""
    device = os.stat(root).st_dev
    default = default_storage_parent()
    if default.stat().st_dev == device:
        return default
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    candidate = cache / "haversack" / "journal"
    try:
        candidate.mkdir(mode=0o700, parents=True, exist_ok=True)
        if candidate.stat().st_dev == device:
            return candidate
    except OSError:
        pass
    return default


def _lock_dir() -> Path:
    path = Path(tempfile.gettempdir()) / f"haversack-{os.geteuid()}" / "locks"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def workspace_lock(root: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the cross-process lock of the directory ``root`` (by device and inode, in a file
    outside the tree, so nothing in the workspace can take or break it)."""
    st = os.stat(root)
    path = _lock_dir() / f"{st.st_dev}-{st.st_ino}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


class ChangeJournal:
    """The change journal of the host directory ``root`` (see the module docstring).

    ``storage_parent`` is where the private pre-image store goes (default: the first of
    :func:`~haversack.filesystem.default_storage_parent` and ``~/.cache/haversack/journal``
    that is on ``root``'s filesystem, else the former); on another filesystem than ``root``
    (or where hard links are refused) pre-images are copies, which costs their size.
    """

    def __init__(self, root: str | os.PathLike[str], *, storage_parent: Path | None = None) -> None:
        self._root = os.path.abspath(os.fspath(root))
        self._beneath = Beneath(self._root)
        parent = storage_parent or _store_parent(self._root)
        self._store = Path(tempfile.mkdtemp(prefix="journal-", dir=parent))
        self._store_fd = os.open(self._store, _DIR_FLAGS)
        self._lock = threading.RLock()
        self._records: list[_Record] = []
        self._open: dict[str, _Record] = {}  # path -> its record since the newest mark
        self._marks: weakref.WeakSet[JournalMark] = weakref.WeakSet()
        self._seq = 0
        self._names = 0
        self._finalizer = weakref.finalize(
            self, _close, self._beneath, self._store_fd, str(self._store)
        )

    @property
    def root(self) -> Path:
        """The journaled directory."""
        return Path(self._root)

    def close(self) -> None:
        """Drop every record and the store (idempotent); the workspace is not touched."""
        with self._lock:
            self._records.clear()
            self._open.clear()
            self._finalizer()

    # -- marks ---------------------------------------------------------------------------

    def mark(self) -> JournalMark:
        """A new mark: what is recorded from now on can be undone with it."""
        with self._lock:
            self._seq += 1
            mark = JournalMark(self._seq)
            self._marks.add(mark)
            self._open.clear()
            self._prune()
            return mark

    def forget(self, mark: JournalMark) -> None:
        """Give up undoing past ``mark`` (a committed call): its records may be freed."""
        with self._lock:
            self._marks.discard(mark)
            self._prune()

    def _prune(self) -> None:
        oldest = min((m.seq for m in self._marks), default=None)
        keep = [r for r in self._records if oldest is not None and r.seq >= oldest]
        for record in self._records:
            if oldest is None or record.seq < oldest:
                self._drop(record)
                if self._open.get(record.path) is record:
                    del self._open[record.path]
        self._records = keep

    def _drop(self, record: _Record) -> None:
        if record.stored is not None:
            with contextlib.suppress(OSError):
                os.unlink(record.stored, dir_fd=self._store_fd)
            record.stored = None

    # -- recording -----------------------------------------------------------------------

    @contextlib.contextmanager
    def record(self, paths: Iterable[str]) -> Iterator[None]:
        """Record ``paths`` (normalised, relative) around the block that changes them.

        The pre-image of each is kept before the block (once per mark: a second change of a
        path keeps its first pre-image) and its state after the block is remembered, whether
        the block succeeded or not. Holds the workspace lock throughout.
        """
        wanted = list(dict.fromkeys(p for p in paths if p))
        with self._lock, workspace_lock(self._root):
            records = [self._begin(p) for p in wanted]
            try:
                yield
            finally:
                for record in records:
                    record.after = self.state(record.path)

    def _begin(self, path: str) -> _Record:
        record = self._open.get(path)
        before = self.state(path)
        if record is not None and before.same(record.after):
            return record  # still as this journal left it: one pre-image is enough
        if record is not None:
            record.superseded = True
        # First change since the mark, or someone else changed the path since this journal
        # did: a record of its own, so an undo brings back *their* version first.
        if not self._marks:  # with no mark alive nothing can be undone: keep nothing
            return _Record(path, self._seq, before, before, None)
        stored = self._preserve(path) if before.kind == "file" else None
        record = _Record(path, self._seq, before, before, stored)
        self._records.append(record)
        self._open[path] = record
        return record

    def state(self, path: str) -> PathState:
        """What ``path`` holds now (``missing`` where it or a parent is absent; ``other`` where
        a parent is not a directory)."""
        try:
            with self._beneath.parent(path) as (fd, name):
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else ""
        except FileNotFoundError:
            return _MISSING
        except FilesystemError as exc:
            return _MISSING if isinstance(exc, FileNotFoundError) else PathState("other")
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return _MISSING
            return PathState("other")
        return _state(st, target)

    def _preserve(self, path: str) -> str | None:
        """Keep the file ``path``'s content in the store; its name there (``None``: gone)."""
        self._names += 1
        stored = str(self._names)
        try:
            with self._beneath.parent(path) as (fd, name):
                try:
                    os.link(
                        name,
                        stored,
                        src_dir_fd=fd,
                        dst_dir_fd=self._store_fd,
                        follow_symlinks=False,
                    )
                    return stored
                except OSError as exc:
                    if exc.errno not in _LINK_FALLBACK:
                        raise
                src = os.open(
                    name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd
                )
        except (OSError, FilesystemError):
            return None
        try:
            size = os.fstat(src).st_size
            dst = os.open(
                stored,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                0o600,
                dir_fd=self._store_fd,
            )
            try:
                _copy(src, dst, size, 0, 0)
            finally:
                os.close(dst)
        finally:
            os.close(src)
        return stored

    # -- undo ----------------------------------------------------------------------------

    def undo(self, mark: JournalMark) -> RollbackReport:
        """Put back every path recorded since ``mark``, newest first, where it still holds
        the state the recording left; report the others (someone else changed them)."""
        restored: list[str] = []
        kept: list[str] = []
        with self._lock, workspace_lock(self._root):
            todo = [r for r in self._records if r.seq >= mark.seq]
            # Directories come back first, parents before children; then everything else,
            # newest first, so what a call created inside a directory goes before it.
            dirs = sorted(
                (r for r in todo if r.before.kind == "dir"), key=lambda r: r.path.count("/")
            )
            rest = [r for r in reversed(todo) if r.before.kind != "dir"]
            for record in dirs + rest:
                if record.before.same(record.after):
                    continue  # the call left it as it found it
                if record.superseded or not self.state(record.path).same(record.after):
                    kept.append(record.path)
                elif self._put_back(record):
                    restored.append(record.path)
                else:
                    kept.append(record.path)
            for record in todo:
                self._drop(record)
            self._records = [r for r in self._records if r.seq < mark.seq]
            self._open.clear()
            self._marks.discard(mark)
        return RollbackReport(tuple(sorted(set(restored))), tuple(sorted(set(kept))))

    def _put_back(self, record: _Record) -> bool:
        """Give ``record.path`` its pre-image; ``False`` where that cannot be done safely."""
        before = record.before
        try:
            with self._beneath.parent(record.path) as (fd, name):
                if before.kind == "dir":
                    return self._put_dir(fd, name, before)
                if before.kind == "missing":
                    return _remove(fd, name)
                if before.kind == "file" and record.stored is not None:
                    try:
                        here = os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino
                    except FileNotFoundError:
                        here = -1
                    if os.stat(record.stored, dir_fd=self._store_fd).st_ino == here:
                        return True  # the pre-image is the file there (rename would no-op)
                    tmp = f".haversack-undo-{os.getpid()}-{self._names}"
                    self._names += 1
                    os.link(record.stored, tmp, src_dir_fd=self._store_fd, dst_dir_fd=fd)
                elif before.kind == "link":
                    tmp = f".haversack-undo-{os.getpid()}-{self._names}"
                    self._names += 1
                    os.symlink(before.target, tmp, dir_fd=fd)
                else:
                    return False
                try:
                    with contextlib.suppress(IsADirectoryError, OSError):
                        _remove_empty_dir(fd, name)
                    os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, dir_fd=fd)
                    raise
                return True
        except (OSError, FilesystemError):
            return False

    @staticmethod
    def _put_dir(fd: int, name: str, before: PathState) -> bool:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            os.mkdir(name, before.mode, dir_fd=fd)
            os.chmod(name, before.mode, dir_fd=fd, follow_symlinks=False)
            return True
        if stat.S_ISDIR(st.st_mode):
            os.chmod(name, before.mode, dir_fd=fd, follow_symlinks=False)
            return True
        if not _remove(fd, name):
            return False
        os.mkdir(name, before.mode, dir_fd=fd)
        os.chmod(name, before.mode, dir_fd=fd, follow_symlinks=False)
        return True

    def __repr__(self) -> str:
        return f"ChangeJournal({self._root!r}, {len(self._records)} records)"


def _remove(fd: int, name: str) -> bool:
    """Remove the file, link or empty directory ``name``; ``False`` for a directory someone
    else put entries in."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    if stat.S_ISDIR(st.st_mode):
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise
        return True
    os.unlink(name, dir_fd=fd)
    return True


def _remove_empty_dir(fd: int, name: str) -> None:
    """An empty directory where a file must come back (rename cannot replace one)."""
    if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
        os.rmdir(name, dir_fd=fd)


def _close(beneath: Beneath, store_fd: int, store: str) -> None:
    import shutil

    with contextlib.suppress(OSError):
        os.close(store_fd)
    beneath.close()
    shutil.rmtree(store, ignore_errors=True)
