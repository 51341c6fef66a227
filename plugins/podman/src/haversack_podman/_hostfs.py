"""``HostFilesystem``: the sandbox's workspace directory as a ``haversack.Filesystem``.

The file tools and the shell work on the same bytes: this class reads and writes the host
directory that is bind-mounted at ``/workspace`` in the container. A shell command can plant
symbolic links, FIFOs or binary files there, so every path is normalised, resolved
(``realpath``) and checked to stay inside the workspace before it is used, final components
are opened with ``O_NOFOLLOW`` (and ``O_NONBLOCK``, so a FIFO never blocks a read), and only
regular files are read or written. Files and directories the host creates are given to the
container user, or shell commands could not change them. Snapshots are exact and delegate to
:class:`WorkspaceSnapshotter`.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Concatenate, Final, ParamSpec, TypeVar

from haversack import FileStat, GrepResult, ReadWindow, normalize_path
from haversack._filesystem import WriteMode
from haversack._glob import compile_glob
from haversack._paths import WORKSPACE_MOUNT
from haversack.errors import (
    FilesystemError,
    FilesystemLimitError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
)
from haversack_vfs import (
    DEFAULT_MAX_FILE_BYTES,  # the file tools' limit here is the VFS's (16 MiB)
    InvalidArgumentError,
    check_old_text,
    check_window,
    compile_grep_pattern,
    count_lines,
    encode_text,
    grep_texts,
    line_window,
    replace_exact,
)

from ._errors import WorkspaceEscapeError
from ._snapshot import WorkspaceSnapshotter

__all__ = ["DEFAULT_MAX_FILE_BYTES", "HostFilesystem"]


_WRITE_MODES: Final = ("create", "overwrite", "append")
_EDGE_SPACE: Final = re.compile(r"(?:^|/)\s|\s(?:/|$)")
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS: Final = {
    "create": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "overwrite": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "append": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def _guarded(
    method: Callable[Concatenate[HostFilesystem, _P], _R],
) -> Callable[Concatenate[HostFilesystem, _P], _R]:
    """Run a public method inside the filesystem's ``guard`` (the sandbox quiesced)."""

    @functools.wraps(method)
    def run(self: HostFilesystem, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._guard():
            return method(self, *args, **kwargs)

    return run


class HostFilesystem:
    """A :class:`haversack.Filesystem` over the host directory ``root`` (a sandbox workspace).

    ``uid``/``gid`` own what the host creates (applied only when running as root).
    ``max_file_bytes`` bounds a file read or written through this class (the shell is bound
    only by the container's limits). ``snapshot``/``restore`` are exact (content, modes,
    owners, symbolic links) and cheap when little changed; ``close`` deletes the snapshot
    storage.
    """

    def __init__(
        self,
        root: Path | str,
        *,
        uid: int = 1000,
        gid: int = 1000,
        mount_point: str = WORKSPACE_MOUNT,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        snapshot_storage: Path | None = None,
        guard: Callable[[], contextlib.AbstractContextManager[object]] | None = None,
    ) -> None:
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int):
            raise ValueError(f"max_file_bytes must be an integer, got {max_file_bytes!r}.")
        if max_file_bytes < 1:
            raise ValueError(f"max_file_bytes must be positive, got {max_file_bytes}.")
        self._root = os.path.realpath(root)
        if not os.path.isdir(self._root):
            raise PathNotFoundError(f"The workspace directory {root} does not exist.")
        self.uid = uid
        self.gid = gid
        self.max_file_bytes = max_file_bytes
        self._mount_point = "/" + mount_point.strip("/") if mount_point.strip("/") else "/"
        self._snapshotter = WorkspaceSnapshotter(Path(self._root), storage_parent=snapshot_storage)
        self._chown = os.geteuid() == 0
        self._guard: Callable[[], contextlib.AbstractContextManager[object]] = (
            guard if guard is not None else contextlib.nullcontext
        )

    # -- identity and paths -------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The host directory (resolved) holding the workspace."""
        return Path(self._root)

    @property
    def mount_point(self) -> str:
        """Where the workspace appears to the model and in the container (``/workspace``)."""
        return self._mount_point

    @property
    def snapshot_storage(self) -> Path:
        """The private directory holding snapshot data (deleted by :meth:`close`)."""
        return self._snapshotter.storage

    def normalize(self, path: str) -> str:
        """Normalise ``path`` with :func:`haversack.normalize_path` and this mount point."""
        return normalize_path(path, mount_point=self._mount_point)

    def display(self, path: str) -> str:
        """The absolute spelling of a normalised path, as the model sees it."""
        return f"{self._mount_point.rstrip('/')}/{path}" if path else self._mount_point

    def _inside(self, real: str) -> bool:
        return real == self._root or real.startswith(self._root + os.sep)

    def _real(self, p: str) -> str:
        """The resolved host path of normalised ``p``; refuses anything leaving the root."""
        host = os.path.join(self._root, p) if p else self._root
        real = os.path.realpath(host)
        if not self._inside(real):
            raise WorkspaceEscapeError(
                f"{self.display(p)} goes through a symbolic link that points outside the "
                "workspace, so the file tools refuse it. Remove or replace the link (for "
                "example with `rm` in the shell).",
                path=p,
            )
        return real

    # -- snapshots ----------------------------------------------------------------------

    @_guarded
    def snapshot(self) -> object:
        """Record the workspace exactly (only changed files are copied)."""
        return self._snapshotter.snapshot()

    @_guarded
    def restore(self, snapshot: object) -> None:
        """Put the workspace back exactly as ``snapshot`` recorded it."""
        self._snapshotter.restore(snapshot)

    @_guarded
    def close(self) -> None:
        """Delete the snapshot storage (idempotent); the workspace belongs to the sandbox."""
        self._snapshotter.close()

    # -- queries ------------------------------------------------------------------------

    @_guarded
    def exists(self, path: str) -> bool:
        """Whether something exists at ``path`` inside the workspace."""
        p = self.normalize(path)
        try:
            return os.path.lexists(self._real(p))
        except WorkspaceEscapeError:
            return False

    @_guarded
    def stat(self, path: str) -> FileStat:
        """The kind and size (bytes) of the entry at ``path``."""
        p = self.normalize(path)
        return self._stat(p, self._stat_result(p))

    def _stat_result(self, p: str) -> os.stat_result:
        real = self._real(p)
        try:
            return os.stat(real, follow_symlinks=False)
        except FileNotFoundError:
            raise self._missing(p) from None
        except NotADirectoryError:
            raise self._missing(p) from None

    def _stat(self, p: str, st: os.stat_result) -> FileStat:
        if stat.S_ISDIR(st.st_mode):
            return FileStat(p, "directory")
        if stat.S_ISREG(st.st_mode):
            return FileStat(p, "file", st.st_size)
        raise PathKindError(
            f"{self.display(p)} is a special file (a FIFO, socket or device), not a text file "
            "or directory; the file tools cannot use it.",
            path=p,
        )

    def _missing(self, p: str) -> PathNotFoundError:
        return PathNotFoundError(
            f"Nothing exists at {self.display(p)}. Use list or glob to see which files and "
            "directories exist.",
            path=p,
        )

    @_guarded
    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """Direct children of the directory at ``path``, sorted by name. Symbolic links that
        leave the workspace or dangle, and special files, are not listed."""
        p = self.normalize(path)
        real = self._directory(p)
        out: builtins.list[FileStat] = []
        with os.scandir(real) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            child = _join(p, entry.name)
            found = self._entry_stat(child, entry)
            if found is not None:
                out.append(found)
        return tuple(out)

    def _entry_stat(self, child: str, entry: os.DirEntry[str]) -> FileStat | None:
        try:
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if not self._inside(target):
                    return None
                st = os.stat(target)
            else:
                st = entry.stat(follow_symlinks=False)
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            return FileStat(child, "directory")
        if stat.S_ISREG(st.st_mode):
            return FileStat(child, "file", st.st_size)
        return None

    def _directory(self, p: str) -> str:
        real = self._real(p)
        st = self._stat_result(p)
        if not stat.S_ISDIR(st.st_mode):
            raise PathKindError(
                f"{self.display(p)} is a file, not a directory; give a directory path.", path=p
            )
        return real

    @_guarded
    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """Lines ``offset`` .. ``offset + limit`` (0-based) of a file, endings included."""
        p = self.normalize(path)
        check_window(offset, limit, p)
        text = self._read(p)
        if offset == 0 and limit is None:
            return ReadWindow(p, text, 0, count_lines(text))
        content, total = line_window(text, offset, limit)
        return ReadWindow(p, content, offset, total)

    @_guarded
    def read_text(self, path: str) -> str:
        """The whole text of the file at ``path`` (UTF-8)."""
        return self._read(self.normalize(path))

    def _read(self, p: str) -> str:
        data = self._read_bytes(p, self._real(p))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FilesystemError(
                f"{self.display(p)} is not UTF-8 text (byte {exc.start} is invalid), so the "
                "file tools cannot show it; inspect it in the shell (e.g. `od -c | head`).",
                path=p,
            ) from None

    def _read_bytes(self, p: str, real: str) -> bytes:
        try:
            fd = os.open(real, _READ_FLAGS)
        except FileNotFoundError:
            raise self._missing(p) from None
        except OSError as exc:
            raise FilesystemError(
                f"Cannot open {self.display(p)}: {exc.strerror}.", path=p
            ) from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise PathKindError(
                    f"{self.display(p)} is a directory, not a file; use list to see its entries.",
                    path=p,
                )
            if not stat.S_ISREG(st.st_mode):
                self._stat(p, st)  # raises: special file
            if st.st_size > self.max_file_bytes:
                raise FilesystemLimitError(
                    f"{self.display(p)} is {st.st_size} bytes; the file tools read at most "
                    f"{self.max_file_bytes} bytes per file. Look at parts of it in the shell "
                    "(head, tail, sed -n).",
                    path=p,
                )
            chunks: builtins.list[bytes] = []
            left = self.max_file_bytes + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
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

    @_guarded
    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """Files under the directory ``path`` whose path relative to it matches ``pattern``
        (the dialect of :func:`haversack._glob.compile_glob`); normalised paths, sorted."""
        base = self.normalize(path)
        self._directory(base)
        matcher = compile_glob(pattern, mount_point=self._mount_point)
        cut = len(base) + 1 if base else 0
        start = _join(base, matcher.prefix) if matcher.prefix else base
        found = [rel for rel, _ in self._walk_files(start) if matcher.match(rel[cut:])]
        found.sort()
        return tuple(found)

    @_guarded
    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """Lines matching the RE2 ``pattern`` in the UTF-8 text files under ``path`` (or the
        one file ``path``); ``glob`` filters by path relative to ``path``. Binary and
        over-limit files are skipped."""
        compiled = compile_grep_pattern(pattern)
        base = self.normalize(path)
        st = self._stat_result(base)
        matcher = None
        if glob is not None and glob.strip():
            matcher = compile_glob(glob, mount_point=self._mount_point)
        files: builtins.list[tuple[str, str]]
        if not stat.S_ISDIR(st.st_mode):
            self._stat(base, st)
            name = base.rpartition("/")[2]
            files = [(base, self._real(base))] if matcher is None or matcher.match(name) else []
        else:
            cut = len(base) + 1 if base else 0
            start = base if matcher is None or not matcher.prefix else _join(base, matcher.prefix)
            files = [
                item
                for item in self._walk_files(start)
                if matcher is None or matcher.match(item[0][cut:])
            ]
            files.sort()
        return grep_texts(compiled, self._texts(files), max_matches=max_matches)

    def _texts(self, files: builtins.list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        for rel, real in files:
            try:
                yield rel, self._read_bytes(rel, real).decode("utf-8")
            except (FilesystemError, UnicodeDecodeError):
                continue  # binary, too large or gone: not searchable text

    def _walk_files(self, start: str) -> Iterator[tuple[str, str]]:
        """``(normalised path, resolved host path)`` of every regular file at or below
        ``start``; directory links are not followed, file links only when they stay inside."""
        try:
            real = self._real(start)
            st = os.stat(real)
        except (OSError, WorkspaceEscapeError):
            return
        if stat.S_ISREG(st.st_mode):
            yield start, real
            return
        if not stat.S_ISDIR(st.st_mode):
            return
        stack = [(start, real)]
        while stack:
            rel, host = stack.pop()
            try:
                with os.scandir(host) as it:
                    entries = builtins.list(it)
            except OSError:
                continue
            for entry in entries:
                child = _join(rel, entry.name)
                try:
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if self._inside(target) and os.path.isfile(target):
                            yield child, target
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((child, entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        yield child, entry.path
                except OSError:
                    continue

    # -- changes ------------------------------------------------------------------------

    @_guarded
    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """Write ``content`` as UTF-8 bytes (no newline translation); return bytes written.

        ``create`` refuses an existing path, ``overwrite`` replaces or creates, ``append``
        extends or creates; ``parents`` creates missing parent directories.
        """
        p = self.normalize(path)
        if mode not in _WRITE_MODES:
            raise InvalidArgumentError(
                f"mode must be one of 'create', 'overwrite' or 'append', got {mode!r}.", path=p
            )
        data = encode_text(content, path=p)
        if not p:
            raise PathKindError(
                "The workspace root is a directory; write to a file path such as 'notes.txt'.",
                path=p,
            )
        self._check_name(p)
        parent = p.rpartition("/")[0]
        self._ensure_dir(parent, parents=parents)
        real = self._real(p)
        existing = 0
        try:
            st = os.stat(real, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise PathKindError(
                    f"{self.display(p)} is a directory; write to a file inside it, such as "
                    f"{self.display(_join(p, 'file.txt'))}.",
                    path=p,
                )
            self._stat(p, st)  # special files are refused
            if mode == "create":
                raise PathExistsError(
                    f"{self.display(p)} already exists. Use edit to change part of it, or "
                    "write with mode 'overwrite' to replace it or 'append' to add to its end.",
                    path=p,
                )
            existing = st.st_size if mode == "append" else 0
        if existing + len(data) > self.max_file_bytes:
            raise FilesystemLimitError(
                f"{self.display(p)} would be {existing + len(data)} bytes; the limit for one "
                f"file is {self.max_file_bytes} bytes. Split the content into smaller files.",
                path=p,
            )
        try:
            fd = os.open(real, _WRITE_FLAGS[mode] | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            raise PathExistsError(f"{self.display(p)} already exists.", path=p) from None
        except OSError as exc:
            raise FilesystemError(
                f"Cannot write {self.display(p)}: {exc.strerror}.", path=p
            ) from None
        try:
            if st is None and self._chown:
                os.fchown(fd, self.uid, self.gid)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)
        return len(data)

    @_guarded
    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """Replace the text ``old`` by ``new`` in a file; return the number of replacements.

        Without ``replace_all`` ``old`` must occur exactly once.
        """
        p = self.normalize(path)
        encode_text(old, what="text to replace", path=p)
        encode_text(new, what="replacement text", path=p)
        check_old_text(old, p)
        updated, count = replace_exact(
            self._read(p), old, new, replace_all=replace_all, where=self.display(p), path=p
        )
        self.write(p, updated, mode="overwrite")
        return count

    @_guarded
    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None:
        """Create a directory (and, with ``parents``, its missing parents)."""
        p = self.normalize(path)
        if not p:
            if exist_ok:
                return
            raise PathExistsError("The workspace root already exists.", path=p)
        self._check_name(p)
        real = self._real(p)
        try:
            st = os.stat(real, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                raise PathKindError(
                    f"{self.display(p)} is a file, so a directory cannot be created there.",
                    path=p,
                )
            if exist_ok:
                return
            raise PathExistsError(f"The directory {self.display(p)} already exists.", path=p)
        self._ensure_dir(p, parents=parents, last_must_be_new=True)

    def _ensure_dir(self, p: str, *, parents: bool, last_must_be_new: bool = False) -> None:
        """Make sure the directory ``p`` exists (creating it and, with ``parents``, its
        missing ancestors), every step inside the workspace."""
        if not p:
            return
        segments = p.split("/")
        done = ""
        for index, segment in enumerate(segments):
            done = _join(done, segment)
            real = self._real(done)
            try:
                st = os.stat(real, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            last = index == len(segments) - 1
            if st is None:
                if not parents and not (last and last_must_be_new):
                    raise PathNotFoundError(
                        f"The directory {self.display(done)} does not exist; create it first "
                        "or allow parent directories to be created.",
                        path=done,
                    )
                os.mkdir(real, 0o755)
                if self._chown:
                    os.chown(real, self.uid, self.gid, follow_symlinks=False)
            elif not stat.S_ISDIR(st.st_mode):
                raise PathKindError(
                    f"{self.display(done)} is a file, so it cannot hold {self.display(p)}.",
                    path=done,
                )

    @_guarded
    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """Remove a file (or a symbolic link itself), an empty directory, or with
        ``recursive`` a whole tree; return every removed path, sorted."""
        p = self.normalize(path)
        if not p:
            raise InvalidPathError(
                "The workspace root cannot be deleted; delete the entries inside it instead.",
                path=p,
            )
        parent, _, name = p.rpartition("/")
        host = os.path.join(self._real(parent), name)
        try:
            st = os.lstat(host)
        except (FileNotFoundError, NotADirectoryError):
            raise self._missing(p) from None
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(host)
            return (p,)
        removed = [p]
        for root, dirs, files in os.walk(host):
            rel = os.path.relpath(root, host)
            base = p if rel == "." else _join(p, rel.replace(os.sep, "/"))
            removed.extend(_join(base, n) for n in (*dirs, *files))
        if len(removed) > 1 and not recursive:
            count = len(os.listdir(host))
            raise PathKindError(
                f"{self.display(p)} is a directory holding {count} "
                f"{'entry' if count == 1 else 'entries'}; pass recursive=True to delete it and "
                "everything in it.",
                path=p,
            )
        shutil.rmtree(host)
        removed.sort()
        return tuple(removed)

    def _check_name(self, p: str) -> None:
        match = _EDGE_SPACE.search(p)
        if match is not None:
            raise InvalidPathError(
                f"A name in {self.display(p)} starts or ends with whitespace, so it could not "
                "be named reliably; choose a name without it.",
                path=p,
            )

    def __repr__(self) -> str:
        return f"HostFilesystem({self._root!r})"
