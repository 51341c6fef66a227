"""``KubernetesConfig``: where and how the Kubernetes backend runs its sandbox Pods."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from haversack.errors import PackConfigError

__all__ = ["KubernetesConfig"]

#: A DNS-1123 label: what Kubernetes accepts as a namespace or RuntimeClass name.
_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_PULL: Final = ("IfNotPresent", "Always", "Never")


@dataclass(frozen=True, slots=True)
class KubernetesConfig:
    """Where the sandbox Pods run and what a Pod gets besides the ``SandboxConfig``'s
    image, user, limits and environment (see docs/packs/podman.md, "Kubernetes")."""

    kubeconfig: Path | None = field(
        default=None,
        metadata={
            "description": "A kubeconfig file; None: $KUBECONFIG, ~/.kube/config, or the "
            "in-cluster service account, as kubectl finds them."
        },
    )
    context: str | None = field(
        default=None, metadata={"description": "The kubeconfig context; None: the current one."}
    )
    namespace: str | None = field(
        default=None,
        metadata={"description": "The namespace of the Pods; None: the context's, or default."},
    )
    image_pull_policy: str = field(
        default="IfNotPresent",
        metadata={"description": "imagePullPolicy of the sandbox container."},
    )
    runtime_class: str | None = field(
        default=None,
        metadata={
            "description": "runtimeClassName of the Pods (e.g. gvisor or kata): a sandboxing "
            "runtime the cluster provides; None: the node's default runtime."
        },
    )
    workspace_size: str | None = field(
        default=None,
        metadata={"description": "sizeLimit of the workspace emptyDir (e.g. 1Gi); None: none."},
    )
    active_deadline_s: int = field(
        default=24 * 3600,
        metadata={
            "description": "activeDeadlineSeconds of each Pod: the cluster ends a Pod that a "
            "crashed process never deleted after this long."
        },
    )
    start_timeout_s: float = field(
        default=120.0,
        metadata={"description": "Longest a Pod may take to be created and start running."},
    )
    warm_pool: int = field(
        default=0,
        metadata={
            "description": "How many started sandbox Pods to keep ready, so a session's first "
            "command does not wait for a Pod to start (each one is billed while it waits)."
        },
    )

    def __post_init__(self) -> None:
        if self.kubeconfig is not None:
            object.__setattr__(self, "kubeconfig", Path(self.kubeconfig).expanduser())
        problems: list[str] = []
        for name, value in (("namespace", self.namespace), ("runtime_class", self.runtime_class)):
            if value is not None and (len(value) > 63 or not _LABEL.fullmatch(value)):
                problems.append(f"{name} {value!r} is not a DNS-1123 label")
        if self.image_pull_policy not in _PULL:
            problems.append(f"image_pull_policy must be one of {', '.join(_PULL)}")
        if self.active_deadline_s < 60:
            problems.append("active_deadline_s must be at least 60")
        if not (math.isfinite(self.start_timeout_s) and self.start_timeout_s > 0):
            problems.append("start_timeout_s must be a positive number")
        if not 0 <= self.warm_pool <= 64:
            problems.append(f"warm_pool must be between 0 and 64, got {self.warm_pool}")
        if self.workspace_size is not None:
            from ._kube_manifest import parse_quantity

            try:
                parse_quantity(self.workspace_size)
            except ValueError as exc:
                problems.append(f"workspace_size: {exc}")
        if problems:
            raise PackConfigError(
                "Invalid KubernetesConfig: " + "; ".join(problems) + ".", pack="podman"
            )
