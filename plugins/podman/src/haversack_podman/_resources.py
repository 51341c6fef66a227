"""The pack's resources: the session's ``Sandbox`` and its workspace as the ``Filesystem``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import Binding, Filesystem, ResourceResolver

from ._config import SandboxConfig
from ._sandbox import Sandbox

if TYPE_CHECKING:
    from haversack.filesystem import DirectoryFilesystem

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


def _workspace(resolver: ResourceResolver) -> DirectoryFilesystem:
    # Imported here: registering the bindings must not load the filesystem.
    from haversack.filesystem import DirectoryFilesystem

    from ._runtime_dir import snapshots_dir

    sandbox = resolver.get(Sandbox)
    user = sandbox.config.workspace is not None
    # Every host-side touch of the workspace (file tools, snapshot, restore, close) waits for
    # the sandbox to be quiet (no command running, its container frozen), so no sandbox
    # process can swap a path underneath; every path is also resolved beneath the root.
    # A user's directory is shared (their editor, other sessions): a failed call undoes only
    # its own changes, the commands' write-backs included, through the one change journal.
    fs = DirectoryFilesystem(
        sandbox.workspace,
        owner=(sandbox.config.uid, sandbox.config.gid),
        storage_parent=snapshots_dir(),
        guard=sandbox.quiesced,
        shared=user,
        protected=sandbox.config.protected_paths() if user else None,
    )
    if fs.journal is not None:
        sandbox.attach_journal(fs.journal.record)
    return fs


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
