"""The pack's resources: the session's ``Sandbox`` and its workspace as the ``Filesystem``."""

from __future__ import annotations

from typing import Any

from haversack import Binding, Filesystem, ResourceResolver

from ._config import SandboxConfig
from ._sandbox import Sandbox

__all__ = ["sandbox_bindings"]


class _SandboxFactory:
    """Builds one sandbox per opened registry; its container starts on the first command."""

    __slots__ = ("config",)

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config

    def __call__(self, resolver: ResourceResolver) -> Sandbox:
        return Sandbox(self.config)

    def __repr__(self) -> str:
        return f"haversack_podman sandbox ({self.config.image})"


def _workspace(resolver: ResourceResolver) -> Filesystem:
    # The backend's: a host directory (local Podman), or the engine's volume through the
    # workspace agent (remote backends).
    sandbox = resolver.get(Sandbox)
    return sandbox.backend.filesystem(sandbox)


def sandbox_bindings(config: SandboxConfig | None = None) -> tuple[Binding[Any], ...]:
    """``Sandbox`` (singleton, closed with the resources: container and workspace removed)
    and ``Filesystem`` (non-default, so it replaces the VFS pack's in-memory workspace) as
    the sandbox's workspace directory as a :class:`haversack.filesystem.DirectoryFilesystem`,
    guarded by :meth:`Sandbox.quiesced`."""
    cfg = config if config is not None else SandboxConfig()
    return (
        Binding(Sandbox, _SandboxFactory(cfg)),
        Binding(Filesystem, _workspace),
    )
