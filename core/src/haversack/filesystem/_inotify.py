"""Which directories of a workspace changed: one inotify watch per directory, through ctypes.

:class:`DirectorySnapshotter` asks this watcher, before each snapshot, restore or quota check,
which directories saw a change since the last time, and rescans only those. A watch on a
directory reports changes to the directory itself and to every direct child (content,
attributes, creation, deletion, renames), so a change anywhere marks the directory that holds
the changed name. What inotify does not see is left to the caller: a write through a second
hard link in another directory (the snapshotter re-stats every multiply linked file), writes
through a shared mapping (the fd was opened for writing, so its close marks the directory),
and a lost queue (``IN_Q_OVERFLOW``) or a refused watch, which this class reports as
:attr:`lost` so the caller walks the whole tree instead.
"""

from __future__ import annotations

import errno
import os
import struct
from typing import Any, Final

__all__ = ["Watcher"]

_IN_MODIFY: Final = 0x2
_IN_ATTRIB: Final = 0x4
_IN_CLOSE_WRITE: Final = 0x8
_IN_MOVED_FROM: Final = 0x40
_IN_MOVED_TO: Final = 0x80
_IN_CREATE: Final = 0x100
_IN_DELETE: Final = 0x200
_IN_DELETE_SELF: Final = 0x400
_IN_MOVE_SELF: Final = 0x800
_IN_Q_OVERFLOW: Final = 0x4000
_IN_IGNORED: Final = 0x8000
_IN_ONLYDIR: Final = 0x01000000
_IN_ISDIR: Final = 0x40000000
_NAME_EVENTS: Final = _IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO
_IN_NONBLOCK: Final = os.O_NONBLOCK
_IN_CLOEXEC: Final = os.O_CLOEXEC
_MASK: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR  # no IN_DONT_FOLLOW: /proc/self/fd/N is a link that must be followed
)
_HEADER: Final = struct.Struct("iIII")


class _Births:
    """Names made since the last drain, followed through renames. One removed or replaced
    may have been a hard link to any file, written through and gone again: that file's own
    directory got no event, so the caller must check every file."""

    __slots__ = ("_born", "_gone", "_moving")

    def __init__(self) -> None:
        self._born: set[tuple[int, bytes]] = set()
        self._moving: set[int] = set()  # cookies of made names being renamed
        self._gone = False

    def see(self, mask: int, cookie: int, name: tuple[int, bytes]) -> None:
        made = name in self._born
        self._born.discard(name)
        if mask & _IN_MOVED_FROM:
            if made:
                self._moving.add(cookie)
            return
        if made:  # removed, or replaced by another name or a new file
            self._gone = True
        if mask & _IN_CREATE or (mask & _IN_MOVED_TO and cookie in self._moving):
            self._moving.discard(cookie)
            self._born.add(name)

    def churned(self) -> bool:
        # A made name renamed where no watch saw it arrive counts as gone.
        return self._gone or bool(self._moving)


class Watcher:
    """An inotify instance with one watch per directory, each known by its workspace path.

    :meth:`watch` is given an open handle on the directory (never a path the sandbox could
    swap: the watch is added through ``/proc/self/fd``). :meth:`drain` returns the paths of
    the directories that changed since the last drain. When the kernel dropped events or
    refused a watch, :attr:`lost` is set and stays set until the caller, having walked the
    whole tree, calls :meth:`reset`.
    """

    __slots__ = ("_add", "_fd", "_rel_wd", "_wd_rel", "lost")

    def __init__(self) -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = int(libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        self._fd = fd
        add = libc.inotify_add_watch
        add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        add.restype = ctypes.c_int
        self._add: Any = (add, ctypes)
        self._wd_rel: dict[int, str] = {}
        self._rel_wd: dict[str, int] = {}
        #: Events were lost (queue overflow, a refused watch): the caller must walk everything.
        self.lost = False

    @classmethod
    def open(cls) -> Watcher | None:
        """A watcher, or ``None`` where inotify is unavailable (the caller walks every time)."""
        try:
            return cls()
        except (OSError, AttributeError):
            return None

    def watched(self, rel: str) -> bool:
        """Whether the directory at ``rel`` has a watch."""
        return rel in self._rel_wd

    def watch(self, dir_fd: int, rel: str) -> None:
        """Watch the directory open as ``dir_fd``, known as ``rel`` from now on."""
        add, _ = self._add
        wd = int(add(self._fd, f"/proc/self/fd/{dir_fd}".encode(), _MASK))
        if wd < 0:
            # ENOSPC: the per-user watch limit (fs.inotify.max_user_watches) is reached.
            self.lost = True
            return
        old = self._wd_rel.get(wd)
        if old is not None and old != rel:  # the same directory, moved: it has a new name
            self._rel_wd.pop(old, None)
        self._wd_rel[wd] = rel
        self._rel_wd[rel] = wd

    def forget(self, rel: str) -> None:
        """Drop the name ``rel`` (its directory left the tree or was renamed)."""
        wd = self._rel_wd.pop(rel, None)
        if wd is not None and self._wd_rel.get(wd) == rel:
            del self._wd_rel[wd]

    def drain(self, names: dict[str, set[str] | None] | None = None) -> tuple[set[str], bool]:
        """The workspace paths of the directories that changed since the last drain, and
        whether a name other than a directory's was created and then removed or replaced
        (it may have been a hard link to any file, written through and gone again).

        ``names``, when given, is filled per changed directory with the names of the
        children the events named, or None where an event concerned the directory itself
        (then all of it must be looked at)."""
        dirty: set[str] = set()
        births = _Births()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return dirty, births.churned()
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            offset = 0
            while offset < len(data):
                wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
                start = offset + _HEADER.size
                offset = start + length
                if mask & _NAME_EVENTS and not mask & _IN_ISDIR:
                    births.see(mask, cookie, (wd, data[start:offset].rstrip(b"\0")))
                if mask & _IN_Q_OVERFLOW:
                    self.lost = True
                    continue
                rel = self._wd_rel.get(wd)
                if rel is None:
                    continue
                if mask & _IN_IGNORED:  # the directory is gone: its watch went with it
                    del self._wd_rel[wd]
                    if self._rel_wd.get(rel) == wd:
                        del self._rel_wd[rel]
                dirty.add(rel)
                if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF) and rel:
                    dirty.add(rel.rpartition("/")[0])
                    if names is not None:
                        names[rel.rpartition("/")[0]] = None
                if names is not None:
                    child = data[start:offset].rstrip(b"\0")
                    if not child or mask & (_IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF):
                        names[rel] = None
                    else:
                        known = names.setdefault(rel, set())
                        if known is not None:
                            known.add(os.fsdecode(child))

    def reset(self) -> None:
        """Forget every watch name and the lost flag, before a walk of the whole tree re-adds
        them (watches of directories still present keep their descriptors)."""
        self._wd_rel.clear()
        self._rel_wd.clear()
        self.lost = False

    def close(self) -> None:
        """Release the inotify instance (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
