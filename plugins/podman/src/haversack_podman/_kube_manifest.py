"""The Kubernetes objects of one sandbox: its Pod and its deny-all NetworkPolicy, as dicts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from ._config import parse_bytes
from ._errors import SandboxError
from ._labels import OWNER_LABEL, SANDBOX_LABEL

if TYPE_CHECKING:
    from ._backend import SandboxSpec
    from ._kube_config import KubernetesConfig

__all__ = [
    "SANDBOX_INIT",
    "POOL_LABEL",
    "COUNT_SCRIPT",
    "SANDBOX_CONTAINER",
    "network_policy",
    "parse_quantity",
    "pod_manifest",
    "resource_limits",
]

#: The container commands run in.
SANDBOX_CONTAINER: Final = "sandbox"
#: The warm pool a Pod was made for (absent on a Pod made for one sandbox).
POOL_LABEL: Final = "haversack.pool"
_WORKDIR: Final = "/workspace"
#: PID 1 of the sandbox container. Kubernetes exec cannot pick a user, so PID 1 runs as the
#: command user too; it must reap the orphans ``kill -9 -1`` leaves to it (a plain ``sleep``
#: would keep them as zombies), which the shell does while it waits for its ``sleep``. It
#: sets no signal handler: the kernel then drops every signal a command sends it (PID 1 of
#: its namespace), so no command can end it; the kubelet's SIGKILL still does.
SANDBOX_INIT: Final = "while :; do sleep 2147483647; done"
#: Counts the container's live processes from /proc, itself left out: the process list
#: ``Container``'s engine-mode quiescence compares with the baseline (PID 1 and its ``sleep``)
#: after ``kill -9 -1``. Kubernetes has no ``top``, so this is one exec. A process counts
#: while any of its threads is not a zombie: a leader that left with a raw ``SYS_exit``
#: looks like a zombie in its own ``stat`` while another thread runs on.
COUNT_SCRIPT: Final = r"""
n=0
for dir in /proc/[0-9]*; do
  [ "${dir#/proc/}" = "$$" ] && continue
  for task in "$dir"/task/*; do
    read -r line < "$task/stat" 2>/dev/null || continue
    set -- ${line##*) }
    case $1 in Z|X) ;; *) n=$((n + 1)); break;; esac
  done
done
echo "$n"
"""
_QUANTITY: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?")
_FACTORS: Final = {
    None: 1,
    "m": 0.001,
    "k": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
}


def parse_quantity(text: str) -> float:
    """A Kubernetes resource quantity (``512Mi``, ``1``, ``500m``, ``1e3`` is refused) as a
    number, so limits read back from the cluster compare whatever form it returns them in."""
    found = _QUANTITY.fullmatch(str(text).strip())
    if found is None:
        raise ValueError(f"{text!r} is not a quantity like 512Mi, 1Gi or 500m")
    return float(found.group(1)) * _FACTORS[found.group(2)]


def resource_limits(spec: SandboxSpec) -> dict[str, str]:
    """The sandbox container's ``resources.limits`` (also its requests): CPU in millicores
    (the finest Kubernetes takes; the read-back check refuses a quota it rounded)."""
    millicores = round(spec.cpu_quota * 1000 / spec.cpu_period)
    return {"cpu": f"{millicores}m", "memory": str(spec.memory_bytes)}


def _security(uid: int, gid: int, read_only: bool) -> dict[str, Any]:
    return {
        "runAsUser": uid,
        "runAsGroup": gid,
        "runAsNonRoot": uid != 0,
        "readOnlyRootFilesystem": read_only,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def pod_manifest(
    spec: SandboxSpec, kube: KubernetesConfig, *, pool: str | None = None
) -> dict[str, Any]:
    """The sandbox Pod of ``spec``: one locked-down container running :data:`SANDBOX_INIT`
    as the command user (Kubernetes exec cannot choose a user, so ``baseline_user`` has no
    place here, and ``cap_add`` no holder: nothing in the Pod runs as root), the workspace an
    ``emptyDir`` at ``workdir``, /tmp an in-memory ``emptyDir`` of ``tmpfs_size``, no
    service account token, no service links, never restarted."""
    if spec.network != "none":
        raise SandboxError(
            f"The Kubernetes backend runs sandboxes with network 'none' only (a deny-all "
            f"NetworkPolicy); {spec.network!r} has no Pod equivalent."
        )
    labels = dict(spec.labels)
    if pool is not None:
        labels[POOL_LABEL] = pool
    uid, gid = spec.workspace_owner
    limits = resource_limits(spec)
    workspace: dict[str, Any] = {}
    if kube.workspace_size is not None:
        workspace["sizeLimit"] = kube.workspace_size
    tmp = {"medium": "Memory", "sizeLimit": str(parse_bytes(spec.tmpfs_size))}
    pod: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "activeDeadlineSeconds": kube.active_deadline_s,
        "terminationGracePeriodSeconds": 0,
        "hostname": spec.hostname,
        "securityContext": {
            "runAsUser": uid,
            "runAsGroup": gid,
            "runAsNonRoot": uid != 0,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": SANDBOX_CONTAINER,
                "image": spec.image,
                "imagePullPolicy": kube.image_pull_policy,
                "command": ["sh", "-c", SANDBOX_INIT],
                "workingDir": spec.workdir,
                "env": [{"name": key, "value": value} for key, value in spec.env.items()],
                "securityContext": _security(uid, gid, spec.read_only),
                "resources": {"limits": limits, "requests": dict(limits)},
                "volumeMounts": [
                    {"name": "workspace", "mountPath": spec.workdir},
                    {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - the Pod's own
                ],
            }
        ],
        "volumes": [
            {"name": "workspace", "emptyDir": workspace},
            {"name": "tmp", "emptyDir": tmp},
        ],
    }
    if kube.runtime_class is not None:
        pod["runtimeClassName"] = kube.runtime_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": spec.name, "labels": labels},
        "spec": pod,
    }


def network_policy(name: str, owner: str) -> dict[str, Any]:
    """A NetworkPolicy that selects the sandbox's Pod and allows no traffic either way (it
    holds only where the cluster's network plugin enforces NetworkPolicies)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "labels": {SANDBOX_LABEL: "1", OWNER_LABEL: owner}},
        "spec": {
            "podSelector": {"matchLabels": {OWNER_LABEL: owner}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [],
            "egress": [],
        },
    }
