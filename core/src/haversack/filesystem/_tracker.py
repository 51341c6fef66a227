"""``ChangeTracker``: which paths below a directory changed since the last look, at O(change).

A tracker keeps a stat listing of every directory below its root and an inotify watch on each
(:mod:`._inotify`). :meth:`ChangeTracker.changed` re-stats only the children the events since
the last call named (a whole directory only for an event on the directory itself) and returns
the paths whose entry appeared, disappeared or changed (kind, mode, owner, size, mtime, ctime,
inode or link count). Whenever events may have
been lost it walks the whole tree instead and returns the difference from its listing, so the
answer is the same either way, only its cost differs:

- the kernel's event queue overflowed, or a watch was refused (the per-user watch limit);
- inotify is unavailable, or the root is on a network or FUSE filesystem (changes made by
  other machines or by a FUSE server raise no event here);
- a name other than a directory's was made and removed again between two calls (it may have
  been a hard link to a file in another directory, written through: that file's directory
  got no event), or a new inode with more than one link appeared (its other names may sit in
  directories nothing marked);
- ``track_changes=False``.

Files already known to have more than one link are re-stat'ed on every call (a write through
a name in another directory leaves no event in theirs). Not seen: a hard link made from
*outside* the tree to a file listed with one link, then written through (no event reaches any
watched directory); callers that compare contents must tolerate that staleness.
"""

from __future__ import annotations

import errno
import os
import stat
import weakref
from collections.abc import Iterable
from typing import Final

from haversack.errors import FilesystemError

from ._beneath import Beneath
from ._inotify import Watcher

__all__ = ["ChangeTracker"]

_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
#: statfs ``f_type`` of filesystems whose changes may come from elsewhere (no local event):
#: NFS, SMB/CIFS (three), FUSE, Ceph, 9P, AFS, Coda, GFS2, OCFS2, Lustre.
_REMOTE_FS: Final = frozenset(
    {
        0x6969,
        0x517B,
        0xFF534D42,
        0xFE534D42,
        0x65735546,
        0x00C36400,
        0x01021997,
        0x5346414F,
        0x73757245,
        0x01161970,
        0x7461636F,
        0x0BD00BD0,
    }
)

#: (mode, uid, gid, size, mtime, ctime, inode, links): ctime changes on every write, chmod,
#: chown and rename and cannot be set back, so an in-place rewrite is always seen. A
#: directory is its mode, owner and inode: a change of its entries is theirs, and raises no
#: event in its parent (its mtime would change unseen).
_Key = tuple[int, int, int, int, int, int, int, int]


def _key(st: os.stat_result) -> _Key:
    if stat.S_ISDIR(st.st_mode):
        return (st.st_mode, st.st_uid, st.st_gid, 0, 0, 0, st.st_ino, 0)
    return (
        st.st_mode,
        st.st_uid,
        st.st_gid,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
        st.st_nlink,
    )


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _split(rel: str) -> tuple[str, str]:
    head, _, name = rel.rpartition("/")
    return head, name


