"""Hook implementations of the VFS pack (entry point ``vfs``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack

from ._config import VfsConfig
from ._section import vfs_section
from ._workspace import workspace_binding


@haversack.hookimpl
def config_type() -> type[VfsConfig]:
    """The pack's options: limits, host mounts and the read-before-write switch."""
    return VfsConfig


@haversack.hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: VfsConfig | None
) -> None:
    """Register the ``vfs`` section (guidance, the file tools, the policy)."""
    register(vfs_section(config))


@haversack.hookimpl
def register_resources(
    register: Callable[[haversack.Binding[Any]], None], config: VfsConfig | None
) -> None:
    """Bind the workspace ``Filesystem`` as a default another pack's binding replaces."""
    register(workspace_binding(config))
