"""``VfsConfig``: the pack's options (limits, host mounts, read-before-write)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from haversack.filesystem import (
    DEFAULT_GREP_SCAN_BYTES,
    DEFAULT_GREP_SECONDS,
    DEFAULT_MAX_PATTERN_CHARS,
    MAX_GREP_SCAN_BYTES,
    MAX_GREP_SECONDS,
    MAX_PATTERN_CHARS,
    ProtectedPaths,
)

from ._limits import (
    DEFAULT_MAX_DIRECTORIES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
)
from ._mounts import HostMount

__all__ = [
    "CONFIG_MAXIMA",
    "DEFAULT_MAX_GREP_LINE_CHARS",
    "DEFAULT_MAX_GREP_MATCHES",
    "DEFAULT_MAX_LIST_ENTRIES",
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_MAX_READ_LINES",
    "DEFAULT_MAX_WRITE_BYTES",
    "VfsConfig",
]

#: Largest ``content`` of one write_file call and ``new_string`` of one edit_file call.
DEFAULT_MAX_WRITE_BYTES: Final = 1024 * 1024
#: Most lines one read_file call returns (also its default ``limit``).
DEFAULT_MAX_READ_LINES: Final = 2000
#: Most UTF-8 bytes of file text one read_file call returns.
DEFAULT_MAX_READ_BYTES: Final = 256 * 1024
#: Most matches one grep call returns (also its default ``max_matches``).
DEFAULT_MAX_GREP_MATCHES: Final = 100
#: Longest matching line grep shows, in characters; longer lines are cut and marked.
DEFAULT_MAX_GREP_LINE_CHARS: Final = 500
#: Most entries ls and glob list, and most removed paths rm names.
DEFAULT_MAX_LIST_ENTRIES: Final = 500


#: The highest value each limit may be configured to: past these, one call's worst case
#: (time, memory) is no longer the documented one (docs/performance.md).
CONFIG_MAXIMA: Final[dict[str, int | float]] = {
    "max_write_bytes": 16 * 1024 * 1024,
    "max_read_lines": 100_000,
    "max_read_bytes": 16 * 1024 * 1024,
    "max_grep_matches": 10_000,
    "max_grep_line_chars": 100_000,
    "max_list_entries": 100_000,
    "max_file_bytes": 64 * 1024 * 1024,
    "max_total_bytes": 1024 * 1024 * 1024,
    "max_files": 200_000,
    "max_directories": 200_000,
    "max_pattern_chars": MAX_PATTERN_CHARS,
    "grep_scan_bytes": MAX_GREP_SCAN_BYTES,
    "grep_seconds": MAX_GREP_SECONDS,
}


def _positive(description: str, default: int) -> int:
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True, slots=True)
class VfsConfig:
    """Options of the VFS pack (``config={"vfs": {...}}`` or ``[tool.haversack.packs.vfs]``).

    Every option has a default, so the pack works unconfigured. Limits bound what one
    tool call may write or return, so hostile or careless input cannot flood the model's
    context or the process's memory.
    """

    mounts: tuple[HostMount, ...] = field(
        default=(),
        metadata={
            "description": "Host files or directories copied into the workspace when it is "
            "created (the host is never written)."
        },
    )
    allowed_host_roots: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Host directories mounts may read from; a mount (or a symlink in "
            "it) resolving outside every root is refused. Relative ones in a config file "
            "are relative to that file.",
            "path": True,
        },
    )
    read_before_write: bool = field(
        default=True,
        metadata={
            "description": "Attach ReadBeforeWritePolicy: edit_file on an existing file needs "
            "a read_file of it first in the session."
        },
    )
    max_write_bytes: int = _positive(
        "Largest write_file content or edit_file new_string, in UTF-8 bytes.",
        DEFAULT_MAX_WRITE_BYTES,
    )
    max_read_lines: int = _positive(
        "Most lines one read_file call returns (and its default limit).", DEFAULT_MAX_READ_LINES
    )
    max_read_bytes: int = _positive(
        "Most UTF-8 bytes of file text one read_file call returns.", DEFAULT_MAX_READ_BYTES
    )
    max_grep_matches: int = _positive(
        "Most matches one grep call returns (and its default max_matches).",
        DEFAULT_MAX_GREP_MATCHES,
    )
    max_grep_line_chars: int = _positive(
        "Longest matching line grep shows, in characters; longer lines are cut and marked.",
        DEFAULT_MAX_GREP_LINE_CHARS,
    )
    max_list_entries: int = _positive(
        "Most entries ls and glob return, and most removed paths rm lists.",
        DEFAULT_MAX_LIST_ENTRIES,
    )
    max_file_bytes: int = _positive(
        "Largest single file the workspace reads or writes, in UTF-8 bytes.",
        DEFAULT_MAX_FILE_BYTES,
    )
    max_total_bytes: int = _positive(
        "Most UTF-8 bytes the in-memory workspace holds across all files.",
        DEFAULT_MAX_TOTAL_BYTES,
    )
    max_files: int = _positive("Most files the in-memory workspace holds.", DEFAULT_MAX_FILES)
    max_directories: int = _positive(
        "Most directories the in-memory workspace holds.", DEFAULT_MAX_DIRECTORIES
    )
    workspace: Path | None = field(
        default=None,
        metadata={
            "description": "A project directory the file tools work on for real instead of "
            "the in-memory workspace: a successful call's changes land on disk, a failed "
            "call's are rolled back on disk, and no path or symbolic link ever leads out of "
            "it. A relative path in a config file resolves against that file's directory."
        },
    )
    protect: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "More globs of workspace paths the file tools may read but never "
            "change, besides the default protected set (git's config and hooks, direnv, editor "
            "task files...: see the trust boundary docs). Needs workspace."
        },
    )
    unprotect: tuple[str, ...] = field(
        default=(),
        metadata={
            "description": "Default protected globs to drop, each named exactly (warns: the "
            "model can then plant what the host's tools run). Needs workspace."
        },
    )
    max_pattern_chars: int = _positive(
        "Longest grep or glob pattern, in characters.", DEFAULT_MAX_PATTERN_CHARS
    )
    grep_scan_bytes: int = _positive(
        "Most bytes of text one grep call scans before it stops with what it found.",
        DEFAULT_GREP_SCAN_BYTES,
    )
    grep_seconds: float = field(
        default=DEFAULT_GREP_SECONDS,
        metadata={
            "description": "Longest one grep call searches, in seconds, before it stops with "
            "what it found."
        },
    )

    def protected_paths(self) -> ProtectedPaths:
        """The protected set of the workspace directory: the defaults, ``protect`` added and
        ``unprotect`` removed."""
        return ProtectedPaths.configured(protect=self.protect, unprotect=self.unprotect)

    def __post_init__(self) -> None:
        for name in (
            "max_write_bytes",
            "max_read_lines",
            "max_read_bytes",
            "max_grep_matches",
            "max_grep_line_chars",
            "max_list_entries",
            "max_file_bytes",
            "max_total_bytes",
            "max_files",
            "max_directories",
            "max_pattern_chars",
            "grep_scan_bytes",
        ):
            value = getattr(self, name)
            # bool is an int subclass; True as a limit is a mistake, not 1.
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            if value > CONFIG_MAXIMA[name]:
                raise ValueError(
                    f"{name} is {value}; its maximum is {CONFIG_MAXIMA[name]} (a larger "
                    "value would void the documented worst case of one call)"
                )
        seconds = self.grep_seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 < seconds <= MAX_GREP_SECONDS
        ):
            raise ValueError(
                f"grep_seconds must be a number above 0 and at most {MAX_GREP_SECONDS}, got "
                f"{seconds!r}"
            )
        for mount in self.mounts:
            if (
                isinstance(mount.max_bytes, bool)
                or not isinstance(mount.max_bytes, int)
                or mount.max_bytes < 0
            ):
                raise ValueError(
                    f"max_bytes of mount {mount.host_path!r} must be a non-negative integer, "
                    f"got {mount.max_bytes!r}"
                )
        if self.workspace is not None:
            # A relative path from a config file was already joined to its directory by the
            # core (a Path-typed option); one given in code is relative to the working dir.
            workspace = Path(self.workspace).absolute()
            object.__setattr__(self, "workspace", workspace)
            if not workspace.is_dir():
                raise ValueError(
                    f"workspace {str(workspace)!r} is not an existing directory; create it or "
                    "name the project directory the file tools should work on"
                )
            if self.mounts:
                raise ValueError(
                    "mounts copy host files into the in-memory workspace and cannot be combined "
                    "with a workspace directory; drop one of them"
                )
            self.protected_paths()  # an unknown unprotect glob is an error now, not later
        elif self.protect or self.unprotect:
            raise ValueError(
                "protect and unprotect apply to a workspace directory; set workspace too, or "
                "drop them (the in-memory workspace runs nothing on the host)"
            )
        if self.mounts and not self.allowed_host_roots:
            raise ValueError(
                "mounts are configured but allowed_host_roots is empty; list the host "
                "directories mounts may read from"
            )
