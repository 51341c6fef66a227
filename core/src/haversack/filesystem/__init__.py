"""The filesystem contract: what every workspace implements and every file tool relies on.

One home for the protocol (:class:`Filesystem`, :class:`Snapshottable` and their value types),
path normalisation, the glob dialect, the text helpers (line windows, UTF-8 sizes, exact
replacement), grep over texts, the write-mode and name rules and the wording of their errors, and
:class:`ChangeTracker` (which paths of a directory changed since the last look, at the cost
of the change).
The in-memory workspace of ``haversack-vfs`` and :class:`DirectoryFilesystem` (a host
directory, resolved beneath a handle on its root without following links: the sandbox's
workspace and a user's project directory) both implement it with these helpers, so they behave
and word their errors alike.

Names are imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
    from ._beneath import Beneath
    from ._directory import DirectoryFilesystem
    from ._glob import DEFAULT_MAX_GLOB_CHARS, GlobMatcher, compile_glob
    from ._grep import (
        DEFAULT_GREP_SCAN_BYTES,
        DEFAULT_GREP_SECONDS,
        DEFAULT_MAX_MATCH_LINE_BYTES,
        DEFAULT_MAX_PATTERN_CHARS,
        MAX_GREP_SCAN_BYTES,
        MAX_GREP_SECONDS,
        MAX_PATTERN_CHARS,
        RE2_MAX_MEM,
        WORK_PER_CHUNK,
        GrepBudget,
        GrepPattern,
        compile_grep_pattern,
        grep_texts,
    )
    from ._journal import ChangeJournal, JournalMark, PathState, workspace_lock
    from ._paths import MAX_PATH_DEPTH, MAX_SEGMENT_LENGTH, WORKSPACE_MOUNT, normalize_path
    from ._protected import DEFAULT_PROTECTED, ProtectedPaths, ProtectedRule
    from ._protocol import (
        EntryKind,
        FileStat,
        Filesystem,
        GrepMatch,
        GrepResult,
        ReadWindow,
        RollbackReport,
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
        MATCH_COUNT_CAP,
        check_old_text,
        check_window,
        count_lines,
        count_occurrences,
        encode_text,
        line_window,
        replace_exact,
        replaced_size,
        utf8_size,
    )
    from ._tracker import ChangeTracker

_EXPORTS: dict[str, str] = {
    "Beneath": "._beneath",
    "ChangeJournal": "._journal",
    "ChangeTracker": "._tracker",
    "DEFAULT_GREP_SCAN_BYTES": "._grep",
    "DEFAULT_GREP_SECONDS": "._grep",
    "DEFAULT_MAX_FILE_BYTES": "._rules",
    "DEFAULT_MAX_GLOB_CHARS": "._glob",
    "DEFAULT_MAX_MATCH_LINE_BYTES": "._grep",
    "DEFAULT_MAX_PATTERN_CHARS": "._grep",
    "DEFAULT_PROTECTED": "._protected",
    "DirectoryFilesystem": "._directory",
    "DirectorySnapshot": "._snapshot",
    "DirectorySnapshotter": "._snapshot",
    "EntryKind": "._protocol",
    "FileStat": "._protocol",
    "Filesystem": "._protocol",
    "GlobMatcher": "._glob",
    "GrepBudget": "._grep",
    "GrepMatch": "._protocol",
    "GrepPattern": "._grep",
    "GrepResult": "._protocol",
    "JournalMark": "._journal",
    "MATCH_COUNT_CAP": "._text",
    "MAX_GREP_SCAN_BYTES": "._grep",
    "MAX_GREP_SECONDS": "._grep",
    "MAX_PATH_DEPTH": "._paths",
    "MAX_PATTERN_CHARS": "._grep",
    "MAX_SEGMENT_LENGTH": "._paths",
    "PathState": "._journal",
    "ProtectedPaths": "._protected",
    "ProtectedRule": "._protected",
    "RE2_MAX_MEM": "._grep",
    "ReadWindow": "._protocol",
    "RollbackReport": "._protocol",
    "Snapshottable": "._protocol",
    "WORKSPACE_MOUNT": "._paths",
    "WORK_PER_CHUNK": "._grep",
    "WRITE_MODES": "._rules",
    "WorkspaceUsage": "._snapshot",
    "WriteMode": "._protocol",
    "check_new_name": "._rules",
    "check_old_text": "._text",
    "check_window": "._text",
    "check_write_mode": "._rules",
    "compile_glob": "._glob",
    "compile_grep_pattern": "._grep",
    "count_lines": "._text",
    "count_occurrences": "._text",
    "default_storage_parent": "._snapshot",
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
    "remove_tree": "._remove",
    "replace_exact": "._text",
    "replaced_size": "._text",
    "root_write_error": "._rules",
    "utf8_size": "._text",
    "workspace_lock": "._journal",
}

__all__ = [
    "Beneath",
    "ChangeJournal",
    "ChangeTracker",
    "DEFAULT_GREP_SCAN_BYTES",
    "DEFAULT_GREP_SECONDS",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_GLOB_CHARS",
    "DEFAULT_MAX_MATCH_LINE_BYTES",
    "DEFAULT_MAX_PATTERN_CHARS",
    "DEFAULT_PROTECTED",
    "DirectoryFilesystem",
    "DirectorySnapshot",
    "DirectorySnapshotter",
    "EntryKind",
    "FileStat",
    "Filesystem",
    "GlobMatcher",
    "GrepBudget",
    "GrepMatch",
    "GrepPattern",
    "GrepResult",
    "JournalMark",
    "MATCH_COUNT_CAP",
    "MAX_GREP_SCAN_BYTES",
    "MAX_GREP_SECONDS",
    "MAX_PATH_DEPTH",
    "MAX_PATTERN_CHARS",
    "MAX_SEGMENT_LENGTH",
    "PathState",
    "ProtectedPaths",
    "ProtectedRule",
    "RE2_MAX_MEM",
    "ReadWindow",
    "RollbackReport",
    "Snapshottable",
    "WORKSPACE_MOUNT",
    "WORK_PER_CHUNK",
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
    "count_occurrences",
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
    "replaced_size",
    "root_write_error",
    "utf8_size",
    "workspace_lock",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, rehome=True)
