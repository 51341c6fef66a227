"""haversack-vfs: an in-memory workspace with O(1) snapshots, grep, host mounts and file tools.

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright; a test checks this list against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._config import CONFIG_MAXIMA as CONFIG_MAXIMA
    from ._config import DEFAULT_MAX_GREP_LINE_CHARS as DEFAULT_MAX_GREP_LINE_CHARS
    from ._config import DEFAULT_MAX_GREP_MATCHES as DEFAULT_MAX_GREP_MATCHES
    from ._config import DEFAULT_MAX_LIST_ENTRIES as DEFAULT_MAX_LIST_ENTRIES
    from ._config import DEFAULT_MAX_READ_BYTES as DEFAULT_MAX_READ_BYTES
    from ._config import DEFAULT_MAX_READ_LINES as DEFAULT_MAX_READ_LINES
    from ._config import DEFAULT_MAX_WRITE_BYTES as DEFAULT_MAX_WRITE_BYTES
    from ._config import VfsConfig as VfsConfig
    from ._limits import DEFAULT_MAX_DIRECTORIES as DEFAULT_MAX_DIRECTORIES
    from ._limits import DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES
    from ._limits import DEFAULT_MAX_FILES as DEFAULT_MAX_FILES
    from ._limits import DEFAULT_MAX_TOTAL_BYTES as DEFAULT_MAX_TOTAL_BYTES
    from ._memory import InMemoryFilesystem as InMemoryFilesystem
    from ._mounts import DEFAULT_MOUNT_MAX_BYTES as DEFAULT_MOUNT_MAX_BYTES
    from ._mounts import HostMount as HostMount
    from ._mounts import MountedTree as MountedTree
    from ._mounts import MountReport as MountReport
    from ._mounts import SkippedFile as SkippedFile
    from ._mounts import load_host_mounts as load_host_mounts
    from ._params import EditFileParams as EditFileParams
    from ._params import GlobParams as GlobParams
    from ._params import GrepParams as GrepParams
    from ._params import ListParams as ListParams
    from ._params import ReadFileParams as ReadFileParams
    from ._params import RemoveParams as RemoveParams
    from ._params import WriteFileParams as WriteFileParams
    from ._policy import READ_BEFORE_WRITE_POLICY as READ_BEFORE_WRITE_POLICY
    from ._policy import VfsReadBeforeWritePolicy as VfsReadBeforeWritePolicy
    from ._results import EditFileResult as EditFileResult
    from ._results import GlobResult as GlobResult
    from ._results import GrepHit as GrepHit
    from ._results import GrepResult as GrepResult
    from ._results import ListEntry as ListEntry
    from ._results import ListResult as ListResult
    from ._results import ReadFileResult as ReadFileResult
    from ._results import RemoveResult as RemoveResult
    from ._results import WriteFileResult as WriteFileResult
    from ._section import SECTION_KEY as SECTION_KEY
    from ._section import vfs_section as vfs_section
    from ._tools import TOOL_NAMES as TOOL_NAMES
    from ._tools import vfs_tools as vfs_tools
    from ._workspace import build_workspace as build_workspace
    from ._workspace import workspace_binding as workspace_binding

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

# Derived from the table so there is no third list to keep; hidden from type checkers, which
# take the ``X as X`` imports above (a computed ``__all__`` would make every name private).
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
