"""Errors of the VFS pack, each deriving from the ``haversack.errors`` tree."""

from __future__ import annotations

from haversack.errors import FilesystemError

__all__ = ["InvalidArgumentError", "InvalidPatternError"]


class InvalidArgumentError(FilesystemError):
    """An argument other than the path is unusable: negative offset, bad content, empty text."""


class InvalidPatternError(InvalidArgumentError):
    """A grep regular expression does not compile (or uses syntax the engine refuses)."""
