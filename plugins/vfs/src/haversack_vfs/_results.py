"""Result dataclasses of the VFS tools and the text the model sees of each (``render``).

Values keep exact data (``ReadFileResult.content`` is the file's text byte for byte); the
renders are for reading: numbered lines, with line endings a reader could not otherwise
see marked (``\\r\\n`` noted or marked with ``␍``, a missing final newline shown as
``\\ No newline at end of file``, as ``diff`` does).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "CR_MARK",
    "NO_FINAL_NEWLINE",
    "EditFileResult",
    "GlobResult",
    "GrepHit",
    "GrepResult",
    "ListEntry",
    "ListResult",
    "ReadFileResult",
    "RemoveResult",
    "WriteFileResult",
    "number_lines",
]

#: Marks, in a mixed-ending file, each shown line that ends with ``\r\n``.
CR_MARK: Final = "␍"
#: Shown after a last line that has no newline.
NO_FINAL_NEWLINE: Final = "\\ No newline at end of file"


_PREFIX_CACHE_LIMIT: Final = 100_000
_prefix_cache: list[str] = [""]  # index n holds the prefix of line n


def _prefixes(first: int, count: int) -> list[str]:
    """``"<n right-aligned to 6><tab>"`` for lines ``first`` .. ``first + count - 1``.

    Cached for the first lines: numbering is the bulk of a read's cost otherwise.
    """
    end = first + count
    cache = _prefix_cache
    if end <= len(cache):
        return cache[first:end]
    if end <= _PREFIX_CACHE_LIMIT:
        cache.extend(f"{n:>6}\t" for n in range(len(cache), max(end, 2 * len(cache))))
        return cache[first:end]
    return [f"{n:>6}\t" for n in range(first, end)]


def number_lines(content: str, first_line: int) -> tuple[str, str]:
    """Render ``content`` as ``<number>\\t<line>`` rows; return ``(note, rows)``.

    ``note`` says how line endings look when that is not plain ``\\n``: every line
    ``\\r\\n`` (said once), or mixed (the ``\\r\\n`` lines carry :data:`CR_MARK`).
    """
    if not content:
        return "", ""
    lines = content.split("\n")
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    note = ""
    if "\r" in content:
        complete = len(lines) if final_newline else len(lines) - 1  # lines with a newline
        crlf = sum(1 for line in lines[:complete] if line.endswith("\r"))
        if crlf and crlf == complete:
            lines = [line[:-1] for line in lines[:complete]] + lines[complete:]
            note = (
                "Line endings are \\r\\n (CRLF): write \\r\\n in old_string/new_string "
                "when they span lines."
            )
        elif crlf:
            lines = [
                line[:-1] + CR_MARK if line.endswith("\r") else line for line in lines[:complete]
            ] + lines[complete:]
            note = (
                f"Mixed line endings: lines shown ending in {CR_MARK} end with \\r\\n, the "
                "others with \\n."
            )
    rows = "\n".join(map(operator.add, _prefixes(first_line, len(lines)), lines))
    if not final_newline:
        rows += "\n" + NO_FINAL_NEWLINE
    return note, rows


@dataclass(frozen=True, slots=True)
class ListEntry:
    """One entry of a directory."""

    name: str = field(metadata={"description": "Entry name (no directory part)."})
    kind: Literal["file", "directory", "link"] = field(
        metadata={"description": "file, directory or link (a symbolic link, never followed)."}
    )
    size: int = field(default=0, metadata={"description": "Size in UTF-8 bytes (files)."})

    def render(self) -> str:
        """``name/`` for a directory, ``name (N bytes)`` for a file, ``name@ (symbolic link)``
        for a link."""
        if self.kind == "directory":
            return f"{self.name}/"
        if self.kind == "link":
            return f"{self.name}@ (symbolic link, not followed)"
        return f"{self.name} ({self.size} bytes)"


@dataclass(frozen=True, slots=True)
class ListResult:
    """What ``ls`` found in one directory."""

    path: str = field(metadata={"description": "The directory listed, as shown to the model."})
    entries: tuple[ListEntry, ...] = field(
        default=(), metadata={"description": "Entries, sorted by name (at most the limit)."}
    )
    total: int = field(default=0, metadata={"description": "Entries in the directory."})

    def render(self) -> str:
        """One entry per line; a note when the listing was cut."""
        rows = "\n".join(entry.render() for entry in self.entries)
        if self.total > len(self.entries):
            rows += (
                # The hint naming a tool is in the call's message, which knows the tools.
                f"\n... {self.total - len(self.entries)} more entries not shown."
            )
        return rows


@dataclass(frozen=True, slots=True)
class ReadFileResult:
    """A window of a file's lines; ``content`` is exact unless ``exact`` is false."""

    path: str = field(metadata={"description": "The file read, as shown to the model."})
    content: str = field(
        metadata={"description": "The window's exact text, line endings included."}
    )
    first_line: int = field(
        metadata={"description": "1-based number of the first line returned (0 if none)."}
    )
    last_line: int = field(
        metadata={"description": "1-based number of the last line returned (0 if none)."}
    )
    total_lines: int = field(metadata={"description": "Lines in the whole file."})
    exact: bool = field(
        default=True,
        metadata={"description": "False when one over-long line had to be cut."},
    )

    def render(self) -> str:
        """Numbered lines (``<number><tab><text>``) with line endings made visible."""
        if not self.content:
            return ""
        note, rows = number_lines(self.content, self.first_line)
        if not self.exact:
            rows = rows.removesuffix(NO_FINAL_NEWLINE) + "[... line cut at the read limit]"
        return f"{note}\n{rows}" if note else rows


