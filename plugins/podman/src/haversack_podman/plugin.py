"""Hook implementations of the Podman pack (entry point ``podman``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import haversack

from ._config import SandboxConfig
from ._resources import sandbox_bindings
from ._section import podman_section


@haversack.hookimpl
def config_type() -> type[SandboxConfig]:
    """The pack's options: image, limits, timeouts, network and workspace location."""
    return SandboxConfig


@haversack.hookimpl
def register_sections(
    register: Callable[[haversack.Section[Any]], None], config: SandboxConfig | None
) -> None:
    """Register the ``podman`` section (guidance and the two sandbox tools)."""
    register(podman_section(config))


@haversack.hookimpl
def register_resources(
    register: Callable[[haversack.Binding[Any]], None], config: SandboxConfig | None
) -> None:
    """Bind the session's ``Sandbox`` and its workspace as the ``Filesystem``."""
    for binding in sandbox_bindings(config):
        register(binding)
