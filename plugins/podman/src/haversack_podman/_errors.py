"""The errors the Podman pack raises, rooted in ``haversack.errors``."""

from __future__ import annotations

from haversack.errors import HaversackError

__all__ = [
    "SandboxError",
    "SandboxImageMissingError",
    "SandboxUnavailableError",
    "WorkspaceAgentError",
]


class SandboxError(HaversackError):
    """A sandbox operation failed (container create, exec, restore...); the message says why."""


class SandboxUnavailableError(SandboxError):
    """Podman cannot be used (binary missing, service unreachable); the message has the fix."""


class SandboxImageMissingError(SandboxUnavailableError):
    """The configured image is not in the local store (images are never pulled)."""


class WorkspaceAgentError(SandboxError):
    """The workspace agent (the volume's file operations in a second container) failed, hung
    or broke its protocol; the message says what happened to it and what was kept."""
