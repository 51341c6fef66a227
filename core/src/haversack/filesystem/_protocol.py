"""The ``Filesystem`` protocol that workspace packs implement and file tools use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "EntryKind",
    "FileStat",
    "Filesystem",
    "GrepMatch",
    "GrepResult",
    "ReadWindow",
    "Snapshottable",
    "WriteMode",
]

#: ``link`` only on a workspace over a real directory: a symbolic link, listed for what it
#: is and never followed.
EntryKind = Literal["file", "directory", "link"]
WriteMode = Literal["create", "overwrite", "append"]


@dataclass(frozen=True, slots=True)
class FileStat:
    """One entry: its normalised path, its kind and, for files, its size in bytes."""

    path: str
    kind: EntryKind
    size: int = 0


@dataclass(frozen=True, slots=True)
class ReadWindow:
    """A window of a text file's lines.

    ``content`` is the exact text of lines ``offset`` (0-based) to ``offset + len(lines)``,
    line endings included, so concatenating windows gives back the file byte for byte.
    ``total_lines`` counts every line of the file.
    """

    path: str
    content: str
    offset: int
    total_lines: int


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """A matching line: path, 1-based line number and the line without its ending.

    ``cut_bytes`` counts the UTF-8 bytes of an over-long line that were not kept (the search
    keeps a bounded head of each matching line).
    """

    path: str
    line_number: int
    line: str
    cut_bytes: int = 0


@dataclass(frozen=True, slots=True)
class GrepResult:
    """Matches in path then line order; ``truncated`` when ``max_matches`` cut the search.

    ``stopped`` is empty when every candidate file was searched, else why the search ended
    early (its work budget) and how to narrow it; ``skipped_lines`` counts lines too long to
    search with this pattern within the budget. ``scanned_bytes`` and ``scanned_files``
    say how much was searched (they do not take part in equality).
    """

    matches: tuple[GrepMatch, ...]
    truncated: bool = False
    stopped: str = ""
    skipped_lines: int = 0
    scanned_bytes: int = field(default=0, compare=False)
    scanned_files: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class RollbackReport:
    """What restoring a shared workspace did: the paths put back (``restored``) and those
    left as they are (``kept``) because someone else changed them since the call did; their
    version wins."""

    restored: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()

    def describe(self, mount_point: str = "/workspace", *, limit: int = 20) -> str:
        """A sentence for the model naming the kept paths ('' when none), at most ``limit``."""
        if not self.kept:
            return ""
        base = mount_point.rstrip("/")
        shown = ", ".join(f"{base}/{path}" for path in self.kept[:limit])
        more = f" and {len(self.kept) - limit} more" if len(self.kept) > limit else ""
        return (
            f"Not rolled back in {mount_point}, because someone else changed them after this "
            f"call did (their version was kept): {shown}{more}."
        )


@runtime_checkable
class Snapshottable(Protocol):
    """A resource the executor can snapshot before a tool call and restore after a failure.

    ``snapshot`` must be cheap (it runs before every mutating call) and ``restore`` exact.
    A snapshot is opaque to the caller; it is only ever passed back to ``restore`` of the
    object that made it. A resource others change too (a shared workspace) restores only the
    call's own changes and may return a :class:`RollbackReport` naming what it kept; the
    executor tells the model.
    """

    def snapshot(self) -> object: ...

    def restore(self, snapshot: object) -> RollbackReport | None: ...


@runtime_checkable
class Filesystem(Snapshottable, Protocol):
    """A workspace of text files and directories.

    Every ``path`` argument is normalised with :func:`haversack.normalize_path` using
    ``mount_point`` (so ``"/workspace/a.txt"``, ``" a.txt "`` and ``"a//a.txt"`` are one
    file). Failures raise :class:`haversack.errors.FilesystemError` subclasses whose
    messages are written for the model. Content is ``str`` and round-trips exactly:
    no newline translation, no stripping.
    """

    @property
    def mount_point(self) -> str:
        """Where the workspace root appears to the model, e.g. ``"/workspace"``."""
        ...

    def normalize(self, path: str) -> str:
        """Normalise ``path`` exactly as every other method of this filesystem does."""
        ...

    def exists(self, path: str) -> bool: ...

    def stat(self, path: str) -> FileStat: ...

    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """Direct children of a directory, sorted by name."""
        ...

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """Lines ``offset`` .. ``offset + limit`` of a text file (all remaining if ``None``)."""
        ...

    def read_text(self, path: str) -> str:
        """The whole text of a file."""
        ...

    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """Write ``content`` and return the number of UTF-8 bytes written.

        ``create`` refuses an existing path, ``overwrite`` replaces (or creates), ``append``
        extends (or creates). ``parents`` creates missing parent directories.
        """
        ...

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """Replace ``old`` by ``new``; return the number of replacements.

        Without ``replace_all`` the match must be unique.
        """
        ...

    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """Files under ``path`` matching ``pattern`` (``**`` spans zero or more directories),
        sorted."""
        ...

    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """Lines matching the regular expression ``pattern`` in files under ``path``."""
        ...

    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """Remove a file, or a directory tree when ``recursive``; return every removed path,
        sorted."""
        ...

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None: ...
