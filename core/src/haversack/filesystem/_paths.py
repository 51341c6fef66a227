"""The one path-normalisation function every filesystem and policy shares."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from haversack.errors import InvalidPathError

__all__ = ["MAX_PATH_DEPTH", "MAX_SEGMENT_LENGTH", "WORKSPACE_MOUNT", "normalize_path"]

#: Where the workspace appears to the model (and inside a sandbox container).
WORKSPACE_MOUNT: Final = "/workspace"
#: Deepest path accepted, in segments.
MAX_PATH_DEPTH: Final = 32
#: Longest single path segment accepted, in characters (ext4's limit in bytes is 255).
MAX_SEGMENT_LENGTH: Final = 255

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _canonical(path: str) -> bool:
    """Whether ``path`` is already what ``_rebuild`` would return: relative, one "/" between
    segments, none "." or "..", no control characters, no surrounding whitespace, within the
    depth and segment limits. Linear in the path's length whatever it holds. (Not a regular
    expression: CPython before 3.11.5 mis-runs possessive quantifiers, and accepted '../x'.)"""
    if not path or path != path.strip() or _CONTROL.search(path):
        return False
    segments = path.split("/", MAX_PATH_DEPTH)
    return len(segments) <= MAX_PATH_DEPTH and all(
        0 < len(segment) <= MAX_SEGMENT_LENGTH and segment not in (".", "..")
        for segment in segments
    )


def normalize_path(path: str, *, mount_point: str = WORKSPACE_MOUNT) -> str:
    """Return the canonical workspace-relative spelling of ``path``.

    Every spelling that reaches the same file gets the same result: surrounding whitespace,
    leading slashes, repeated slashes, ``.`` segments, a trailing slash and a leading
    ``mount_point`` prefix are all removed. The workspace root is ``""``.

    Raises :class:`InvalidPathError` (with a message a model can act on) for ``..``
    segments, control characters, too many segments or an over-long segment. Unicode is
    left exactly as given: no case folding or compatibility mapping, so look-alike
    characters can never turn into ``..``.
    """
    # Separate wrapper: lru_cache needs hashable arguments and must not see non-strings.
    if not isinstance(path, str):
        raise InvalidPathError(f"Path must be a string, got {type(path).__name__}.")
    return _normalize(path, mount_point)


@lru_cache(maxsize=8192)
def _normalize(path: str, mount_point: str) -> str:
    # Cached: a session names the same few paths over and over, and errors are not cached.
    # A path first seen is usually spelled canonically already: one match, no rebuilding.
    if _canonical(path):
        return path
    return _rebuild(path, mount_point)


def _rebuild(path: str, mount_point: str) -> str:
    """The canonical spelling of any ``path``, or ``InvalidPathError``."""
    text = path.strip()
    if _CONTROL.search(text):
        raise InvalidPathError(f"Path {path!r} contains control characters.", path=path)
    mount = mount_point.strip("/")
    segments = [s for s in text.split("/") if s not in ("", ".")]
    if text.startswith("/") and mount:
        mount_parts = mount.split("/")
        if segments[: len(mount_parts)] == mount_parts:
            segments = segments[len(mount_parts) :]
    if ".." in segments:
        raise InvalidPathError(
            f"Path {path!r} uses '..'; paths are relative to the workspace root and cannot "
            "leave it.",
            path=path,
        )
    if len(segments) > MAX_PATH_DEPTH:
        raise InvalidPathError(
            f"Path {path!r} is {len(segments)} levels deep; the limit is {MAX_PATH_DEPTH}.",
            path=path,
        )
    for segment in segments:
        if len(segment) > MAX_SEGMENT_LENGTH:
            raise InvalidPathError(
                f"Path segment {segment[:40]!r}... is {len(segment)} characters long; the "
                f"limit is {MAX_SEGMENT_LENGTH}.",
                path=path,
            )
    return "/".join(segments)
