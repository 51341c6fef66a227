"""Host mounts: copy configured host files into a workspace once, never writing the host."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from haversack import Filesystem
from haversack.errors import (
    FilesystemLimitError,
    InvalidPathError,
    PackConfigError,
    PathExistsError,
)
from haversack.filesystem import GlobMatcher, compile_glob

__all__ = [
    "DEFAULT_MOUNT_MAX_BYTES",
    "HostMount",
    "MountReport",
    "MountedTree",
    "SkippedFile",
    "load_host_mounts",
]

#: Default byte budget of one mount (UTF-8 bytes of the text files loaded): 32 MiB.
DEFAULT_MOUNT_MAX_BYTES: Final = 32 * 1024 * 1024
_PEEK_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class HostMount:
    """A host file or directory to copy into the workspace.

    ``host_path`` is absolute, or relative to the first allowed root that holds it.
    ``mount_path`` is the workspace directory receiving the contents (``""`` = the root;
    a single file lands inside it under its own name). ``include`` / ``exclude`` are
    :func:`haversack.filesystem.compile_glob` patterns matched against paths relative to
    ``host_path`` (no ``include`` means everything; ``exclude`` wins). ``max_bytes`` caps the
    UTF-8 bytes loaded by this mount.
    """

    host_path: str = field(
        metadata={
            "description": "Host file or directory to copy in: absolute, or relative to the "
            "first allowed host root that holds it."
        }
    )
    mount_path: str = field(
        default="",
        metadata={
            "description": "Workspace directory receiving the contents ('' is the root, "
            "'/workspace/x' and 'x' are the same)."
        },
    )
    include: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Glob patterns (relative to host_path) of files to load; empty "
            "loads every file."
        },
    )
    exclude: tuple[str, ...] = field(
        default=(),
        metadata={"description": "Glob patterns of files to leave out; exclude wins over include."},
    )
    max_bytes: int = field(
        default=DEFAULT_MOUNT_MAX_BYTES,
        metadata={"description": "Most UTF-8 bytes this mount may load; more is an error."},
    )


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A host file that was not loaded, with why (``host_path`` is relative to the mount)."""

    host_path: str
    reason: str


@dataclass(frozen=True, slots=True)
class MountedTree:
    """What one mount loaded: resolved host path, workspace target, files and bytes.

    ``loaded`` holds workspace paths and ``skipped`` host-relative paths, both sorted.
    """

    mount: HostMount
    host_root: str
    mount_path: str
    loaded: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    bytes_loaded: int


@dataclass(frozen=True, slots=True)
class MountReport:
    """The outcome of :func:`load_host_mounts`, one :class:`MountedTree` per mount."""

    mounts: tuple[MountedTree, ...] = field(default=())

    @property
    def loaded(self) -> tuple[str, ...]:
        """Every workspace path loaded, in mount order."""
        return tuple(path for tree in self.mounts for path in tree.loaded)

    @property
    def skipped(self) -> tuple[SkippedFile, ...]:
        """Every skipped file, in mount order."""
        return tuple(item for tree in self.mounts for item in tree.skipped)


def load_host_mounts(
    fs: Filesystem, mounts: Sequence[HostMount], *, allowed_roots: Sequence[str | os.PathLike[str]]
) -> MountReport:
    """Copy each mount's text files into ``fs`` and report what was loaded and skipped.

    Host paths must resolve (symlinks included) inside one of ``allowed_roots``; a symlink
    whose target leaves that root is skipped and reported, never followed. Files that are
    not UTF-8 text are skipped and reported. The host is only read. All or nothing: if a
    mount fails (bad configuration, budget exceeded, a workspace limit), ``fs`` is restored
    to how it was and the error is raised.

    Raises :class:`~haversack.errors.PackConfigError` for a mount outside the allowed roots,
    missing, or clashing with another mount, and
    :class:`~haversack.errors.FilesystemLimitError` when a mount exceeds its byte budget.
    """
    if not mounts:
        return MountReport()
    roots = _resolve_roots(allowed_roots)
    before = fs.snapshot()
    try:
        return MountReport(tuple(_load_one(fs, mount, roots) for mount in mounts))
    except BaseException:
        fs.restore(before)
        raise


