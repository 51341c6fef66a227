"""Params dataclasses of the VFS tools: what the model sends, each field described."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "EditFileParams",
    "GlobParams",
    "GrepParams",
    "ListParams",
    "ReadFileParams",
    "RemoveParams",
    "WriteFileParams",
]

_PATH = "Path relative to the workspace root (/workspace/x and x are the same file)."


@dataclass(frozen=True, slots=True)
class ListParams:
    """``ls``: one directory."""

    path: str = field(
        default="",
        metadata={"description": "Directory to list, relative to the workspace; '' is the root."},
    )


@dataclass(frozen=True, slots=True)
class ReadFileParams:
    """``read_file``: a window of a file's lines."""

    path: str = field(metadata={"description": _PATH})
    offset: int = field(
        default=0,
        metadata={
            "description": "Number of lines to skip before the window: 0 starts at line 1, "
            "20 at line 21."
        },
    )
    limit: int | None = field(
        default=None,
        metadata={"description": "Most lines to return; omit for the configured maximum."},
    )


@dataclass(frozen=True, slots=True)
class WriteFileParams:
    """``write_file``: create a new file."""

    path: str = field(metadata={"description": _PATH + " Must not exist yet."})
    content: str = field(
        metadata={"description": "The file's exact text; stored byte for byte, nothing added."}
    )


@dataclass(frozen=True, slots=True)
class EditFileParams:
    """``edit_file``: exact string replacement in an existing file."""

    path: str = field(metadata={"description": _PATH})
    old_string: str = field(
        metadata={
            "description": "Exact text to replace, including whitespace and line endings; must "
            "occur exactly once unless replace_all."
        }
    )
    new_string: str = field(metadata={"description": "Text to put in its place."})
    replace_all: bool = field(
        default=False,
        metadata={"description": "Replace every occurrence instead of requiring one."},
    )


@dataclass(frozen=True, slots=True)
class GlobParams:
    """``glob``: files whose path matches a pattern."""

    pattern: str = field(
        metadata={
            "description": "Glob pattern: * and ? stay within a directory, ** spans zero or "
            "more directories (**/*.py includes top-level files)."
        }
    )
    path: str = field(
        default="",
        metadata={"description": "Directory to search under; the pattern is relative to it."},
    )


@dataclass(frozen=True, slots=True)
class GrepParams:
    """``grep``: lines matching a regular expression."""

    pattern: str = field(
        metadata={
            "description": "Regular expression (RE2 syntax: Python re without backreferences "
            "or lookaround), searched in each line."
        }
    )
    path: str = field(
        default="",
        metadata={"description": "File or directory to search; '' is the whole workspace."},
    )
    glob: str | None = field(
        default=None,
        metadata={"description": "Only search files matching this glob (relative to path)."},
    )
    max_matches: int | None = field(
        default=None,
        metadata={"description": "Most matches to return; omit for the configured maximum."},
    )


@dataclass(frozen=True, slots=True)
class RemoveParams:
    """``rm``: a file or a whole directory tree."""

    path: str = field(
        metadata={
            "description": "File or directory to remove; a directory goes with everything in it."
        }
    )
