"""haversack-podman: a locked-down Podman sandbox (one long-lived container per session)."""

from __future__ import annotations

from ._cleanup import CleanupReport, cleanup
from ._config import BUSYBOX_IMAGE, PYTHON_IMAGE, SandboxConfig
from ._containers_conf import containers_conf_text, podman_env, write_containers_conf
from ._errors import SandboxError, SandboxImageMissingError, SandboxUnavailableError
from ._images import IMAGE_LABEL, ImageBuild, build_images, image_exists
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
from ._sandbox import ExecResult, Sandbox
from ._service import PodmanService, ensure_image, get_service, podman_binary, shutdown_services
from ._snapshot import WorkspaceSnapshot, WorkspaceSnapshotter

__all__ = [
    "BUSYBOX_IMAGE",
    "CleanupReport",
    "ExecResult",
    "IMAGE_LABEL",
    "ImageBuild",
    "OWNER_LABEL",
    "PID_LABEL",
    "PYTHON_IMAGE",
    "PodmanService",
    "SANDBOX_LABEL",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxImageMissingError",
    "SandboxUnavailableError",
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
    "shutdown_services",
    "write_containers_conf",
]
