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
from ._mounts import (
    DEFAULT_MOUNT_MAX_BYTES,
    HostMount,
    MountedTree,
    MountReport,
    SkippedFile,
    load_host_mounts,
)

__all__ = [
    "DEFAULT_MAX_DIRECTORIES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "DEFAULT_MOUNT_MAX_BYTES",
    "GrepPattern",
    "HostMount",
    "InMemoryFilesystem",
    "InvalidArgumentError",
    "InvalidPatternError",
    "MountReport",
    "MountedTree",
    "SkippedFile",
    "compile_grep_pattern",
    "grep_texts",
    "load_host_mounts",
]
