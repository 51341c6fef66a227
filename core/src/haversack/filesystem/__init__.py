"""The filesystem contract: what every workspace implements and every file tool relies on.

One home for the protocol (:class:`Filesystem`, :class:`Snapshottable` and their value types),
path normalisation, the glob dialect, the text helpers (line windows, UTF-8 sizes, exact
replacement), grep over texts, the write-mode and name rules and the wording of their errors.
The in-memory workspace of ``haversack-vfs`` and the sandbox workspace of ``haversack-podman``
both implement it with these helpers, so they behave and word their errors alike.

Names are imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
    from ._beneath import Beneath
    from ._glob import GlobMatcher, compile_glob
    from ._grep import GrepPattern, compile_grep_pattern, grep_texts
    from ._paths import MAX_PATH_DEPTH, MAX_SEGMENT_LENGTH, WORKSPACE_MOUNT, normalize_path
    from ._protocol import (
        EntryKind,
        FileStat,
        Filesystem,
        GrepMatch,
        GrepResult,
        ReadWindow,
        Snapshottable,
        WriteMode,
    )
    from ._remove import remove_tree
    from ._rules import (
        DEFAULT_MAX_FILE_BYTES,
        WRITE_MODES,
        check_new_name,
        check_write_mode,
        directory_write_error,
        exists_error,
        file_size_error,
        missing_error,
        not_a_directory_error,
        not_a_file_error,
        root_write_error,
    )
    from ._snapshot import (
        DirectorySnapshot,
        DirectorySnapshotter,
        WorkspaceUsage,
        default_storage_parent,
    )
    from ._text import (
        check_old_text,
        check_window,
        count_lines,
        encode_text,
        line_window,
        replace_exact,
        utf8_size,
    )

_EXPORTS: dict[str, str] = {
    "remove_tree": "._remove",
    "DirectorySnapshot": "._snapshot",
    "DirectorySnapshotter": "._snapshot",
    "default_storage_parent": "._snapshot",
    "WorkspaceUsage": "._snapshot",
    "Beneath": "._beneath",
    "DEFAULT_MAX_FILE_BYTES": "._rules",
    "EntryKind": "._protocol",
    "FileStat": "._protocol",
    "Filesystem": "._protocol",
    "GlobMatcher": "._glob",
    "GrepMatch": "._protocol",
    "GrepPattern": "._grep",
    "GrepResult": "._protocol",
    "MAX_PATH_DEPTH": "._paths",
    "MAX_SEGMENT_LENGTH": "._paths",
    "ReadWindow": "._protocol",
    "Snapshottable": "._protocol",
    "WORKSPACE_MOUNT": "._paths",
    "WRITE_MODES": "._rules",
    "WriteMode": "._protocol",
    "check_new_name": "._rules",
    "check_old_text": "._text",
    "check_window": "._text",
    "check_write_mode": "._rules",
    "compile_glob": "._glob",
    "compile_grep_pattern": "._grep",
    "count_lines": "._text",
    "directory_write_error": "._rules",
    "encode_text": "._text",
    "exists_error": "._rules",
    "file_size_error": "._rules",
    "grep_texts": "._grep",
    "line_window": "._text",
    "missing_error": "._rules",
    "normalize_path": "._paths",
    "not_a_directory_error": "._rules",
    "not_a_file_error": "._rules",
    "replace_exact": "._text",
    "root_write_error": "._rules",
    "utf8_size": "._text",
}

__all__ = [
    "Beneath",
    "DEFAULT_MAX_FILE_BYTES",
    "DirectorySnapshot",
    "DirectorySnapshotter",
    "EntryKind",
    "FileStat",
    "Filesystem",
    "GlobMatcher",
    "GrepMatch",
    "GrepPattern",
    "GrepResult",
    "MAX_PATH_DEPTH",
    "MAX_SEGMENT_LENGTH",
    "ReadWindow",
    "Snapshottable",
    "WORKSPACE_MOUNT",
    "WRITE_MODES",
    "WorkspaceUsage",
    "WriteMode",
    "check_new_name",
    "check_old_text",
    "check_window",
    "check_write_mode",
    "compile_glob",
    "compile_grep_pattern",
    "count_lines",
    "default_storage_parent",
    "directory_write_error",
    "encode_text",
    "exists_error",
    "file_size_error",
    "grep_texts",
    "line_window",
    "missing_error",
    "normalize_path",
    "not_a_directory_error",
    "not_a_file_error",
    "remove_tree",
    "replace_exact",
    "root_write_error",
    "utf8_size",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, rehome=True)
