"""haversack-podman: a locked-down Podman sandbox (one long-lived container per session).

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
    from ._cleanup import CleanupReport, cleanup
    from ._config import BUSYBOX_IMAGE, PYTHON_IMAGE, SandboxConfig
    from ._containers_conf import containers_conf_text, podman_env, write_containers_conf
    from ._errors import (
        SandboxError,
        SandboxImageMissingError,
        SandboxUnavailableError,
    )
    from ._images import IMAGE_LABEL, ImageBuild, build_images, image_exists
    from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
    from ._params import EvaluatePythonParams, ShellExecuteParams
    from ._resources import sandbox_bindings
    from ._results import CommandResult
    from ._sandbox import ExecResult, Sandbox
    from ._section import SECTION_KEY, podman_section
    from ._service import PodmanService, ensure_image, get_service, podman_binary, shutdown_services
    from ._tools import MAX_COMMAND_CHARS, MAX_STDIN_BYTES, TOOL_NAMES, podman_tools

_EXPORTS: dict[str, str] = {
    "BUSYBOX_IMAGE": "._config",
    "CleanupReport": "._cleanup",
    "CommandResult": "._results",
    "EvaluatePythonParams": "._params",
    "ExecResult": "._sandbox",
    "IMAGE_LABEL": "._images",
    "ImageBuild": "._images",
    "MAX_COMMAND_CHARS": "._tools",
    "MAX_STDIN_BYTES": "._tools",
    "OWNER_LABEL": "._labels",
    "PID_LABEL": "._labels",
    "PYTHON_IMAGE": "._config",
    "PodmanService": "._service",
    "SANDBOX_LABEL": "._labels",
    "SECTION_KEY": "._section",
    "Sandbox": "._sandbox",
    "SandboxConfig": "._config",
    "SandboxError": "._errors",
    "SandboxImageMissingError": "._errors",
    "SandboxUnavailableError": "._errors",
    "ShellExecuteParams": "._params",
    "TOOL_NAMES": "._tools",
    "build_images": "._images",
    "cleanup": "._cleanup",
    "containers_conf_text": "._containers_conf",
    "ensure_image": "._service",
    "get_service": "._service",
    "image_exists": "._images",
    "podman_binary": "._service",
    "podman_env": "._containers_conf",
    "podman_section": "._section",
    "podman_tools": "._tools",
    "sandbox_bindings": "._resources",
    "shutdown_services": "._service",
    "write_containers_conf": "._containers_conf",
}

__all__ = [
    "BUSYBOX_IMAGE",
    "CleanupReport",
    "CommandResult",
    "EvaluatePythonParams",
    "ExecResult",
    "IMAGE_LABEL",
    "ImageBuild",
    "MAX_COMMAND_CHARS",
    "MAX_STDIN_BYTES",
    "OWNER_LABEL",
    "PID_LABEL",
    "PYTHON_IMAGE",
    "PodmanService",
    "SANDBOX_LABEL",
    "SECTION_KEY",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxImageMissingError",
    "SandboxUnavailableError",
    "ShellExecuteParams",
    "TOOL_NAMES",
    "build_images",
    "cleanup",
    "containers_conf_text",
    "ensure_image",
    "get_service",
    "image_exists",
    "podman_binary",
    "podman_env",
    "podman_section",
    "podman_tools",
    "sandbox_bindings",
    "shutdown_services",
    "write_containers_conf",
]


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