def _resolve_roots(allowed_roots: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    if not allowed_roots:
        raise PackConfigError(
            "Host mounts are configured but no allowed host roots are; add the directories "
            "mounts may read from to allowed_host_roots."
        )
    roots = []
    for root in allowed_roots:
        resolved = os.path.realpath(os.fspath(root))
        if not os.path.isdir(resolved):
            raise PackConfigError(
                f"Allowed host root {os.fspath(root)!r} is not an existing directory."
            )
        roots.append(resolved)
    return tuple(roots)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _locate(mount: HostMount, roots: tuple[str, ...]) -> tuple[str, str]:
    """The resolved host path of ``mount`` and the allowed root holding it."""
    text = mount.host_path.strip()
    if not text:
        raise PackConfigError("A host mount's host_path must not be empty.")
    candidates = [text] if os.path.isabs(text) else [os.path.join(root, text) for root in roots]
    for candidate in candidates:
        resolved = os.path.realpath(candidate)
        for root in roots:
            if _within(resolved, root) and os.path.exists(resolved):
                return resolved, root
    raise PackConfigError(
        f"Host mount {mount.host_path!r} is missing or resolves outside the allowed host roots "
        f"({', '.join(roots)}); mount a path inside one of them."
    )


#: Most entries a mount preview names, and most it counts before saying "more".
PREVIEW_ENTRIES: Final = 20
_PREVIEW_SCAN: Final = 10_000


def mount_preview(mount: HostMount, allowed_roots: Sequence[str | os.PathLike[str]]) -> str:
    """What the mount holds at its top level, for the section's text: up to
    :data:`PREVIEW_ENTRIES` names (directories end in ``/``), ``<empty>``, or why it cannot
    be read. Bounded: at most 10,000 entries are looked at, whatever the directory holds."""
    try:
        real, _ = _locate(mount, _resolve_roots(allowed_roots))
    except PackConfigError:
        return "<not found>"
    if not os.path.isdir(real):
        return _shown(os.path.basename(real))
    excluded = _matchers(mount.exclude)
    names: list[str] = []
    more = False
    try:
        with os.scandir(real) as entries:
            for entry in entries:
                if len(names) >= _PREVIEW_SCAN:
                    more = True
                    break
                if any(m.match(entry.name) for m in excluded):
                    continue
                names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    except OSError:
        return "<unreadable>"
    if not names:
        return "<empty>"
    names.sort()
    shown = ", ".join(_shown(n) for n in names[:PREVIEW_ENTRIES])
    rest = len(names) - PREVIEW_ENTRIES
    if rest > 0 or more:
        shown += f" … (+{rest}{'+' if more else ''} more)"
    return shown


def _shown(name: str) -> str:
    """A file name as inline code, with anything that could break the text escaped."""
    text = name.encode("utf-8", "backslashreplace").decode("utf-8")
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    return "`" + text.replace("`", "'") + "`"


def _matchers(patterns: tuple[str, ...]) -> tuple[GlobMatcher, ...]:
    return tuple(compile_glob(p) for p in patterns if p.strip())


def _load_one(fs: Filesystem, mount: HostMount, roots: tuple[str, ...]) -> MountedTree:
    if isinstance(mount.max_bytes, bool) or not isinstance(mount.max_bytes, int):
        raise PackConfigError(f"max_bytes of mount {mount.host_path!r} must be an integer.")
    host, root = _locate(mount, roots)
    target = fs.normalize(mount.mount_path)
    include = _matchers(mount.include)
    exclude = _matchers(mount.exclude)
    # ``dir/**`` excludes everything below ``dir``: skip walking it at all.
    prune = _matchers(tuple(p.strip()[:-3] for p in mount.exclude if p.strip().endswith("/**")))
    loaded: list[str] = []
    skipped: list[SkippedFile] = []
    used = 0
    if os.path.isdir(host):
        entries: Iterator[tuple[str, str | None]] = _walk(host, root, prune)
    else:
        entries = iter([(os.path.basename(host), host)])
    for rel, real in entries:
        if real is None:
            skipped.append(SkippedFile(rel, "symlink whose target is outside the allowed root"))
            continue
        if include and not any(m.match(rel) for m in include):
            continue
        if any(m.match(rel) for m in exclude):
            continue
        text = _read_text(real, mount, rel, mount.max_bytes - used)
        if text is None:
            skipped.append(SkippedFile(rel, "not UTF-8 text (binary)"))
            continue
        used += len(text.encode("utf-8"))
        if used > mount.max_bytes:
            raise _budget_error(mount, rel)
        destination = f"{target}/{rel}" if target else rel
        try:
            destination = fs.normalize(destination)
            fs.write(destination, text, mode="create")
        except InvalidPathError as exc:
            skipped.append(SkippedFile(rel, f"unusable name: {exc}"))
            used -= len(text.encode("utf-8"))
            continue
        except PathExistsError:
            raise PackConfigError(
                f"Host mounts clash: {destination!r} is provided twice (last by "
                f"{mount.host_path!r}). Give the mounts different mount_path values."
            ) from None
        loaded.append(destination)
    skipped.sort(key=lambda item: item.host_path)
    return MountedTree(mount, host, target, tuple(sorted(loaded)), tuple(skipped), used)


def _walk(host: str, root: str, prune: tuple[GlobMatcher, ...]) -> Iterator[tuple[str, str | None]]:
    """Yield ``(relative path, real path)`` for files below ``host``, sorted per directory.

    The real path is ``None`` for a symlink leaving ``root``. Symlinked directories inside
    the root are followed once each (cycles are cut by remembering real directories).
    """
    seen: set[str] = {host}
    stack: list[tuple[str, str]] = [(host, "")]
    while stack:
        directory, prefix = stack.pop()
        with os.scandir(directory) as scan:
            children = sorted(scan, key=lambda entry: entry.name, reverse=True)
        for entry in children:
            rel = f"{prefix}{entry.name}"
            real = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
            if not _within(real, root):
                yield rel, None
                continue
            try:
                mode = os.stat(real).st_mode
            except OSError:
                continue  # a dangling symlink or a file that vanished: nothing to copy
            if stat.S_ISDIR(mode):
                if real in seen or any(m.match(rel) for m in prune):
                    continue
                seen.add(real)
                stack.append((real, f"{rel}/"))
            elif stat.S_ISREG(mode):
                yield rel, real


def _read_text(real: str, mount: HostMount, rel: str, remaining: int) -> str | None:
    """The file's text, ``None`` if it is not UTF-8; refuse early if it cannot fit."""
    with open(real, "rb") as handle:  # read-only: the host is never written
        size = os.fstat(handle.fileno()).st_size
        if size > remaining:
            # Too big either way; only a binary file (skipped anyway) is not an error.
            decoder = codecs.getincrementaldecoder("utf-8")()
            try:
                decoder.decode(handle.read(_PEEK_BYTES), final=False)
            except UnicodeDecodeError:
                return None
            raise _budget_error(mount, rel)
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _budget_error(mount: HostMount, rel: str) -> FilesystemLimitError:
    return FilesystemLimitError(
        f"Host mount {mount.host_path!r} exceeds its byte budget of {mount.max_bytes} bytes "
        f"while loading {rel!r}. Raise max_bytes for this mount, or narrow it with include / "
        "exclude patterns."
    )
