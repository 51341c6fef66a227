"""The workspace resource: an ``InMemoryFilesystem`` loaded with the configured host mounts,
or a ``DirectoryFilesystem`` over the project directory the user named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import Binding, Filesystem, ResourceResolver

from ._config import VfsConfig

if TYPE_CHECKING:
    from haversack.filesystem import DirectoryFilesystem

    from ._memory import InMemoryFilesystem

__all__ = ["build_workspace", "workspace_binding"]


def build_workspace(config: VfsConfig | None = None) -> InMemoryFilesystem | DirectoryFilesystem:
    """A fresh workspace for ``config``: the project directory ``config.workspace`` (shared:
    a failed call's own changes are undone on disk, anyone else's kept; the protected paths
    are read-only), else an in-memory workspace with ``config``'s limits and host mounts loaded.

    Raises :class:`~haversack.errors.PackConfigError` for a mount outside the allowed roots
    (or missing) and :class:`~haversack.errors.FilesystemLimitError` for a mount over its
    byte budget.
    """
    cfg = config if config is not None else VfsConfig()
    if cfg.workspace is not None:
        from haversack.filesystem import DirectoryFilesystem

        # The user's directory is shared with them and their tools: a rollback undoes only
        # this workspace's own changes, and what their tools run is protected.
        return DirectoryFilesystem(
            cfg.workspace,
            max_file_bytes=cfg.max_file_bytes,
            shared=True,
            protected=cfg.protected_paths(),
        )
    # Imported here: registering the binding must not load the filesystem (immutables, re2).
    from haversack.filesystem import GrepBudget

    from ._memory import InMemoryFilesystem
    from ._mounts import load_host_mounts

    fs = InMemoryFilesystem(
        max_file_bytes=cfg.max_file_bytes,
        max_total_bytes=cfg.max_total_bytes,
        max_files=cfg.max_files,
        max_directories=cfg.max_directories,
        grep_budget=GrepBudget(max_scan_bytes=cfg.grep_scan_bytes, max_seconds=cfg.grep_seconds),
        max_pattern_chars=cfg.max_pattern_chars,
    )
    if cfg.mounts:
        load_host_mounts(fs, cfg.mounts, allowed_roots=cfg.allowed_host_roots)
    return fs


class _Factory:
    """The binding's factory: builds one workspace per opened registry (per evaluation)."""

    __slots__ = ("config",)

    def __init__(self, config: VfsConfig) -> None:
        self.config = config

    def __call__(self, resolver: ResourceResolver) -> InMemoryFilesystem | DirectoryFilesystem:
        return build_workspace(self.config)

    def __repr__(self) -> str:
        if self.config.workspace is not None:
            return f"haversack_vfs workspace (directory {self.config.workspace})"
        return f"haversack_vfs workspace ({len(self.config.mounts)} mount(s))"


def workspace_binding(config: VfsConfig | None = None) -> Binding[Any]:
    """``Binding(Filesystem, ..., default=True)``: a non-default ``Filesystem`` binding from
    another pack (a sandbox) or the caller replaces it."""
    cfg = config if config is not None else VfsConfig()
    return Binding(Filesystem, _Factory(cfg), default=True)
