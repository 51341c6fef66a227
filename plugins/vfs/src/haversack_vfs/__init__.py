"""haversack-vfs: an in-memory workspace with O(1) snapshots, grep, host mounts and file tools."""

from __future__ import annotations

from ._config import (
    DEFAULT_MAX_GREP_LINE_CHARS,
    DEFAULT_MAX_GREP_MATCHES,
    DEFAULT_MAX_LIST_ENTRIES,
    DEFAULT_MAX_READ_BYTES,
    DEFAULT_MAX_READ_LINES,
    DEFAULT_MAX_WRITE_BYTES,
    VfsConfig,
)
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
from ._params import (
    EditFileParams,
    GlobParams,
    GrepParams,
    ListParams,
    ReadFileParams,
    RemoveParams,
    WriteFileParams,
)
from ._policy import READ_BEFORE_WRITE_POLICY, VfsReadBeforeWritePolicy
from ._results import (
    EditFileResult,
    GlobResult,
    GrepHit,
    GrepResult,
    ListEntry,
    ListResult,
    ReadFileResult,
    RemoveResult,
    WriteFileResult,
)
from ._section import SECTION_KEY, vfs_section
from ._tools import TOOL_NAMES, vfs_tools
from ._workspace import build_workspace, workspace_binding

__all__ = [
    "DEFAULT_MAX_DIRECTORIES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_GREP_LINE_CHARS",
    "DEFAULT_MAX_GREP_MATCHES",
    "DEFAULT_MAX_LIST_ENTRIES",
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_MAX_READ_LINES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "DEFAULT_MAX_WRITE_BYTES",
    "DEFAULT_MOUNT_MAX_BYTES",
    "READ_BEFORE_WRITE_POLICY",
    "SECTION_KEY",
    "TOOL_NAMES",
    "EditFileParams",
    "EditFileResult",
    "GlobParams",
    "GlobResult",
    "GrepHit",
    "GrepParams",
    "GrepPattern",
    "GrepResult",
    "HostMount",
    "InMemoryFilesystem",
    "InvalidArgumentError",
    "InvalidPatternError",
    "ListEntry",
    "ListParams",
    "ListResult",
    "MountReport",
    "MountedTree",
    "ReadFileParams",
    "ReadFileResult",
    "RemoveParams",
    "RemoveResult",
    "SkippedFile",
    "VfsConfig",
    "VfsReadBeforeWritePolicy",
    "WriteFileParams",
    "WriteFileResult",
    "build_workspace",
    "compile_grep_pattern",
    "grep_texts",
    "load_host_mounts",
    "vfs_section",
    "vfs_tools",
    "workspace_binding",
]
