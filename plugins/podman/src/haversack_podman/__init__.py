"""haversack-podman: a locked-down Podman sandbox (one long-lived container per session)."""

from __future__ import annotations

from ._cleanup import CleanupReport, cleanup
from ._config import BUSYBOX_IMAGE, PYTHON_IMAGE, SandboxConfig
from ._containers_conf import containers_conf_text, podman_env, write_containers_conf
from ._errors import (
    SandboxError,
    SandboxImageMissingError,
    SandboxUnavailableError,
    WorkspaceEscapeError,
)
from ._hostfs import DEFAULT_MAX_FILE_BYTES, HostFilesystem
from ._images import IMAGE_LABEL, ImageBuild, build_images, image_exists
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
from ._params import EvaluatePythonParams, ShellExecuteParams
from ._resources import sandbox_bindings
from ._results import CommandResult
from ._sandbox import ExecResult, Sandbox
from ._section import SECTION_KEY, podman_section
from ._service import PodmanService, ensure_image, get_service, podman_binary, shutdown_services
from ._snapshot import WorkspaceSnapshot, WorkspaceSnapshotter
from ._tools import MAX_COMMAND_CHARS, MAX_STDIN_BYTES, TOOL_NAMES, podman_tools

__all__ = [
    "BUSYBOX_IMAGE",
    "CleanupReport",
    "CommandResult",
    "DEFAULT_MAX_FILE_BYTES",
    "EvaluatePythonParams",
    "ExecResult",
    "HostFilesystem",
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
    "WorkspaceEscapeError",
    "WorkspaceSnapshot",
    "WorkspaceSnapshotter",
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
