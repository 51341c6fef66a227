"""haversack-podman: a locked-down Podman sandbox (one long-lived container per session).

Names are imported on first use (PEP 562), so importing the entry-point module loads only
what the hooks need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright; a test checks this list against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._agent import AgentFilesystem as AgentFilesystem
    from ._cleanup import CleanupReport as CleanupReport
    from ._cleanup import cleanup as cleanup
    from ._config import BUSYBOX_IMAGE as BUSYBOX_IMAGE
    from ._config import PYTHON_IMAGE as PYTHON_IMAGE
    from ._config import SandboxConfig as SandboxConfig
    from ._containers_conf import containers_conf_text as containers_conf_text
    from ._containers_conf import podman_env as podman_env
    from ._containers_conf import write_containers_conf as write_containers_conf
    from ._errors import SandboxError as SandboxError
    from ._errors import SandboxImageMissingError as SandboxImageMissingError
    from ._errors import SandboxUnavailableError as SandboxUnavailableError
    from ._errors import WorkspaceAgentError as WorkspaceAgentError
    from ._images import IMAGE_LABEL as IMAGE_LABEL
    from ._images import ImageBuild as ImageBuild
    from ._images import build_images as build_images
    from ._images import image_exists as image_exists
    from ._kube_backend import KubernetesBackend as KubernetesBackend
    from ._kube_config import KubernetesConfig as KubernetesConfig
    from ._kube_pool import WarmPool as WarmPool
    from ._labels import OWNER_LABEL as OWNER_LABEL
    from ._labels import PID_LABEL as PID_LABEL
    from ._labels import SANDBOX_LABEL as SANDBOX_LABEL
    from ._params import EvaluatePythonParams as EvaluatePythonParams
    from ._params import ShellExecuteParams as ShellExecuteParams
    from ._resources import sandbox_bindings as sandbox_bindings
    from ._results import CommandResult as CommandResult
    from ._sandbox import ExecResult as ExecResult
    from ._sandbox import Sandbox as Sandbox
    from ._section import SECTION_KEY as SECTION_KEY
    from ._section import podman_section as podman_section
    from ._service import PodmanService as PodmanService
    from ._service import ensure_image as ensure_image
    from ._service import get_service as get_service
    from ._service import podman_binary as podman_binary
    from ._service import shutdown_services as shutdown_services
    from ._tools import MAX_COMMAND_CHARS as MAX_COMMAND_CHARS
    from ._tools import MAX_STDIN_BYTES as MAX_STDIN_BYTES
    from ._tools import TOOL_NAMES as TOOL_NAMES
    from ._tools import podman_tools as podman_tools

_EXPORTS: dict[str, str] = {
    "AgentFilesystem": "._agent",
    "BUSYBOX_IMAGE": "._config",
    "CleanupReport": "._cleanup",
    "CommandResult": "._results",
    "EvaluatePythonParams": "._params",
    "ExecResult": "._sandbox",
    "IMAGE_LABEL": "._images",
    "ImageBuild": "._images",
    "KubernetesBackend": "._kube_backend",
    "KubernetesConfig": "._kube_config",
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
    "WarmPool": "._kube_pool",
    "WorkspaceAgentError": "._errors",
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

# Derived from the table so there is no third list to keep; hidden from type checkers, which
# take the ``X as X`` imports above (a computed ``__all__`` would make every name private).
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
