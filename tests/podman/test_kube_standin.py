"""The Kubernetes API stand-in itself (``_kube_standin``), driven by real clients: lightkube
for pods and exec over ``v5.channel.k8s.io``, aiohttp for the ``v4`` negotiation. The
containers are real Podman containers; what the stand-in does not simulate is listed in its
docstring and in docs/packs/podman.md."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from httpx2.websockets import WebSocketUpgradeError
from lightkube import ApiError
from lightkube.resources.core_v1 import Pod

from haversack_podman import PYTHON_IMAGE

pytestmark = pytest.mark.podman


def _pod(name: str, containers: list[dict], volumes: list[dict] | None = None) -> Pod:
    spec: dict = {"containers": containers}
    if volumes is not None:
        spec["volumes"] = volumes
    return Pod.from_dict(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    )


def _container(name: str, uid: int = 1000, mounts: list[dict] | None = None) -> dict:
    return {
        "name": name,
        "image": PYTHON_IMAGE,
        "command": ["sleep", "100000"],
        "securityContext": {"runAsUser": uid, "runAsGroup": uid},
        "volumeMounts": mounts or [],
    }


def test_exec_v5_stdin_close_exit_code_and_binary_output(kube_standin, kube_client):
    kube_client.create(_pod("one", [_container("sandbox")]))
    assert kube_client.get(Pod, "one").status.phase == "Running"
    payload = bytes(range(256)) * 64
    result = kube_client.exec(
        "one",
        command=["sh", "-c", "cat; echo to-stderr >&2; exit 7"],
        stdin=payload,
        stdout=True,
        stderr=True,
        decode=None,
        timeout=30,
    )
    # cat returned, so the v5 close reached its stdin as EOF; bytes came back intact.
    assert result.stdout == payload
    assert result.stderr == b"to-stderr\n"
    assert result.exit_code == 7
    who = kube_client.exec("one", command=["id", "-u"], stdout=True, decode="utf-8", timeout=30)
    assert (who.stdout, who.exit_code) == ("1000\n", 0)
    kube_client.delete(Pod, "one")
    with pytest.raises(ApiError) as gone:
        kube_client.get(Pod, "one")
    assert gone.value.status.code == 404
    assert kube_standin.pod_names() == []


def test_two_containers_share_an_emptydir_and_exec_needs_a_container(kube_client):
    volumes = [{"name": "work", "emptyDir": {}}]
    mount = [{"name": "work", "mountPath": "/workspace"}]
    kube_client.create(
        _pod(
            "two", [_container("sandbox", mounts=mount), _container("agent", mounts=mount)], volumes
        )
    )
    write = kube_client.exec(
        "two", container="agent", command=["sh", "-c", "echo shared > /workspace/f"], timeout=30
    )
    assert write.exit_code == 0
    read = kube_client.exec(
        "two", container="sandbox", command=["cat", "/workspace/f"], stdout=True, timeout=30
    )
    assert read.stdout == "shared\n"
    with pytest.raises(WebSocketUpgradeError) as refused:
        kube_client.exec("two", command=["true"], timeout=30)
    assert refused.value.response.status_code == 400


def test_v4_is_negotiated_and_its_streams_are_bridged(kube_standin, kube_client):
    kube_client.create(_pod("four", [_container("sandbox")]))
    url = f"{kube_standin.url}/api/v1/namespaces/default/pods/four/exec"
    params = [("command", "sh"), ("command", "-c"), ("command", "echo out; exit 4")]
    params += [("stdout", "true"), ("stderr", "true")]

    async def run() -> tuple[str | None, list[bytes]]:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url, params=params, protocols=("v4.channel.k8s.io",)) as ws,
        ):
            frames = [
                message.data async for message in ws if message.type == aiohttp.WSMsgType.BINARY
            ]
            return ws.protocol, frames

    protocol, frames = asyncio.run(run())
    assert protocol == "v4.channel.k8s.io"
    assert frames[0] == b"\x01out\n"
    status = json.loads(frames[-1][1:])
    assert frames[-1][0] == 3
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "4"}]


def test_unknown_pods_and_bad_bodies_are_statuses(kube_client):
    # As against a real apiserver, an exec refused before the upgrade is no ApiError.
    with pytest.raises(WebSocketUpgradeError) as missing:
        kube_client.exec("nope", command=["true"], timeout=30)
    assert missing.value.response.status_code == 404
    kube_client.create(_pod("dup", [_container("sandbox")]))
    with pytest.raises(ApiError) as conflict:
        kube_client.create(_pod("dup", [_container("sandbox")]))
    assert conflict.value.status.code == 409
