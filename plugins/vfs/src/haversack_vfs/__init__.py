"""haversack-vfs: an in-memory workspace with O(1) snapshots, grep, host mounts and file tools.

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
    from ._config import (
        CONFIG_MAXIMA,
        DEFAULT_MAX_GREP_LINE_CHARS,
        DEFAULT_MAX_GREP_MATCHES,
        DEFAULT_MAX_LIST_ENTRIES,
        DEFAULT_MAX_READ_BYTES,
        DEFAULT_MAX_READ_LINES,
        DEFAULT_MAX_WRITE_BYTES,
        VfsConfig,
    )
    from ._limits import (
        DEFAULT_MAX_DIRECTORIES,
        DEFAULT_MAX_FILE_BYTES,
        DEFAULT_MAX_FILES,
        DEFAULT_MAX_TOTAL_BYTES,
    )
    from ._memory import InMemoryFilesystem
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

_EXPORTS: dict[str, str] = {
    "CONFIG_MAXIMA": "._config",
    "DEFAULT_MAX_DIRECTORIES": "._limits",
    "DEFAULT_MAX_FILES": "._limits",
    "DEFAULT_MAX_FILE_BYTES": "._limits",
    "DEFAULT_MAX_GREP_LINE_CHARS": "._config",
    "DEFAULT_MAX_GREP_MATCHES": "._config",
    "DEFAULT_MAX_LIST_ENTRIES": "._config",
    "DEFAULT_MAX_READ_BYTES": "._config",
    "DEFAULT_MAX_READ_LINES": "._config",
    "DEFAULT_MAX_TOTAL_BYTES": "._limits",
    "DEFAULT_MAX_WRITE_BYTES": "._config",
    "DEFAULT_MOUNT_MAX_BYTES": "._mounts",
    "EditFileParams": "._params",
    "EditFileResult": "._results",
    "GlobParams": "._params",
    "GlobResult": "._results",
    "GrepHit": "._results",
    "GrepParams": "._params",
    "GrepResult": "._results",
    "HostMount": "._mounts",
    "InMemoryFilesystem": "._memory",
    "ListEntry": "._results",
    "ListParams": "._params",
    "ListResult": "._results",
    "MountReport": "._mounts",
    "MountedTree": "._mounts",
    "READ_BEFORE_WRITE_POLICY": "._policy",
    "ReadFileParams": "._params",
    "ReadFileResult": "._results",
    "RemoveParams": "._params",
    "RemoveResult": "._results",
    "SECTION_KEY": "._section",
    "SkippedFile": "._mounts",
    "TOOL_NAMES": "._tools",
    "VfsConfig": "._config",
    "VfsReadBeforeWritePolicy": "._policy",
    "WriteFileParams": "._params",
    "WriteFileResult": "._results",
    "build_workspace": "._workspace",
    "load_host_mounts": "._mounts",
    "vfs_section": "._section",
    "vfs_tools": "._tools",
    "workspace_binding": "._workspace",
}

__all__ = [
    "CONFIG_MAXIMA",
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
    "EditFileParams",
    "EditFileResult",
    "GlobParams",
    "GlobResult",
    "GrepHit",
    "GrepParams",
    "GrepResult",
    "HostMount",
    "InMemoryFilesystem",
    "ListEntry",
    "ListParams",
    "ListResult",
    "MountReport",
    "MountedTree",
    "READ_BEFORE_WRITE_POLICY",
    "ReadFileParams",
    "ReadFileResult",
    "RemoveParams",
    "RemoveResult",
    "SECTION_KEY",
    "SkippedFile",
    "TOOL_NAMES",
    "VfsConfig",
    "VfsReadBeforeWritePolicy",
    "WriteFileParams",
    "WriteFileResult",
    "build_workspace",
    "load_host_mounts",
    "vfs_section",
    "vfs_tools",
    "workspace_binding",
]


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
