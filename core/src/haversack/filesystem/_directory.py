"""``DirectoryFilesystem``: the ``Filesystem`` protocol over a host directory, link-safe.

The directory may be changed by someone else while the host works in it: a sandbox process
can swap a directory for a symbolic link to ``/etc`` in a tight loop. Checking a resolved path
and then opening it loses that race, so nothing here ever resolves a path by name from the
host's point of view: every operation starts from a :class:`~haversack.filesystem.Beneath`
handle on the root and resolves beneath it without following a symbolic link at any
component. A link is reported as a link (``kind="link"`` in listings) and never followed;
reading, writing or walking through one raises :class:`~haversack.errors.LinkRefusedError`
naming the path. Special files (FIFOs, sockets, devices) are never opened for reading or
writing: regular files are opened with ``O_PATH`` first, checked with ``fstat`` and only then
reopened through ``/proc/self/fd`` (the same inode, so nothing can be swapped in between).

Rules and error wording are the shared ones (:mod:`haversack.filesystem`), so the tools word
their errors alike on every workspace. Walks (glob, grep, recursive delete) are iterative and
bounded. Snapshots delegate to :class:`~haversack.filesystem.DirectorySnapshotter`.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import itertools
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from haversack.errors import (
    FilesystemError,
    FilesystemLimitError,
    InvalidPathError,
    LinkRefusedError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
    ProtectedPathError,
)

from ._beneath import Beneath
from ._glob import compile_glob
from ._grep import compile_grep_pattern, grep_texts
from ._journal import ChangeJournal, JournalMark
from ._paths import MAX_PATH_DEPTH, WORKSPACE_MOUNT, normalize_path
from ._protected import ProtectedPaths
from ._protocol import FileStat, GrepResult, ReadWindow, RollbackReport, WriteMode
from ._remove import _empty
from ._rules import (
    DEFAULT_MAX_FILE_BYTES,
    check_new_name,
    check_write_mode,
    directory_write_error,
    exists_error,
    file_size_error,
    missing_error,
    not_a_directory_error,
    not_a_file_error,
    root_write_error,
)
from ._snapshot import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_FILES,
    DirectorySnapshotter,
    WorkspaceUsage,
    _copy,
)
from ._text import (
    check_old_text,
    check_window,
    count_lines,
    encode_text,
    line_window,
    replace_exact,
)

__all__ = ["DEFAULT_MAX_WALK_ENTRIES", "DirectoryFilesystem"]

#: Most entries one walk (glob, grep, the listing of a recursive delete) visits.
DEFAULT_MAX_WALK_ENTRIES: Final = 200_000

_DIR_PATH: Final = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_READ: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20
_TEMP_NAMES: Final = itertools.count()

Guard = Callable[[], contextlib.AbstractContextManager[object]]


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def _lineage(p: str) -> list[str]:
    """``p`` and each of its ancestors, outermost first: what writing ``p`` may create."""
    parts = p.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _reopen(path_fd: int, flags: int) -> int:
    """Open the inode an ``O_PATH`` handle refers to with real access ``flags``.

    ``/proc/self/fd/N`` is a magic link to exactly that inode: whatever happens to the name
    meanwhile, this opens the file that was checked.
    """
    return os.open(f"/proc/self/fd/{path_fd}", flags | os.O_CLOEXEC)


class DirectoryFilesystem:
    """A :class:`haversack.Filesystem` over the host directory ``root``.

    ``owner=(uid, gid)`` owns every file and directory this class creates (applied only when
    running as root; ``None`` leaves the process's own). ``max_file_bytes`` bounds a file read
    or written through this class. ``guard``, when given, is entered around every public
    method (snapshot, restore and close included): a sandbox passes a context manager during
    which none of its processes runs. ``storage_parent`` is where snapshot storage goes
    (default :func:`haversack.filesystem.default_storage_parent`); ``max_bytes`` and
    ``max_files`` are the workspace quotas the snapshotter enforces. ``close`` releases the
    handle and the snapshot storage and never touches ``root`` itself.

    ``shared=True`` is for a directory others write too (the user's project: their editor,
    another session): a snapshot is then a :class:`~haversack.filesystem.ChangeJournal` mark
    instead of a copy of the tree, and :meth:`restore` undoes only what this object changed
    since, keeping whatever anyone else did and reporting it (a
    :class:`~haversack.filesystem.RollbackReport`). ``protected`` (a
    :class:`~haversack.filesystem.ProtectedPaths`) names paths that may be read but never
    changed, created or removed (:class:`~haversack.errors.ProtectedPathError`). Whatever the
    mode, a file is never written in place when it has another name (a hard link, possibly
    outside the workspace) or the workspace is shared: a new file replaces it, so the other
    names keep their content.
    """

    def __init__(
        self,
        root: Path | str,
        *,
        owner: tuple[int, int] | None = None,
        mount_point: str = WORKSPACE_MOUNT,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_walk_entries: int = DEFAULT_MAX_WALK_ENTRIES,
        storage_parent: Path | None = None,
        max_bytes: int | None = None,
        max_files: int | None = None,
        guard: Guard | None = None,
        use_openat2: bool = True,
        shared: bool = False,
        protected: ProtectedPaths | None = None,
    ) -> None:
        for name, value in (
            ("max_file_bytes", max_file_bytes),
            ("max_walk_entries", max_walk_entries),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        path = os.path.abspath(os.fspath(root))
        try:
            self._beneath = Beneath(path, use_openat2=use_openat2)
        except FileNotFoundError:
            raise PathNotFoundError(
                f"The workspace directory {path} does not exist; create it or name an existing "
                "directory.",
                path=path,
            ) from None
        except NotADirectoryError:
            raise PathKindError(
                f"The workspace {path} is not a directory; name a directory.", path=path
            ) from None
        self._root = path
        self.owner = owner
        self.max_file_bytes = max_file_bytes
        self.max_walk_entries = max_walk_entries
        self._chown = owner is not None and os.geteuid() == 0
        stripped = mount_point.strip("/")
        self._mount_point = f"/{stripped}" if stripped else "/"
        self._guard = guard
        self.protected = protected
        self._storage_parent = storage_parent
        self._quota = (
            DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
            DEFAULT_MAX_FILES if max_files is None else max_files,
        )
        self._snapshotter: DirectorySnapshotter | None = None
        self._journal: ChangeJournal | None = None
        try:
            if shared:
                self._journal = ChangeJournal(path, storage_parent=storage_parent)
            else:
                self._tracker()
        except BaseException:
            self._beneath.close()
            raise

    # -- identity and paths -------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The host directory holding the workspace (as given, made absolute)."""
        return Path(self._root)

    @property
    def mount_point(self) -> str:
        """Where the workspace root appears to the model (``/workspace`` by default)."""
        return self._mount_point

    @property
    def snapshot_storage(self) -> Path:
        """The private directory holding snapshot data (deleted by :meth:`close`)."""
        storage: Path = self._tracker().storage
        return storage

    @property
    def shared(self) -> bool:
        """Whether others write this directory too (see the class docstring)."""
        return self._journal is not None

    @property
    def journal(self) -> ChangeJournal | None:
        """The change journal of a shared workspace: whoever else changes it on this object's
        behalf (a sandbox writing back a command's changes) records through it, so a rollback
        covers those changes too."""
        return self._journal

    def _tracker(self) -> DirectorySnapshotter:
        # Built on first use in a shared workspace: only the quotas need it there.
        if self._snapshotter is None:
            self._snapshotter = DirectorySnapshotter(
                Path(self._root),
                storage_parent=self._storage_parent,
                max_bytes=self._quota[0],
                max_files=self._quota[1],
            )
        return self._snapshotter

    @property
    def uses_openat2(self) -> bool:
        """Whether resolution uses ``openat2`` (else the per-component ``O_NOFOLLOW`` walk)."""
        return self._beneath.uses_openat2

    def normalize(self, path: str) -> str:
        """Normalise ``path`` with :func:`haversack.normalize_path` and this mount point."""
        return normalize_path(path, mount_point=self._mount_point)

    def display(self, path: str) -> str:
        """The absolute spelling of a normalised path, as the model sees it."""
        return f"{self._mount_point.rstrip('/')}/{path}" if path else self._mount_point

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """Run one public method: inside the guard, with a stray ``OSError`` (a name that
        changed between two system calls, a permission) turned into a clear error."""
        with self._guard() if self._guard is not None else contextlib.nullcontext():
            try:
                yield
            except FilesystemError:
                raise
            except OSError as exc:
                raise FilesystemError(
                    "The workspace changed during the operation or refused it: "
                    f"{exc.strerror or exc}. Check the path and try again."
                ) from None

    # -- snapshots ----------------------------------------------------------------------

    def snapshot(self) -> object:
        """Record the workspace exactly (only changed files are copied); in a shared
        workspace, a journal mark (nothing is copied until something changes)."""
        with self._guarded():
            if self._journal is not None:
                return self._journal.mark()
            return self._tracker().snapshot()

    def restore(self, snapshot: object) -> RollbackReport | None:
        """Put the workspace back exactly as ``snapshot`` recorded it; in a shared workspace,
        undo only this object's changes since, and report the paths others changed since."""
        with self._guarded():
            if self._journal is not None:
                if not isinstance(snapshot, JournalMark):
                    raise FilesystemError("This snapshot was not taken by this workspace.")
                return self._journal.undo(snapshot)
            self._tracker().restore(snapshot)
            return None

    def discard(self, snapshot: Any) -> None:
        """Release a snapshot's storage now (otherwise when it is garbage-collected)."""
        with self._guarded():
            if self._journal is not None:
                self._journal.forget(snapshot)
            else:
                self._tracker().discard(snapshot)

    def usage(self) -> WorkspaceUsage:
        """What the workspace uses now (allocated bytes, entries) and its budgets."""
        with self._guarded():
            usage: WorkspaceUsage = self._tracker().usage()
            return usage

    def check_quota(self) -> WorkspaceUsage:
        """Raise :class:`~haversack.errors.FilesystemLimitError` when the workspace is over
        its byte or file budget (a command that left it there must fail and be rolled back);
        else its usage."""
        with self._guarded():
            usage: WorkspaceUsage = self._tracker().check_quota()
            return usage

    def close(self) -> None:
        """Release the root handle and delete the snapshot storage (idempotent); the
        directory itself is never removed."""
        with self._guarded():
            if self._snapshotter is not None:
                self._snapshotter.close()
            if self._journal is not None:
                self._journal.close()
            self._beneath.close()

    # -- changes: protection and the journal ----------------------------------------------

    def _refuse_protected(self, p: str) -> None:
        rule = self.protected.match(p) if self.protected is not None else None
        if rule is not None:
            raise ProtectedPathError(
                f"{self.display(p)} is protected ({rule.reason}), so the tools may read it but "
                "never change, create or remove it. Leave that change to the user.",
                path=p,
            )

    def _changing(self, paths: builtins.list[str]) -> contextlib.AbstractContextManager[None]:
        """Around a change of ``paths``: journaled in a shared workspace."""
        if self._journal is None:
            return contextlib.nullcontext()
        return self._journal.record(paths)

    # -- resolution ---------------------------------------------------------------------

    def _lstat(self, p: str) -> os.stat_result:
        """``lstat`` of ``p`` resolved beneath the root (a link at the end is stat'ed itself)."""
        if not p:
            return os.stat(self._beneath.fd)
        with self._beneath.parent(p, shown=self.display(p)) as (fd, name):
            try:
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise missing_error(p, self.display(p)) from None

    def _file_stat(self, p: str, st: os.stat_result) -> FileStat:
        if stat.S_ISDIR(st.st_mode):
            return FileStat(p, "directory")
        if stat.S_ISREG(st.st_mode):
            return FileStat(p, "file", st.st_size)
        if stat.S_ISLNK(st.st_mode):
            return FileStat(p, "link")
        raise self._special(p)

    def _special(self, p: str) -> PathKindError:
        return PathKindError(
            f"{self.display(p)} is a special file (a FIFO, socket or device), not a text file "
            "or directory; the file tools never open it.",
            path=p,
        )

    def _link(self, p: str) -> LinkRefusedError:
        return LinkRefusedError(
            f"{self.display(p)} is a symbolic link, which the file tools never follow (a link "
            "could lead out of the workspace). Use the path the link points to, or remove the "
            "link.",
            path=p,
        )

    def _open_path(self, p: str) -> tuple[int, os.stat_result]:
        """An ``O_PATH`` handle on ``p`` (never a link) and its ``fstat``."""
        fd = self._beneath.open(p, os.O_PATH, shown=self.display(p))
        try:
            return fd, os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise

    # -- queries ------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        """Whether something (a link included) exists at ``path``; a path that could only be
        reached through a link does not exist for the file tools."""
        with self._guarded():
            p = self.normalize(path)
            try:
                self._lstat(p)
            except FilesystemError:
                return False
            return True

    def stat(self, path: str) -> FileStat:
        """The kind (``file``, ``directory`` or ``link``) and size of the entry at ``path``."""
        with self._guarded():
            p = self.normalize(path)
            return self._file_stat(p, self._lstat(p))

    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """Direct children of the directory at ``path``, sorted by name; links are listed as
        links, special files are left out."""
        with self._guarded():
            p = self.normalize(path)
            try:
                fd = self._open_dir(p)
            except PathKindError as exc:
                if "is a file, not a directory" not in str(exc):
                    raise
                raise PathKindError(
                    f"{self.display(p)} is a file, not a directory; use read to see its "
                    "content, or list its parent directory.",
                    path=p,
                ) from None
            out: builtins.list[FileStat] = []
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=_name)
                for entry in entries:
                    if not _is_text(entry.name):
                        continue  # a name that is not UTF-8 cannot be shown or addressed
                    found = self._entry_stat(_join(p, entry.name), entry)
                    if found is not None:
                        out.append(found)
            finally:
                os.close(fd)
            return tuple(out)

    def _entry_stat(self, child: str, entry: os.DirEntry[str]) -> FileStat | None:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return None  # removed while listing
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            return FileStat(child, "directory")
        if stat.S_ISREG(mode):
            return FileStat(child, "file", st.st_size)
        if stat.S_ISLNK(mode):
            return FileStat(child, "link")
        return None

    def _open_dir(self, p: str) -> int:
        """A readable handle on the directory ``p``, with the shared wording for a file."""
        try:
            return self._beneath.open_dir(p, shown=self.display(p))
        except PathKindError:
            st = self._lstat(p)
            if stat.S_ISLNK(st.st_mode):
                raise self._link(p) from None
            if stat.S_ISREG(st.st_mode):
                raise not_a_directory_error(p, self.display(p)) from None
            if not stat.S_ISDIR(st.st_mode):
                raise self._special(p) from None
            raise

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """Lines ``offset`` .. ``offset + limit`` (0-based) of a file, endings included."""
        with self._guarded():
            p = self.normalize(path)
            check_window(offset, limit, p)
            text = self._read(p)
            if offset == 0 and limit is None:
                return ReadWindow(p, text, 0, count_lines(text))
            content, total = line_window(text, offset, limit)
            return ReadWindow(p, content, offset, total)

    def read_text(self, path: str) -> str:
        """The whole text of the file at ``path`` (UTF-8)."""
        with self._guarded():
            return self._read(self.normalize(path))

    def _read(self, p: str) -> str:
        data = self._read_bytes(p)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FilesystemError(
                f"{self.display(p)} is not UTF-8 text (byte {exc.start} is invalid), so the "
                "file tools cannot show it.",
                path=p,
            ) from None

    def _read_bytes(self, p: str) -> bytes:
        if not p:
            raise not_a_file_error(p, self.display(p))
        handle, st = self._open_path(p)
        try:
            if stat.S_ISDIR(st.st_mode):
                raise not_a_file_error(p, self.display(p))
            if stat.S_ISLNK(st.st_mode):  # the portable walk opens a final link with O_PATH
                raise self._link(p)
            if not stat.S_ISREG(st.st_mode):
                raise self._special(p)
            if st.st_size > self.max_file_bytes:
                raise FilesystemLimitError(
                    f"{self.display(p)} is {st.st_size} bytes; the file tools read at most "
                    f"{self.max_file_bytes} bytes per file. Read a smaller file or split it.",
                    path=p,
                )
            fd = _reopen(handle, os.O_RDONLY | os.O_NONBLOCK)
        finally:
            os.close(handle)
        try:
            chunks: builtins.list[bytes] = []
            left = self.max_file_bytes + 1
            while left > 0:
                chunk = os.read(fd, min(left, _CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        if len(data) > self.max_file_bytes:
            raise FilesystemLimitError(
                f"{self.display(p)} grew past {self.max_file_bytes} bytes while being read.",
                path=p,
            )
        return data

    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """Regular files under the directory ``path`` whose path relative to it matches
        ``pattern`` (the dialect of :func:`haversack.filesystem.compile_glob`); normalised
        paths, sorted. Links are not followed and not matched."""
        with self._guarded():
            base = self.normalize(path)
            os.close(self._open_dir(base))
            matcher = compile_glob(pattern, mount_point=self._mount_point)
            cut = len(base) + 1 if base else 0
            start = _join(base, matcher.prefix) if matcher.prefix else base
            found = [rel for rel in self._walk_files(start) if matcher.match(rel[cut:])]
            found.sort()
            return tuple(found)

    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """Lines matching the RE2 ``pattern`` in the UTF-8 text files under ``path`` (or the
        one file ``path``); ``glob`` filters by path relative to ``path``. Binary, special,
        linked and over-limit files are skipped."""
        with self._guarded():
            compiled = compile_grep_pattern(pattern)
            base = self.normalize(path)
            st = self._lstat(base)
            matcher = None
            if glob is not None and glob.strip():
                matcher = compile_glob(glob, mount_point=self._mount_point)
            files: builtins.list[str]
            if not stat.S_ISDIR(st.st_mode):
                kind = self._file_stat(base, st).kind
                if kind == "link":
                    raise self._link(base)
                name = base.rpartition("/")[2]
                files = [base] if matcher is None or matcher.match(name) else []
            else:
                cut = len(base) + 1 if base else 0
                start = (
                    base if matcher is None or not matcher.prefix else _join(base, matcher.prefix)
                )
                files = [
                    rel
                    for rel in self._walk_files(start)
                    if matcher is None or matcher.match(rel[cut:])
                ]
                files.sort()
            return grep_texts(compiled, self._texts(files), max_matches=max_matches)

    def _texts(self, files: builtins.list[str]) -> Iterator[tuple[str, str]]:
        for rel in files:
            try:
                yield rel, self._read_bytes(rel).decode("utf-8")
            except (FilesystemError, UnicodeDecodeError, OSError):
                continue  # binary, too large, replaced or gone: not searchable text

    def _walk(self, start: str) -> Iterator[tuple[str, str]]:
        """``(path, kind)`` of every entry strictly below the directory ``start``, parents
        before children; ``kind`` is ``"dir"``, ``"file"`` (regular) or ``"other"`` (a link or
        a special file, never entered or opened).

        Iterative and bounded: each directory is reopened beneath the root (never through a
        link), nothing deeper than the deepest nameable path is visited, and more than
        ``max_walk_entries`` entries is a :class:`FilesystemLimitError`.
        """
        seen = 0
        stack = [start]
        while stack:
            rel = stack.pop()
            try:
                fd = self._beneath.open_dir(rel)
            except FilesystemError:
                continue  # replaced by a file or a link, or gone, since it was listed
            try:
                with os.scandir(fd) as it:
                    entries = builtins.list(it)
            except OSError:
                continue
            finally:
                os.close(fd)
            seen += len(entries)
            if seen > self.max_walk_entries:
                raise FilesystemLimitError(
                    f"{self.display(start)} holds more than {self.max_walk_entries} entries; "
                    "give a narrower path or pattern.",
                    path=start,
                )
            depth = rel.count("/") + 2 if rel else 1
            for entry in entries:
                if not _is_text(entry.name):
                    continue  # a name that is not UTF-8 cannot be shown or addressed
                child = _join(rel, entry.name)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        yield child, "dir"
                        if depth < MAX_PATH_DEPTH:
                            stack.append(child)
                    elif entry.is_file(follow_symlinks=False):
                        yield child, "file"
                    else:
                        yield child, "other"
                except OSError:
                    continue

    def _walk_files(self, start: str) -> Iterator[str]:
        """Every regular file at or below ``start`` (nothing when ``start`` is a link,
        missing or special)."""
        try:
            st = self._lstat(start)
        except FilesystemError:
            return
        if stat.S_ISREG(st.st_mode):
            yield start
        elif stat.S_ISDIR(st.st_mode):
            yield from (rel for rel, kind in self._walk(start) if kind == "file")

    # -- changes ------------------------------------------------------------------------

    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """Write ``content`` as UTF-8 bytes (no newline translation); return bytes written.

        ``create`` refuses an existing path, ``overwrite`` replaces or creates, ``append``
        extends or creates; ``parents`` creates missing parent directories.
        """
        with self._guarded():
            return self._write(self.normalize(path), content, mode, parents)

    def _write(self, p: str, content: str, mode: WriteMode, parents: bool) -> int:
        check_write_mode(mode, p)
        data = encode_text(content, path=p)
        if not p:
            raise root_write_error()
        check_new_name(p, self.display(p))
        self._refuse_protected(p)
        head, _, name = p.rpartition("/")
        with self._changing(_lineage(p)):
            parent = self._ensure_dir(head, parents=parents, target=p)
            try:
                self._write_at(parent, p, name, mode, data)
            finally:
                os.close(parent)
        return len(data)

    def _write_at(self, parent: int, p: str, name: str, mode: WriteMode, data: bytes) -> None:
        fd, created, tmp = self._open_for_write(parent, p, name, mode, len(data))
        try:
            try:
                if created and self._chown:
                    assert self.owner is not None
                    os.fchown(fd, *self.owner)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            if tmp is not None:
                os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=parent)
            raise

    def _replacement(
        self, parent: int, handle: int, now: os.stat_result, append: bool
    ) -> tuple[int, bool, str]:
        """A new file beside the existing one (same mode and owner, its content first when
        appending), to be renamed over it: the old inode, and every other name it has, stays
        as it was."""
        tmp = f".haversack-{os.getpid()}-{next(_TEMP_NAMES)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o600, dir_fd=parent)
        try:
            os.fchmod(fd, stat.S_IMODE(now.st_mode))
            if os.geteuid() == 0:
                os.fchown(fd, now.st_uid, now.st_gid)
            if append and now.st_size:
                src = _reopen(handle, os.O_RDONLY | os.O_NONBLOCK)
                try:
                    copied = _copy(src, fd, now.st_size, 0, 0)
                finally:
                    os.close(src)
                os.lseek(fd, copied, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
        return fd, False, tmp

    def _open_for_write(
        self, parent: int, p: str, name: str, mode: WriteMode, size: int
    ) -> tuple[int, bool, str | None]:
        """A writable descriptor on the regular file ``name`` in ``parent`` (positioned for
        ``mode``), whether it was created, and the temporary name to rename over ``name``
        when the file is replaced rather than written in place; every refusal is decided
        before a byte is written or truncated."""
        shown = self.display(p)
        for _ in range(3):  # a name appearing or vanishing between the calls: look again
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                if size > self.max_file_bytes:
                    raise file_size_error(p, shown, size, self.max_file_bytes) from None
                try:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                    return os.open(name, flags, 0o644, dir_fd=parent), True, None
                except FileExistsError:
                    continue
            if stat.S_ISDIR(st.st_mode):
                raise directory_write_error(p, shown, self.display(_join(p, "file.txt")))
            if stat.S_ISLNK(st.st_mode):
                raise self._link(p)
            if not stat.S_ISREG(st.st_mode):
                raise self._special(p)
            if mode == "create":
                raise exists_error(p, shown)
            try:
                handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise self._link(p) from None
                raise
            try:
                now = os.fstat(handle)
                if stat.S_ISLNK(now.st_mode):  # swapped in since the stat: O_PATH opens it
                    raise self._link(p)
                if not stat.S_ISREG(now.st_mode):
                    raise self._special(p)
                existing = now.st_size if mode == "append" else 0
                if existing + size > self.max_file_bytes:
                    raise file_size_error(p, shown, existing + size, self.max_file_bytes)
                if self._journal is not None or now.st_nlink > 1:
                    return self._replacement(parent, handle, now, mode == "append")
                fd = _reopen(handle, os.O_WRONLY | os.O_NONBLOCK)
            finally:
                os.close(handle)
            if mode == "append":
                os.lseek(fd, 0, os.SEEK_END)
            else:
                os.ftruncate(fd, 0)
            return fd, False, None
        raise FilesystemError(f"{shown} kept changing while being written; try again.", path=p)

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """Replace the text ``old`` by ``new`` in a file; return the number of replacements.

        Without ``replace_all`` ``old`` must occur exactly once.
        """
        with self._guarded():
            p = self.normalize(path)
            encode_text(old, what="text to replace", path=p)
            encode_text(new, what="replacement text", path=p)
            check_old_text(old, p)
            # replace_exact checks the result's size arithmetically before building it.
            updated, count = replace_exact(
                self._read(p),
                old,
                new,
                replace_all=replace_all,
                where=self.display(p),
                path=p,
                max_bytes=self.max_file_bytes,
            )
            self._write(p, updated, "overwrite", True)
            return count

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None:
        """Create a directory (and, with ``parents``, its missing parents)."""
        with self._guarded():
            p = self.normalize(path)
            if not p:
                if exist_ok:
                    return
                raise PathExistsError("The workspace root already exists.", path=p)
            check_new_name(p, self.display(p))
            head, _, name = p.rpartition("/")
            with self._changing(_lineage(p)):
                parent = self._ensure_dir(head, parents=parents, target=p)
                try:
                    os.close(self._make_child(parent, name, p, exist_ok=exist_ok))
                finally:
                    os.close(parent)

    def _make_child(
        self, parent: int, name: str, done: str, *, exist_ok: bool, target: str | None = None
    ) -> int:
        """Create (or, with ``exist_ok``, reuse) the directory ``name`` in ``parent``; return
        an ``O_PATH`` handle on it."""
        created = False
        if self.protected is not None and self.protected.match(done) is not None:
            try:
                os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                self._refuse_protected(done)
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
            created = True
        except FileExistsError:
            if not exist_ok:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    raise PathExistsError(
                        f"The directory {self.display(done)} already exists.", path=done
                    ) from None
        try:
            child = os.open(name, _DIR_PATH, dir_fd=parent)
        except OSError as exc:
            raise self._not_a_directory(parent, name, done, exc, target) from None
        if created and self._chown:
            assert self.owner is not None
            # By name, relative to the parent handle and never following a link: fchown
            # does not work on an O_PATH handle.
            os.chown(name, *self.owner, dir_fd=parent, follow_symlinks=False)
        return child

    def _not_a_directory(
        self, parent: int, name: str, done: str, exc: OSError, target: str | None = None
    ) -> FilesystemError:
        """Why ``name`` in ``parent`` (the path ``done`` on the way to ``target``) could not be
        opened as a directory."""
        target = done if target is None else target
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return missing_error(done, self.display(done))
        if stat.S_ISLNK(st.st_mode):
            return self._link(done)
        if stat.S_ISREG(st.st_mode):
            if done == target:
                return PathKindError(
                    f"{self.display(done)} is a file, so a directory cannot be created there.",
                    path=done,
                )
            return PathKindError(
                f"{self.display(done)} is a file, so {self.display(target)} cannot be created "
                "inside it. Choose another path, or delete the file first.",
                path=target,
            )
        if not stat.S_ISDIR(st.st_mode):
            return self._special(done)
        return FilesystemError(f"Cannot open {self.display(done)}: {exc.strerror}.", path=done)

    def _ensure_dir(self, p: str, *, parents: bool, target: str) -> int:
        """An ``O_PATH`` handle on the directory ``p``, creating it and its missing ancestors
        when ``parents``; every step is taken relative to the previous handle."""
        fd = os.open(".", _DIR_PATH & ~os.O_NOFOLLOW, dir_fd=self._beneath.fd)
        if not p:
            return fd
        done = ""
        try:
            for segment in p.split("/"):
                done = _join(done, segment)
                try:
                    child = os.open(segment, _DIR_PATH, dir_fd=fd)
                except FileNotFoundError:
                    if not parents:
                        raise PathNotFoundError(
                            f"The parent directory {self.display(p)} does not exist; create "
                            "it with mkdir first, or pass parents=True.",
                            path=target,
                        ) from None
                    child = self._make_child(fd, segment, done, exist_ok=True, target=target)
                except OSError as exc:
                    raise self._not_a_directory(fd, segment, done, exc, target) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """Remove a file (or a symbolic link itself, or a special file), an empty directory,
        or with ``recursive`` a whole tree; return every removed path, sorted (paths deeper
        than the deepest nameable path are removed but not listed)."""
        with self._guarded():
            p = self.normalize(path)
            if not p:
                raise InvalidPathError(
                    "The workspace root cannot be deleted; delete the entries inside it instead.",
                    path=p,
                )
            with self._beneath.parent(p, shown=self.display(p)) as (parent, name):
                try:
                    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
                except FileNotFoundError:
                    raise missing_error(p, self.display(p)) from None
                if not stat.S_ISDIR(st.st_mode):
                    self._refuse_protected(p)
                    with self._changing([p]):
                        os.unlink(name, dir_fd=parent)
                    return (p,)
                try:
                    listing = os.open(name, _DIR_READ, dir_fd=parent)
                except OSError as exc:
                    raise self._not_a_directory(parent, name, p, exc) from None
                try:
                    count = len(os.listdir(listing))
                finally:
                    os.close(listing)
                if count and not recursive:
                    raise PathKindError(
                        f"{self.display(p)} is a directory holding {count} "
                        f"{'entry' if count == 1 else 'entries'}; pass recursive=True to delete "
                        "it and everything in it.",
                        path=p,
                    )
                removed = [p, *(rel for rel, _ in self._walk(p))]
                for rel in removed:
                    self._refuse_protected(rel)
                with self._changing(removed):
                    try:
                        child = os.open(name, _DIR_READ, dir_fd=parent)
                    except OSError as exc:
                        raise self._not_a_directory(parent, name, p, exc) from None
                    _empty(child)  # closes ``child``; never follows a link, any depth
                    os.rmdir(name, dir_fd=parent)
            removed.sort()
            return tuple(removed)

    def __repr__(self) -> str:
        return f"DirectoryFilesystem({self._root!r})"


def _is_text(name: str) -> bool:
    """Whether a name read from the disk is valid UTF-8 (``os`` decodes other bytes to lone
    surrogates, which no result, JSON or protocol message can carry: one such name in a
    listing made the MCP server fail to encode its reply and exit)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name
