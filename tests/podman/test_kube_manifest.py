"""The Kubernetes objects the backend creates, compared with reviewed golden files
(tests/podman/golden/): a change to the Pod's lock-down shows up as a diff to review.
Regenerate with HAVERSACK_UPDATE_GOLDEN=1 (then read the diff)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from haversack.errors import PackConfigError
from haversack_podman import KubernetesConfig, SandboxConfig, SandboxError
from haversack_podman._container import sandbox_spec
from haversack_podman._kube_manifest import network_policy, parse_quantity, pod_manifest

GOLDEN = Path(__file__).parent / "golden"


def _spec(config: SandboxConfig, name: str, owner: str):
    spec = sandbox_spec(config, name=name, owner=owner, workspace=None)
    # The creator's pid label varies from run to run.
    return dataclasses.replace(spec, labels={**spec.labels, "haversack.pid": "4242"})


def _check(name: str, value: dict) -> None:
    path = GOLDEN / name
    text = json.dumps(value, indent=2, sort_keys=True) + "\n"
    if os.environ.get("HAVERSACK_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text()


def test_default_pod_manifest():
    config = SandboxConfig(image="registry.example/sandbox:1", env={"LANG": "C.UTF-8"})
    manifest = pod_manifest(_spec(config, "haversack-0", "owner0"), KubernetesConfig())
    _check("kube_pod_default.json", manifest)


def test_pod_manifest_with_every_option():
    config = SandboxConfig(
        image="registry.example/sandbox:1",
        memory="1g",
        cpus=0.5,
        user="2000:3000",
        read_only=False,
        tmpfs_size="16m",
    )
    kube = KubernetesConfig(
        image_pull_policy="Always",
        runtime_class="gvisor",
        workspace_size="2Gi",
        active_deadline_s=3600,
    )
    manifest = pod_manifest(_spec(config, "haversack-1", "owner1"), kube, pool="pool1")
    _check("kube_pod_options.json", manifest)


def test_network_policy_denies_everything():
    _check("kube_network_policy.json", network_policy("haversack-0", "owner0"))


def test_the_lockdown_holds_for_any_config():
    """Whatever the configuration, the properties the threat model rests on are there."""
    for user in ("1000:1000", "0:0", "65534:65534"):
        manifest = pod_manifest(_spec(SandboxConfig(user=user), "p", "o"), KubernetesConfig())
        spec = manifest["spec"]
        (container,) = spec["containers"]
        security = container["securityContext"]
        assert spec["automountServiceAccountToken"] is False
        assert spec["enableServiceLinks"] is False
        assert security["allowPrivilegeEscalation"] is False
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}
        assert security["runAsUser"] == int(user.split(":")[0])
        assert security["runAsNonRoot"] is (user != "0:0")
        assert set(container["resources"]["limits"]) == {"cpu", "memory"}
        assert not {"hostNetwork", "hostPID", "hostIPC"} & set(spec)


def test_a_network_other_than_none_is_refused():
    config = SandboxConfig(network="bridge", accept_network_risk=True)
    with pytest.raises(SandboxError, match="network 'none' only"):
        pod_manifest(_spec(config, "p", "o"), KubernetesConfig())


@pytest.mark.parametrize(
    ("text", "value"),
    [("512Mi", 512 * 1024**2), ("1", 1), ("500m", 0.5), ("1.5Gi", 1.5 * 1024**3), ("2k", 2000)],
)
def test_parse_quantity(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1e3", "-1", "5 Mi", "Mi", "1Xi"])
def test_parse_quantity_refuses(text):
    with pytest.raises(ValueError, match="is not a quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"namespace": "Not_A_Label"}, "namespace"),
        ({"runtime_class": "x" * 64}, "runtime_class"),
        ({"image_pull_policy": "Sometimes"}, "image_pull_policy"),
        ({"active_deadline_s": 5}, "active_deadline_s"),
        ({"start_timeout_s": float("nan")}, "start_timeout_s"),
        ({"warm_pool": -1}, "warm_pool"),
        ({"workspace_size": "lots"}, "workspace_size"),
    ],
)
def test_kubernetes_config_refuses(options, message):
    with pytest.raises(PackConfigError, match=message):
        KubernetesConfig(**options)
