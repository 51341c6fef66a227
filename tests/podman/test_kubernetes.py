"""The Kubernetes backend (lightkube) against a cluster: by default the Kubernetes API
stand-in (``_kube_standin``) in front of this worker's real Podman, so real Pods' containers
run the commands over real WebSocket v5 exec; under ``nox -s kubernetes`` (which sets
HAVERSACK_KUBE_REAL=1) the cluster of ``KUBECONFIG``, with the same tests. A few tests need
the stand-in (it plays an admission webhook) and are skipped on a real cluster."""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from haversack_podman import (
    OWNER_LABEL,
    PYTHON_IMAGE,
    KubernetesBackend,
    KubernetesConfig,
    PodGoneError,
    SandboxConfig,
    SandboxError,
    SandboxUnavailableError,
    WarmPool,
)
from haversack_podman._kube import KubeApi
from haversack_podman._output import CappedBuffer
from haversack_podman._service import engine_deadline

from ._kube_standin import KubeStandIn, standin_kubeconfig

REAL = os.environ.get("HAVERSACK_KUBE_REAL") == "1"
#: An image with a POSIX shell, cat, ps, sleep, kill and printf, pullable by the nodes.
REAL_IMAGE = os.environ.get("HAVERSACK_KUBE_IMAGE", "docker.io/library/busybox:1.36")

pytestmark = [] if REAL else [pytest.mark.podman]
standin_only = pytest.mark.skipif(REAL, reason="needs the stand-in (it plays the admission)")


@dataclass
class Target:
    kube: KubernetesConfig
    config: SandboxConfig
    standin: KubeStandIn | None

    def api(self) -> KubeApi:
        return KubeApi(self.kube)


@pytest.fixture
def target(request) -> Target:
    if REAL:
        namespace = os.environ.get("HAVERSACK_KUBE_NAMESPACE")
        return Target(KubernetesConfig(namespace=namespace), SandboxConfig(image=REAL_IMAGE), None)
    standin: KubeStandIn = request.getfixturevalue("kube_standin")
    path: Path = request.getfixturevalue("kubeconfig")
    return Target(KubernetesConfig(kubeconfig=path), SandboxConfig(image=PYTHON_IMAGE), standin)


@pytest.fixture
def backend(target: Target):
    made = KubernetesBackend(target.config, target.kube)
    yield made
    made.remove()


def _run(backend, argv, stdin=None, seconds=60.0, **kwargs):
    out, err = CappedBuffer(1 << 22), CappedBuffer(1 << 22)
    code = backend.exec(
        argv,
        stdin=stdin,
        stdout=out,
        stderr=err,
        deadline=time.monotonic() + seconds,
        **kwargs,
    )
    return code, b"".join(out._chunks), b"".join(err._chunks)


def _processes(backend) -> str:
    code, out, _ = _run(backend, ["ps"])
    assert code == 0
    return out.decode()


def _owned(api: KubeApi, owner: str) -> list[str]:
    from lightkube.resources.core_v1 import Pod

    pods = api.call("list", lambda c: list(c.list(Pod, labels={OWNER_LABEL: owner})))
    return [pod.metadata.name for pod in pods]


def test_exit_code_output_and_stdin_eof(backend):
    code, out, err = _run(backend, ["sh", "-c", "cat; echo to-stderr >&2; exit 3"], b"hello\n")
    # cat ended, so the stdin close reached it as EOF.
    assert (code, out, err) == (3, b"hello\n", b"to-stderr\n")
    assert _run(backend, ["id", "-u"])[:2] == (0, f"{backend.config.uid}\n".encode())


def test_binary_data_passes_both_ways_intact(backend):
    payload = bytes(range(256)) * 2048  # 512 KiB, every byte value, no newline structure
    code, out, _ = _run(backend, ["cat"], payload)
    assert code == 0
    assert out == payload


def test_working_directory_and_environment(backend):
    code, out, _ = _run(
        backend, ["sh", "-c", 'pwd; echo "$FOO"'], cwd="/tmp", env={"FOO": "a b'c $HOME"}
    )
    assert (code, out) == (0, b"/tmp\na b'c $HOME\n")
    assert _run(backend, ["true"], cwd="/no/such/dir")[0] == 126


def test_a_command_past_its_deadline_returns_none_and_quiesce_ends_it(backend):
    code, out, _ = _run(backend, ["sh", "-c", "echo started; exec sleep 300"], seconds=10)
    assert (code, out) == (None, b"started\n")
    assert "sleep 300" in _processes(backend)  # it goes on: Kubernetes has no exec kill
    assert backend.quiesce(time.monotonic() + 60), backend.unquiet
    assert "sleep 300" not in _processes(backend)


def test_quiesce_ends_what_a_command_left_running(backend):
    code, _, _ = _run(backend, ["sh", "-c", "setsid sleep 301 & sleep 302 & exit 0"])
    assert code == 0
    before = _processes(backend)
    assert "sleep 301" in before
    assert "sleep 302" in before
    assert backend.quiesce(time.monotonic() + 60), backend.unquiet
    after = _processes(backend)
    assert "sleep 301" not in after
    assert "sleep 302" not in after
    assert _run(backend, ["echo", "still-usable"])[:2] == (0, b"still-usable\n")


