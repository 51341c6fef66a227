"""haversack-vfs: an in-memory workspace filesystem with O(1) snapshots, grep and host mounts."""

from __future__ import annotations

from ._errors import InvalidArgumentError, InvalidPatternError
from ._grep import GrepPattern, compile_grep_pattern, grep_texts
from ._memory import (
    DEFAULT_MAX_DIRECTORIES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
    InMemoryFilesystem,
)

__all__ = [
    "DEFAULT_MAX_DIRECTORIES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "GrepPattern",
    "InMemoryFilesystem",
    "InvalidArgumentError",
    "InvalidPatternError",
    "compile_grep_pattern",
    "grep_texts",
]