@dataclass(frozen=True, slots=True)
class WriteFileResult:
    """A created file."""

    path: str = field(metadata={"description": "The file created, as shown to the model."})
    bytes_written: int = field(metadata={"description": "Size of the new file in UTF-8 bytes."})
    lines: int = field(metadata={"description": "Lines in the new file."})

    def render(self) -> str:
        """Nothing beyond the message: the model knows what it wrote."""
        return ""


@dataclass(frozen=True, slots=True)
class EditFileResult:
    """An edited file."""

    path: str = field(metadata={"description": "The file edited, as shown to the model."})
    replacements: int = field(metadata={"description": "Occurrences replaced."})
    size: int = field(metadata={"description": "Size of the file afterwards, in UTF-8 bytes."})
    first_changed_line: int = field(
        metadata={"description": "1-based line where the first replacement starts."}
    )

    def render(self) -> str:
        """Nothing beyond the message."""
        return ""


@dataclass(frozen=True, slots=True)
class GlobResult:
    """Files matching a glob pattern."""

    pattern: str = field(metadata={"description": "The pattern as given."})
    matches: tuple[str, ...] = field(
        default=(),
        metadata={"description": "Matching file paths relative to the workspace, sorted."},
    )
    total: int = field(default=0, metadata={"description": "Files matching in all."})

    def render(self) -> str:
        """One path per line; a note when the list was cut."""
        rows = "\n".join(self.matches)
        if self.total > len(self.matches):
            rows += (
                f"\n... {self.total - len(self.matches)} more matches not shown; use a narrower "
                "pattern or path."
            )
        return rows


@dataclass(frozen=True, slots=True)
class GrepHit:
    """One matching line."""

    path: str = field(metadata={"description": "File path relative to the workspace."})
    line_number: int = field(metadata={"description": "1-based line number."})
    line: str = field(metadata={"description": "The line without its ending (maybe cut)."})

    def render(self) -> str:
        """``path:line: text``."""
        return f"{self.path}:{self.line_number}: {self.line}"


@dataclass(frozen=True, slots=True)
class GrepResult:
    """Lines matching a regular expression, in path then line order."""

    pattern: str = field(metadata={"description": "The pattern as given."})
    matches: tuple[GrepHit, ...] = field(
        default=(), metadata={"description": "Matches, at most the limit."}
    )
    truncated: bool = field(
        default=False, metadata={"description": "More matches exist beyond the limit."}
    )
    stopped: str = field(
        default="",
        metadata={
            "description": "Empty when everything was searched; else why the search stopped "
            "early (its work budget) and how to narrow it."
        },
    )

    def render(self) -> str:
        """One match per line; a note when more matches exist."""
        rows = "\n".join(hit.render() for hit in self.matches)
        if self.truncated:
            rows += (
                f"\n... more matches exist beyond these {len(self.matches)}; narrow the search "
                "with path or glob, or a more specific pattern."
            )
        return rows


@dataclass(frozen=True, slots=True)
class RemoveResult:
    """Everything ``rm`` removed."""

    path: str = field(metadata={"description": "The path removed, as shown to the model."})
    removed: tuple[str, ...] = field(
        default=(),
        metadata={"description": "Removed paths relative to the workspace (at most the limit)."},
    )
    files: int = field(default=0, metadata={"description": "Files removed."})
    directories: int = field(default=0, metadata={"description": "Directories removed."})

    def render(self) -> str:
        """The removed paths, directories with a trailing ``/``."""
        rows = "\n".join(self.removed)
        hidden = self.files + self.directories - len(self.removed)
        if hidden > 0:
            rows += f"\n... and {hidden} more"
        return rows
