"""Which workspace paths a sandboxed command may not change (git's configuration, hooks...).

TEMPORARY STUB until the core's ``ProtectedPaths`` lands; replaced by it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._config import SandboxConfig

__all__ = ["protected_paths"]

_RULES = (
    (".git", "git runs it on the host"),
    (".git/config", "git runs it on the host"),
    (".git/hooks", "git runs it on the host"),
    (".git/info", "git runs it on the host"),
    (".envrc", "direnv runs it on the host"),
    (".vscode", "the editor runs it on the host"),
)


def protected_paths(config: SandboxConfig) -> Callable[[str], str | None]:
    """Why ``rel`` may not be changed, or None."""

    def match(rel: str) -> str | None:
        for glob, reason in _RULES:
            if rel == glob or rel.startswith(glob + "/") or fnmatch.fnmatchcase(rel, glob):
                if (
                    glob == ".git"
                    and rel.startswith(".git/")
                    and not rel.startswith((".git/config", ".git/hooks", ".git/info"))
                ):
                    continue
                return f"{rel} is protected: {reason}"
        return None

    return match
