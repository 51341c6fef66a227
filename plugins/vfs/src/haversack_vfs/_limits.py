"""The in-memory workspace's default limits (kept apart so the config needs no filesystem)."""

from __future__ import annotations

from typing import Final

# The per-file limit is the filesystem contract's, shared with every workspace.
from haversack.filesystem import DEFAULT_MAX_FILE_BYTES

__all__ = [
    "DEFAULT_MAX_DIRECTORIES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
]

#: Largest total of all files, in UTF-8 bytes (256 MiB).
DEFAULT_MAX_TOTAL_BYTES: Final = 256 * 1024 * 1024
#: Most files the workspace holds.
DEFAULT_MAX_FILES: Final = 50_000
#: Most directories the workspace holds (the root not counted).
DEFAULT_MAX_DIRECTORIES: Final = 20_000
