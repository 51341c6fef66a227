"""The rules every ``Filesystem`` applies alike, and the wording of the errors they raise.

Messages are written for the model and name no tool: a pack may prefix or rename its tools,
so hints that need a tool's name are added by the tools themselves.
"""

from __future__ import annotations

import re
from typing import Final

from haversack.errors import (
    FilesystemLimitError,
    InvalidArgumentError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "WRITE_MODES",
    "check_new_name",
    "check_write_mode",
    "directory_write_error",
    "exists_error",
    "file_size_error",
    "missing_error",
    "not_a_directory_error",
    "not_a_file_error",
    "root_write_error",
]

#: Largest single file the file tools read or write, in UTF-8 bytes (16 MiB).
DEFAULT_MAX_FILE_BYTES: Final = 16 * 1024 * 1024
#: The ``mode`` values of :meth:`Filesystem.write`.
WRITE_MODES: Final = ("create", "overwrite", "append")
# A name starting or ending with whitespace could never be named again: normalisation strips
# the path's ends, and the model cannot tell "a " from "a".
_EDGE_SPACE: Final = re.compile(r"(?:^|/)\s|\s(?:/|$)")


def check_write_mode(mode: object, path: str) -> None:
    """Refuse a write ``mode`` other than ``create``, ``overwrite`` or ``append``."""
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(
            f"mode must be one of 'create', 'overwrite' or 'append', got {mode!r}.", path=path
        )


def check_new_name(path: str, shown: str) -> None:
    """Refuse a new path with a name that starts or ends with whitespace."""
    match = _EDGE_SPACE.search(path)
    if match is None:
        return
    start = path.rfind("/", 0, match.start() + 1) + 1
    end = path.find("/", start)
    segment = path[start:] if end < 0 else path[start:end]
    raise InvalidPathError(
        f"The name {segment!r} in {shown} starts or ends with whitespace, so it could not be "
        "named reliably; choose a name without it.",
        path=path,
    )


def missing_error(path: str, shown: str) -> PathNotFoundError:
    """Nothing exists at ``path``."""
    return PathNotFoundError(
        f"Nothing exists at {shown}. List its parent directory or search with a glob pattern "
        "to see which files and directories exist.",
        path=path,
    )


def not_a_file_error(path: str, shown: str) -> PathKindError:
    """A file was needed and ``path`` is a directory."""
    return PathKindError(
        f"{shown} is a directory, not a file; list it to see its entries.", path=path
    )


def not_a_directory_error(path: str, shown: str) -> PathKindError:
    """A directory was needed and ``path`` is a file."""
    return PathKindError(f"{shown} is a file, not a directory; give a directory path.", path=path)


def root_write_error() -> PathKindError:
    """A write aimed at the workspace root itself."""
    return PathKindError(
        "The workspace root is a directory; write to a file path such as 'notes.txt'.", path=""
    )


def directory_write_error(path: str, shown: str, example: str) -> PathKindError:
    """A write aimed at a directory; ``example`` shows a file path inside it."""
    return PathKindError(
        f"{shown} is a directory; write to a file inside it, such as {example}.", path=path
    )


def exists_error(path: str, shown: str) -> PathExistsError:
    """A ``create`` write aimed at an existing file."""
    return PathExistsError(
        f"{shown} already exists. Edit it to change part of it, or write with mode "
        "'overwrite' to replace it or 'append' to add to its end.",
        path=path,
    )


def file_size_error(path: str, shown: str, size: int, limit: int) -> FilesystemLimitError:
    """A file would grow past the per-file limit."""
    return FilesystemLimitError(
        f"{shown} would be {size} bytes; the limit for one file is {limit} bytes. Split the "
        "content into several smaller files.",
        path=path,
    )
