"""Path operations beneath a directory handle that never follow a symbolic link.

A workspace on the host can be changed by someone else while the host works in it (a sandbox
process swapping a directory for a link to ``/etc``), so checking a path and then using it is
a race the checker loses. Every operation here instead starts from an open handle on the
workspace root and resolves the path inside the kernel, component by component, refusing a
symbolic link at *any* component and any step out of the root:

- ``openat2(2)`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` where
  the kernel has it (Linux 5.6+): one system call, atomic with respect to concurrent renames;
- otherwise a walk that opens each directory with ``O_NOFOLLOW | O_DIRECTORY`` relative to
  the previous one, which is just as safe (each step holds a handle, so a later swap of a name
  cannot redirect an earlier step) at one system call per component.

Operations on a name itself (stat, unlink, mkdir, rename, symlink) go through :meth:`parent`,
which opens the parent directory this way and hands back the handle and the final name for
the ``*at`` calls (``os.stat(name, dir_fd=fd, follow_symlinks=False)`` and friends).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from typing import Any, Final

from haversack.errors import (
    FilesystemError,
    InvalidPathError,
    LinkRefusedError,
    PathExistsError,
    PathKindError,
)

from ._rules import missing_error

__all__ = ["Beneath"]

_RESOLVE_NO_MAGICLINKS: Final = 0x02
_RESOLVE_NO_SYMLINKS: Final = 0x04
_RESOLVE_BENEATH: Final = 0x08
_RESOLVE: Final = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
_SYS_OPENAT2: Final = 437  # the same number on every architecture (added with the unified table)
_DIR_FLAGS: Final = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Openat2:
    """``openat2`` through ctypes, or ``None`` from :func:`_load` when the kernel lacks it."""

    def __init__(self) -> None:
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = (
                ("flags", ctypes.c_uint64),
                ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64),
            )

        self._ctypes = ctypes
        self._how = OpenHow
        self._size = ctypes.sizeof(OpenHow)
        libc = ctypes.CDLL(None, use_errno=True)
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long

    def __call__(self, dir_fd: int, path: str, flags: int, mode: int) -> int:
        how = self._how(flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
        fd = int(
            self._syscall(
                _SYS_OPENAT2,
                self._ctypes.c_int(dir_fd),
                self._ctypes.c_char_p(os.fsencode(path)),
                self._ctypes.byref(how),
                self._ctypes.c_size_t(self._size),
            )
        )
        if fd < 0:
            code = self._ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return fd


_UNSET: Any = object()
_openat2: _Openat2 | None = _UNSET


def _load() -> _Openat2 | None:
    global _openat2
    if _openat2 is _UNSET:
        try:
            candidate = _Openat2()
            # Probe once: ENOSYS (old kernel) or a seccomp filter answering EPERM/ENOSYS.
            os.close(candidate(os.open("/", _DIR_FLAGS), ".", _DIR_FLAGS, 0))
        except (OSError, AttributeError):
            candidate = None
        _openat2 = candidate
    return _openat2


class Beneath:
    """A handle on a directory (the root) and safe path operations beneath it.

    ``rel`` paths are normalised workspace paths (``"a/b.txt"``; ``""`` is the root). ``shown``
    is how a path is spelled in messages (e.g. ``/workspace/a/b.txt``). ``close`` releases the
    handle; the object is a context manager. ``use_openat2=False`` forces the portable walk
    (tests run both).
    """

    __slots__ = ("_fd", "_openat2", "path")

    def __init__(self, path: str | os.PathLike[str], *, use_openat2: bool = True) -> None:
        #: The root's path on the host, as opened (informational only: never used to resolve).
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self._openat2 = _load() if use_openat2 else None

    @property
    def fd(self) -> int:
        """The root's handle (``O_PATH``): a ``dir_fd`` for ``*at`` calls on direct children."""
        return self._fd

    @property
    def uses_openat2(self) -> bool:
        """Whether resolution uses ``openat2`` (else the per-component walk)."""
        return self._openat2 is not None

    def close(self) -> None:
        """Release the root handle (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, rel: str, flags: int, mode: int = 0o644, *, shown: str | None = None) -> int:
        """Open ``rel`` beneath the root with ``flags`` (``O_NOFOLLOW`` and ``O_CLOEXEC`` are
        added); return the new descriptor, which the caller closes.

        Raises :class:`LinkRefusedError` for a symbolic link at any component,
        :class:`PathNotFoundError` for a missing component and :class:`PathKindError` when a
        component that must be a directory is a file.
        """
        flags |= os.O_NOFOLLOW | os.O_CLOEXEC
        label = shown if shown is not None else rel or "."
        try:
            if not rel:
                return os.open(".", flags, mode, dir_fd=self._fd)
            if self._openat2 is not None:
                return self._openat2(self._fd, rel, flags, mode)
            head, _, name = rel.rpartition("/")
            if not head:
                return os.open(name, flags, mode, dir_fd=self._fd)
            parent = self._walk(head)
            try:
                return os.open(name, flags, mode, dir_fd=parent)
            finally:
                os.close(parent)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and self._blocked_by_link(rel):
                exc = OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            raise _translate(exc, rel, label) from None

    def _blocked_by_link(self, rel: str) -> bool:
        """Whether the first component of ``rel`` that is not a directory is a symbolic link.

        Only for the wording of an error: ``O_DIRECTORY | O_NOFOLLOW`` on a link fails with
        ENOTDIR, the same as on a file, and the model should hear which one it was.
        """
        import stat

        fd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self._fd)
        try:
            for part in rel.split("/"):
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    return True
                if not stat.S_ISDIR(st.st_mode):
                    return False
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError:
            return False
        finally:
            os.close(fd)
        return False

    def open_dir(self, rel: str, *, shown: str | None = None) -> int:
        """A readable handle on the directory ``rel`` (for ``os.scandir``/``os.listdir``)."""
        return self.open(rel, os.O_RDONLY | os.O_DIRECTORY, shown=shown)

    @contextlib.contextmanager
    def parent(self, rel: str, *, shown: str | None = None) -> Iterator[tuple[int, str]]:
        """``(directory handle, name)`` for the last component of ``rel`` (not the root), for
        ``*at`` calls on the name itself; the handle is closed when the block ends."""
        if not rel:
            raise InvalidPathError("The workspace root has no parent directory.", path=rel)
        head, _, name = rel.rpartition("/")
        fd = self.open(head, _DIR_FLAGS & ~os.O_NOFOLLOW, shown=shown)
        try:
            yield fd, name
        finally:
            os.close(fd)

    def _walk(self, head: str) -> int:
        fd = os.open(".", _DIR_FLAGS & ~os.O_NOFOLLOW, dir_fd=self._fd)
        try:
            for part in head.split("/"):
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def __repr__(self) -> str:
        return f"Beneath({self.path!r}, openat2={self.uses_openat2})"


def _translate(exc: OSError, rel: str, shown: str) -> FilesystemError:
    """The model-facing error for a failed resolution of ``rel``."""
    if exc.errno in (errno.ELOOP, errno.EXDEV):
        return LinkRefusedError(
            f"{shown} goes through a symbolic link, which the file tools never follow (a link "
            "could lead out of the workspace). Use the path the link points to, or remove the "
            "link.",
            path=rel,
        )
    if exc.errno == errno.ENOENT:
        return missing_error(rel, shown)
    if exc.errno == errno.ENOTDIR:
        return PathKindError(
            f"A part of {shown} is a file, not a directory, so the path cannot be reached.",
            path=rel,
        )
    if exc.errno == errno.EISDIR:
        return PathKindError(f"{shown} is a directory, not a file.", path=rel)
    if exc.errno == errno.EEXIST:
        return PathExistsError(f"{shown} already exists.", path=rel)
    return FilesystemError(f"Cannot open {shown}: {exc.strerror}.", path=rel)