def test_remove_deletes_the_pod_and_its_network_policy(backend, target):
    from lightkube import ApiError
    from lightkube.resources.networking_v1 import NetworkPolicy

    name = backend.start()
    api = target.api()
    assert api.get_pod(name) is not None
    policy = api.call("get", lambda c: c.get(NetworkPolicy, name))
    assert policy.spec.podSelector.matchLabels == {OWNER_LABEL: backend.id}
    assert policy.spec.policyTypes == ["Ingress", "Egress"]
    backend.remove()
    assert api.get_pod(name) is None
    with pytest.raises(ApiError) as gone:
        api.call("get", lambda c: c.get(NetworkPolicy, name))
    assert gone.value.status.code == 404


def test_a_pod_deleted_from_outside_is_reported_and_replaced(backend, target):
    first = backend.start()
    target.api().delete(first)
    with pytest.raises(PodGoneError, match=first):
        _run(backend, ["true"])
    second = backend.recreate()
    assert second != first
    assert _run(backend, ["echo", "back"])[:2] == (0, b"back\n")


def test_a_pod_that_cannot_start_is_an_error_and_leaves_nothing(target):
    config = SandboxConfig(image="localhost/haversack-no-such-image:0")
    kube = KubernetesConfig(
        kubeconfig=target.kube.kubeconfig, namespace=target.kube.namespace, start_timeout_s=60
    )
    backend = KubernetesBackend(config, kube)
    with pytest.raises(SandboxError):
        backend.start()
    assert backend.pod is None
    assert _owned(target.api(), backend.id) == []


@standin_only
def test_limits_the_cluster_rewrote_are_refused(target):
    def halve_memory(manifest):
        limits = manifest["spec"]["containers"][0]["resources"]["limits"]
        limits["memory"] = str(int(limits["memory"]) // 2)

    target.standin.admit = halve_memory
    backend = KubernetesBackend(target.config, target.kube)
    with pytest.raises(SandboxError, match="changed the limits"):
        backend.start()
    assert target.standin.pod_names() == []


def test_an_api_that_never_answers_is_bounded(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections, never answers
        path = tmp_path / "kubeconfig"
        path.write_text(standin_kubeconfig(f"http://127.0.0.1:{listener.getsockname()[1]}"))
        api = KubeApi(KubernetesConfig(kubeconfig=path))
        with engine_deadline(1.0), pytest.raises(SandboxUnavailableError, match="did not answer"):
            api.get_pod("anything")


def test_an_unreadable_kubeconfig_is_a_clear_error(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: [")
    with pytest.raises(SandboxUnavailableError, match="Cannot load the Kubernetes configuration"):
        KubeApi(KubernetesConfig(kubeconfig=path))


def test_the_warm_pool_serves_the_first_command_from_a_started_pod(target):
    kube = KubernetesConfig(
        kubeconfig=target.kube.kubeconfig, namespace=target.kube.namespace, warm_pool=1
    )
    pool = WarmPool(target.config, kube)
    try:
        pool.fill()
        (warm,) = pool.ready
        # Mark the started Pod, so the command below shows which Pod served it.
        assert _run_in(pool.api, warm, ["sh", "-c", "echo warm > /tmp/marker"]) == 0
        backend = KubernetesBackend(target.config, kube, pool=pool)
        try:
            code, out, _ = _run(backend, ["cat", "/tmp/marker"])
            assert (code, out) == (0, b"warm\n")
            assert backend.pod == warm
            assert pool.wait(300), pool.error
            (replacement,) = pool.ready
            assert replacement != warm
        finally:
            backend.remove()
        pool.close()
        assert pool.ready == []
        assert pool.api.get_pod(replacement) is None
    finally:
        pool.close()


def test_an_empty_pool_lets_the_backend_create_its_own_pod(target):
    kube = KubernetesConfig(
        kubeconfig=target.kube.kubeconfig, namespace=target.kube.namespace, warm_pool=1
    )
    pool = WarmPool(target.config, kube)
    backend = KubernetesBackend(target.config, kube, pool=pool)
    try:
        assert _run(backend, ["true"])[0] == 0
        assert backend.pod is not None
        assert backend.pod not in pool.ready
    finally:
        backend.remove()
        pool.close()


def _run_in(api: KubeApi, pod: str, argv: list[str]) -> int | None:
    sink = CappedBuffer(1024)
    return api.exec(pod, argv, stdin=None, stdout=sink, stderr=sink, deadline=time.monotonic() + 60)


def test_concurrent_backends_do_not_share_pods(target):
    made = [KubernetesBackend(target.config, target.kube) for _ in range(2)]
    results: list[tuple[int | None, bytes, bytes]] = []
    try:
        threads = [
            threading.Thread(target=lambda b=b: results.append(_run(b, ["hostname"]))) for b in made
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r[0] for r in results] == [0, 0]
        assert made[0].pod != made[1].pod
    finally:
        for b in made:
            b.remove()
