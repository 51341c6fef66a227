"""Test helper: a full, comparable dump of a filesystem through its public API."""

from __future__ import annotations

from haversack import Filesystem


def dump(fs: Filesystem) -> dict[str, str | None]:
    """Every path -> its content (``None`` for a directory), root excluded."""
    out: dict[str, str | None] = {}
    stack = [""]
    while stack:
        directory = stack.pop()
        for entry in fs.list(directory):
            if entry.kind == "directory":
                out[entry.path] = None
                stack.append(entry.path)
            else:
                out[entry.path] = fs.read_text(entry.path)
    return out