def _remote(fd: int) -> bool:
    """Whether the filesystem holding ``fd`` is a network or FUSE one (unknown: assume so)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(256)  # struct statfs: f_type is the first field
        if libc.fstatfs(fd, buf) != 0:
            return True
        f_type = ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
    except (OSError, AttributeError):
        return True
    return f_type in _REMOTE_FS


def _close_all(root: Beneath, watcher: Watcher | None) -> None:
    if watcher is not None:
        watcher.close()
    root.close()


class ChangeTracker:
    """The paths below ``root`` that changed since the last look, at the cost of the change.

    :meth:`changed` returns workspace-relative paths (``"a/b.txt"``; the root itself is never
    listed): the first call every path present, each later call those whose entry appeared,
    disappeared or changed since the previous one (a removed or renamed directory: it and
    everything that was below it). Nothing is ever followed: the root is opened once, every
    directory beneath it without following a link. The answer never misses a change that
    :meth:`full_walks` would see: whenever events may have been lost (queue overflow, the
    watch limit, no inotify, a network or FUSE filesystem, a hard link made and removed, a
    new multiply linked inode) the tracker walks the whole tree and compares. A file linked
    from outside the tree *after* it was listed, then written through that other name, is
    not seen (no event reaches the tree). A directory counts as changed when its mode, owner
    or inode did (a change of its entries is theirs). It may over-report; callers compare
    what they care about.

    Not thread-safe; ``close`` (or garbage collection) releases the inotify instance and the
    root's handle.
    """

    def __init__(self, root: str | os.PathLike[str], *, track_changes: bool = True) -> None:
        self._root = Beneath(root)
        self._dirs: dict[str, dict[str, _Key]] = {}  # directory -> {name: key}
        self._multi: set[str] = set()  # non-directories with more than one link
        self._started = False
        self._stale = False  # a directory could not be listed: walk everything next time
        watcher = None
        if track_changes:
            probe = self._open_dir("")
            try:
                remote = _remote(probe)
            finally:
                os.close(probe)
            watcher = None if remote else Watcher.open()
        self._watcher = watcher
        #: How many calls walked the whole tree (the first one included).
        self.full_walks = 0
        self._finalizer = weakref.finalize(self, _close_all, self._root, watcher)

    @property
    def tracks_changes(self) -> bool:
        """Whether events narrow the work (else every call walks the whole tree)."""
        return self._watcher is not None

    def changed(self) -> set[str]:
        """The paths that appeared, disappeared or changed since the last call (see the class
        docstring); the first call: every path present."""
        watcher = self._watcher
        if not self._started or self._stale or watcher is None or watcher.lost:
            return self._full()
        names: dict[str, set[str] | None] = {}
        dirty, churned = watcher.drain(names)
        if watcher.lost or churned:
            return self._full()
        changed: set[str] = set()
        # A write through another name of a multiply linked file raises no event here.
        for rel in list(self._multi):
            parent, name = _split(rel)
            try:
                fd = self._open_dir(parent)
            except (OSError, FilesystemError):  # gone: its parent's listing tells
                dirty.add(parent)
                names[parent] = None
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                dirty.add(parent)
                names[parent] = None
                continue
            finally:
                os.close(fd)
            if _key(st) != self._dirs.get(parent, {}).get(name):
                dirty.add(parent)
                named = names.setdefault(parent, set())
                if named is not None:
                    named.add(name)
        known = self._multi_inodes()
        fresh: set[str] = set()
        for rel in sorted(dirty, key=lambda r: (r.count("/") if r else -1, r)):
            if rel in fresh or rel not in self._dirs:
                continue  # walked afresh below its parent, or gone with it
            named = names.get(rel)
            if named is None:
                self._relist(rel, changed, fresh)
            else:
                self._restat(rel, named, changed, fresh)
        if watcher.lost or self._stale or self._multi_inodes() - known:
            # A refused watch, or a new hard link whose other names nothing marked.
            changed |= self._full()
        return changed

    def close(self) -> None:
        """Release the inotify instance and the root's handle (idempotent)."""
        self._finalizer()

    # ------------------------------------------------------------------ walks
    def _multi_inodes(self) -> set[int]:
        out = set()
        for rel in self._multi:
            parent, name = _split(rel)
            key = self._dirs.get(parent, {}).get(name)
            if key is not None:
                out.add(key[6])
        return out

    def _listing(self, rel: str) -> dict[str, _Key] | None:
        """Watch the directory ``rel`` (before listing it: nothing is missed in between) and
        list it; None when it cannot be opened (gone, or no longer a directory)."""
        try:
            fd = self._open_dir(rel)
        except FilesystemError:
            return None  # a component on the way is gone, or is a file or a link
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                return {}  # unreadable: nothing below it can be listed (nor changed by us)
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                self._stale = True  # not known to be gone (out of descriptors...): look again
            return None
        try:
            if self._watcher is not None:
                self._watcher.watch(fd, rel)
            if rel:
                # Its own mode or owner, as its parent's listing holds it (a chmod also
                # raises an event in the parent: this is for a parent relisted earlier).
                parent, name = _split(rel)
                siblings = self._dirs.get(parent)
                if siblings is not None and name in siblings:
                    siblings[name] = _key(os.fstat(fd))
            out: dict[str, _Key] = {}
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        out[entry.name] = _key(entry.stat(follow_symlinks=False))
                    except FileNotFoundError:
                        continue  # gone since the listing
            return out
        except OSError:
            self._stale = True
            return None
        finally:
            os.close(fd)

    def _open_dir(self, rel: str) -> int:
        """A handle on the directory ``rel``, reached without following any link; raw
        ``OSError`` for the last component (its errno says why)."""
        if not rel:
            return os.open(".", _DIR, dir_fd=self._root.fd)
        with self._root.parent(rel) as (fd, name):
            return os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=fd)

    def _set(self, rel: str, listing: dict[str, _Key]) -> None:
        self._dirs[rel] = listing
        for name, key in listing.items():
            child = _join(rel, name)
            if not stat.S_ISDIR(key[0]) and key[7] > 1:
                self._multi.add(child)
            else:
                self._multi.discard(child)

    def _walk(self, top: str, changed: set[str], fresh: set[str]) -> None:
        """List ``top`` and everything below it, every path counted as changed."""
        stack = [top]
        while stack:
            rel = stack.pop()
            listing = self._listing(rel)
            if listing is None:
                continue
            fresh.add(rel)
            self._set(rel, listing)
            for name, key in listing.items():
                child = _join(rel, name)
                changed.add(child)
                if stat.S_ISDIR(key[0]):
                    stack.append(child)

    def _drop(self, top: str, changed: set[str]) -> None:
        """Forget the directory ``top`` and everything below it, all counted as changed."""
        stack = [top]
        while stack:
            rel = stack.pop()
            listing = self._dirs.pop(rel, None)
            if self._watcher is not None:
                self._watcher.forget(rel)
            for name, key in (listing or {}).items():
                child = _join(rel, name)
                changed.add(child)
                self._multi.discard(child)
                if stat.S_ISDIR(key[0]):
                    stack.append(child)

    def _relist(self, rel: str, changed: set[str], fresh: set[str]) -> None:
        """Compare the directory ``rel`` with its listing; walk new subdirectories whole."""
        old = self._dirs[rel]
        new = self._listing(rel)
        if new is None:
            # Gone just now (its parent's listing, made first, still had it): everything
            # below it is gone too, and the parent's event brings it back if it returns.
            self._drop(rel, changed)
            self._stale = True
            return
        fresh.add(rel)
        self._set(rel, new)
        self._compare(rel, old, new, old.keys() | new.keys(), changed, fresh)

    def _restat(self, rel: str, named: set[str], changed: set[str], fresh: set[str]) -> None:
        """Compare only the children ``named`` by the events of the directory ``rel``."""
        old = self._dirs[rel]
        try:
            fd = self._open_dir(rel)
        except (OSError, FilesystemError):
            self._relist(rel, changed, fresh)  # gone or unreadable: the whole path decides
            return
        new = dict(old)
        try:
            for name in named:
                try:
                    new[name] = _key(os.stat(name, dir_fd=fd, follow_symlinks=False))
                except FileNotFoundError:
                    new.pop(name, None)
        except OSError:
            os.close(fd)
            self._relist(rel, changed, fresh)
            return
        os.close(fd)
        self._dirs[rel] = new
        for name in named:
            child = _join(rel, name)
            key = new.get(name)
            if key is not None and not stat.S_ISDIR(key[0]) and key[7] > 1:
                self._multi.add(child)
            else:
                self._multi.discard(child)
        self._compare(rel, old, new, named, changed, fresh)

    def _compare(
        self,
        rel: str,
        old: dict[str, _Key],
        new: dict[str, _Key],
        names: Iterable[str],
        changed: set[str],
        fresh: set[str],
    ) -> None:
        """Report the children ``names`` of ``rel`` whose key differs between the listings;
        a removed or replaced directory drops its subtree, a new one is walked whole."""
        for name in names:
            before, key = old.get(name), new.get(name)
            if before == key:
                continue
            child = _join(rel, name)
            changed.add(child)
            was_dir = before is not None and stat.S_ISDIR(before[0])
            if key is None:
                self._multi.discard(child)
                if was_dir:
                    self._drop(child, changed)
                continue
            is_dir = stat.S_ISDIR(key[0])
            if was_dir and not (is_dir and before is not None and before[6] == key[6]):
                self._drop(child, changed)  # another directory (or a file) has the name now
            elif was_dir and self._watcher is not None and self._watcher.watched(child):
                continue  # the same directory: its own events say what changed inside
            if is_dir:
                self._drop(child, changed)
                self._walk(child, changed, fresh)

    def _full(self) -> set[str]:
        """Walk the whole tree and return what differs from the listing kept so far."""
        self.full_walks += 1
        watcher = self._watcher
        if watcher is not None:
            watcher.drain()
            watcher.reset()
        old = self._dirs
        self._dirs, self._multi = {}, set()
        self._started = self._stale = False
        walked: set[str] = set()
        self._walk("", walked, set())
        self._started = True
        changed = {p for p in walked if _lookup(old, p) != _lookup(self._dirs, p)}
        changed.update(_paths(old) - walked)
        return changed


def _lookup(dirs: dict[str, dict[str, _Key]], rel: str) -> _Key | None:
    parent, name = _split(rel)
    return dirs.get(parent, {}).get(name)


def _paths(dirs: dict[str, dict[str, _Key]]) -> set[str]:
    return {_join(rel, name) for rel, listing in dirs.items() for name in listing}
