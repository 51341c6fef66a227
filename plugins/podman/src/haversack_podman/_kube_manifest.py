"""The Kubernetes objects of one sandbox: its Pod and its deny-all NetworkPolicy, as dicts."""

from __future__ import annotations

import re
from typing import Any, Final

from ._config import SandboxConfig
from ._kube_config import KubernetesConfig
from ._labels import OWNER_LABEL, SANDBOX_LABEL

__all__ = [
    "SANDBOX_INIT",
    "POOL_LABEL",
    "QUIESCE_SCRIPT",
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
#: would keep them as zombies), which the shell does while it waits for its ``sleep``.
SANDBOX_INIT: Final = "trap 'exit 0' TERM; while :; do sleep 2147483647; done"
#: Run by exec as the command user between commands, in place of a freezer: ``kill -9 -1``
#: (every process of that user but PID 1 and this shell, atomic against fork), then a look at
#: /proc until nothing but PID 1, its ``sleep`` (started after this check) and zombies is
#: left (a killed process takes a moment to die: up to 40 rounds 50 ms apart). Exit 0:
#: quiet; 1, printing what is left: not quiet.
QUIESCE_SCRIPT: Final = r"""
read -r line < /proc/$$/stat; set -- ${line##*) }; mine=${20}
round=0
while :; do
  kill -9 -1 2>/dev/null
  left=
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    if [ "$pid" = 1 ] || [ "$pid" = $$ ]; then continue; fi
    read -r line < "$dir/stat" 2>/dev/null || continue
    comm=${line#*(}; comm=${comm%) *}
    set -- ${line##*) }
    case $1 in Z|X) continue;; esac
    if [ "$2" = 1 ] && [ "$comm" = sleep ] && [ "${20}" -ge "$mine" ]; then continue; fi
    left="$left $pid($comm,$1)"
  done
  [ -z "$left" ] && exit 0
  round=$((round + 1))
  if [ "$round" -ge 40 ]; then echo "left:$left"; exit 1; fi
  sleep 0.05 2>/dev/null || sleep 1
done
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


def resource_limits(config: SandboxConfig) -> dict[str, str]:
    """The sandbox container's ``resources.limits`` (also its requests)."""
    return {"cpu": f"{round(config.cpus * 1000)}m", "memory": str(config.memory_bytes)}


def _security(config: SandboxConfig) -> dict[str, Any]:
    return {
        "runAsUser": config.uid,
        "runAsGroup": config.gid,
        "runAsNonRoot": config.uid != 0,
        "readOnlyRootFilesystem": config.read_only,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def pod_manifest(
    name: str,
    owner: str,
    config: SandboxConfig,
    kube: KubernetesConfig,
    *,
    pool: str | None = None,
) -> dict[str, Any]:
    """The sandbox Pod: one locked-down container running :data:`SANDBOX_INIT` as the command
    user, the workspace an ``emptyDir`` at /workspace, /tmp an in-memory ``emptyDir`` of
    ``tmpfs_size``, no service account token, no service links, never restarted."""
    labels = {SANDBOX_LABEL: "1", OWNER_LABEL: owner}
    if pool is not None:
        labels[POOL_LABEL] = pool
    limits = resource_limits(config)
    workspace: dict[str, Any] = {}
    if kube.workspace_size is not None:
        workspace["sizeLimit"] = kube.workspace_size
    tmp = {"medium": "Memory", "sizeLimit": str(_bytes(config.tmpfs_size))}
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "activeDeadlineSeconds": kube.active_deadline_s,
        "terminationGracePeriodSeconds": 0,
        "hostname": "sandbox",
        "securityContext": {
            "runAsUser": config.uid,
            "runAsGroup": config.gid,
            "runAsNonRoot": config.uid != 0,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": SANDBOX_CONTAINER,
                "image": config.image,
                "imagePullPolicy": kube.image_pull_policy,
                "command": ["sh", "-c", SANDBOX_INIT],
                "workingDir": _WORKDIR,
                "env": [{"name": key, "value": value} for key, value in config.env.items()],
                "securityContext": _security(config),
                "resources": {"limits": limits, "requests": dict(limits)},
                "volumeMounts": [
                    {"name": "workspace", "mountPath": _WORKDIR},
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
        spec["runtimeClassName"] = kube.runtime_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
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


def _bytes(size: str) -> int:
    from ._config import parse_bytes

    return parse_bytes(size)
