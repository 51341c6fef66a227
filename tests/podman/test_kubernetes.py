"""The Kubernetes backend (lightkube) against a cluster: by default the Kubernetes API
stand-in (``_kube_standin``) in front of this worker's real Podman, so real Pods' containers
run the commands over real WebSocket v5 exec; under ``nox -s kubernetes`` (which sets
HAVERSACK_KUBE_REAL=1) the cluster of ``KUBECONFIG``, with the same tests. A few tests need
the stand-in (it plays an admission webhook) and are skipped on a real cluster."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from haversack_podman import (
    OWNER_LABEL,
    PYTHON_IMAGE,
    KubernetesBackend,
    KubernetesConfig,
    Sandbox,
    SandboxConfig,
    SandboxError,
    SandboxUnavailableError,
    WarmPool,
)
from haversack_podman._backend import ExecRequest
from haversack_podman._container import GONE_REASON, sandbox_spec
from haversack_podman._kube import KubeApi
from haversack_podman._output import CappedBuffer
from haversack_podman._service import engine_deadline

from ._kube_standin import KubeStandIn, standin_kubeconfig

REAL = os.environ.get("HAVERSACK_KUBE_REAL") == "1"
#: An image with a POSIX shell, cat, ps, sleep, kill and printf, pullable by the nodes.
REAL_IMAGE = os.environ.get("HAVERSACK_KUBE_IMAGE", "docker.io/library/busybox:1.36")

pytestmark = [] if REAL else [pytest.mark.podman]
standin_only = pytest.mark.skipif(REAL, reason="needs the stand-in (it plays the admission)")
needs_python = pytest.mark.skipif(
    REAL and "python" not in REAL_IMAGE, reason="needs python3 in HAVERSACK_KUBE_IMAGE"
)


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
def make_sandbox(target: Target):
    """Sandboxes on the target cluster, all closed (their Pods deleted) at teardown."""
    made: list[Sandbox] = []

    def make(pool: WarmPool | None = None, **options) -> Sandbox:
        config = SandboxConfig(image=target.config.image, **options)
        sandbox = Sandbox(config, backend=KubernetesBackend(target.kube, pool=pool))
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()


def _owned(api: KubeApi, owner: str) -> list[str]:
    from lightkube.resources.core_v1 import Pod

    pods = api.call("list", lambda c: list(c.list(Pod, labels={OWNER_LABEL: owner})))
    return [pod.metadata.name for pod in pods]


def test_exit_code_output_and_stdin_eof(make_sandbox):
    sandbox = make_sandbox()
    result = sandbox.exec("cat; echo to-stderr >&2; exit 3", stdin="hello\n")
    # cat ended, so the stdin close reached it as EOF.
    assert (result.exit_code, result.stdout, result.stderr) == (3, "hello\n", "to-stderr\n")
    assert not result.timed_out
    assert sandbox.exec("id -u").stdout == f"{sandbox.config.uid}\n"
    # The resident executor needs an open stdin: every command is one exec here.
    assert "stdin in one piece" in (sandbox.resident_off or "")


def test_working_directory_and_environment(make_sandbox):
    sandbox = make_sandbox(env={"FROM_CONFIG": "1"})
    assert sandbox.exec("mkdir -p sub/dir").exit_code == 0
    result = sandbox.exec('pwd; echo "$FOO $FROM_CONFIG"', cwd="sub/dir", env={"FOO": "a b'c"})
    assert (result.exit_code, result.stdout) == (0, "/workspace/sub/dir\na b'c 1\n")
    assert sandbox.exec("true", cwd="missing").exit_code == 126


def test_binary_data_passes_both_ways_intact(target):
    backend = KubernetesBackend(target.kube)
    spec = sandbox_spec(target.config, name="haversack-binary", owner="binary", workspace=None)
    ref = backend.create(spec)
    try:
        backend.start(ref)
        payload = bytes(range(256)) * 2048  # 512 KiB, every byte value
        out, err = CappedBuffer(1 << 22), CappedBuffer(1 << 22)
        exec_id = backend.create_exec(ref, ExecRequest(("cat",), "", "/", stdin=True))
        channel = backend.attach_exec(exec_id, payload, out, err)
        assert channel.pump(time.monotonic() + 60)
        assert channel.exit_code(killed=False) == 0
        assert b"".join(out._chunks) == payload
    finally:
        assert backend.remove(ref)
    assert target.api().get_pod(ref) is None


def test_a_timed_out_command_is_killed_with_everything_it_started(make_sandbox):
    sandbox = make_sandbox()
    result = sandbox.exec("echo started; sleep 301 & exec sleep 300", timeout_s=5)
    assert result.timed_out
    assert result.exit_code == 137
    assert result.stdout == "started\n"
    listing = sandbox.exec("ps").stdout
    assert "sleep 300" not in listing
    assert "sleep 301" not in listing


def test_nothing_a_command_left_running_survives_it(make_sandbox):
    sandbox = make_sandbox()
    assert sandbox.exec("setsid sleep 302 & sleep 303 & exit 0").exit_code == 0
    listing = sandbox.exec("ps").stdout
    assert "sleep 302" not in listing
    assert "sleep 303" not in listing
    assert sandbox.exec("echo still-usable").stdout == "still-usable\n"


def test_close_deletes_the_pod_and_its_network_policy(make_sandbox, target):
    from lightkube import ApiError
    from lightkube.resources.networking_v1 import NetworkPolicy

    sandbox = make_sandbox()
    assert sandbox.exec("true").exit_code == 0
    name = sandbox.container_id
    api = target.api()
    assert api.get_pod(name) is not None
    policy = api.call("get", lambda c: c.get(NetworkPolicy, name))
    assert policy.spec.podSelector.matchLabels == {OWNER_LABEL: sandbox.id}
    assert policy.spec.policyTypes == ["Ingress", "Egress"]
    sandbox.close()
    assert api.get_pod(name) is None
    with pytest.raises(ApiError) as gone:
        api.call("get", lambda c: c.get(NetworkPolicy, name))
    assert gone.value.status.code == 404


def test_a_pod_deleted_from_outside_is_recreated_and_the_model_told(make_sandbox, target):
    sandbox = make_sandbox()
    assert sandbox.exec("true").exit_code == 0
    first = sandbox.container_id
    target.api().delete(first)
    result = sandbox.exec("echo back")
    assert (result.exit_code, result.stdout) == (0, "back\n")
    assert result.restart_reason == GONE_REASON
    assert sandbox.container_id != first


def test_a_pod_that_cannot_start_is_an_error_and_leaves_nothing(target):
    sandbox = Sandbox(
        SandboxConfig(image="localhost/haversack-no-such-image:0"),
        backend=KubernetesBackend(target.kube),
    )
    try:
        with pytest.raises(SandboxError):
            sandbox.exec("true")
        assert _owned(target.api(), sandbox.id) == []
    finally:
        sandbox.close()


@standin_only
def test_limits_the_cluster_rewrote_are_refused(make_sandbox, target):
    def halve_memory(manifest):
        limits = manifest["spec"]["containers"][0]["resources"]["limits"]
        limits["memory"] = str(int(limits["memory"]) // 2)

    target.standin.admit = halve_memory
    sandbox = make_sandbox()
    with pytest.raises(SandboxError, match="did not keep the sandbox's limits"):
        sandbox.exec("true")
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


def _pool_config(target: Target, size: int) -> KubernetesConfig:
    return KubernetesConfig(
        kubeconfig=target.kube.kubeconfig, namespace=target.kube.namespace, warm_pool=size
    )


def test_the_warm_pool_serves_the_first_command_from_a_started_pod(make_sandbox, target):
    pool = WarmPool(target.config, _pool_config(target, 1))
    try:
        pool.fill()
        (warm,) = pool.ready
        # Mark the started Pod, so the command below shows which Pod served it.
        sink = CappedBuffer(1024)
        marked = pool.api.exec(
            warm, ["sh", "-c", "echo warm > /tmp/marker"], stdin=None, stdout=sink,
            stderr=sink, deadline=time.monotonic() + 60,
        )  # fmt: skip
        assert marked == 0
        sandbox = make_sandbox(pool=pool)
        result = sandbox.exec("cat /tmp/marker")
        assert (result.exit_code, result.stdout) == (0, "warm\n")
        assert sandbox.container_id == warm
        assert pool.wait(300), pool.error
        (replacement,) = pool.ready
        assert replacement != warm
        sandbox.close()
        assert pool.api.get_pod(warm) is None
    finally:
        pool.close()
    assert pool.ready == []
    assert pool.api.get_pod(replacement) is None


def test_a_pool_serves_only_sandboxes_of_its_config(make_sandbox, target):
    pool = WarmPool(target.config, _pool_config(target, 1))
    try:
        pool.fill()
        (warm,) = pool.ready
        other = make_sandbox(pool=pool, memory="256m")
        assert other.exec("true").exit_code == 0
        assert other.container_id != warm
        assert pool.ready == [warm]
    finally:
        pool.close()


def test_an_empty_pool_lets_the_backend_create_its_own_pod(make_sandbox, target):
    pool = WarmPool(target.config, _pool_config(target, 1))
    try:
        sandbox = make_sandbox(pool=pool)
        assert sandbox.exec("true").exit_code == 0
        assert sandbox.container_id is not None
        assert sandbox.container_id not in pool.ready
    finally:
        pool.close()


# A writer thread appends every 10 ms; the main thread then leaves with a raw SYS_exit (60 on
# x86-64), so /proc/<pid>/stat shows a zombie while the thread runs (the red team's escape
# from the old group sweep; tests/podman/test_containment.py has the local Podman side).
ZOMBIE_WRITER = r"""
import ctypes, os, sys, threading, time
path = sys.argv[1]
def write():
    while True:
        with open(path, "a") as f:
            f.write("x\n")
        time.sleep(0.01)
threading.Thread(target=write).start()
while not os.path.exists(path):
    time.sleep(0.001)
ctypes.CDLL(None, use_errno=True).syscall(60, 0)
"""


@needs_python
def test_a_zombie_leader_with_a_running_thread_does_not_survive_its_command(make_sandbox):
    sandbox = make_sandbox()
    assert sandbox.exec("cat > /tmp/z.py", stdin=ZOMBIE_WRITER).exit_code == 0
    started = sandbox.exec(
        "python3 /tmp/z.py /workspace/grow.txt > /dev/null 2>&1 & p=$!; "
        "until [ -s /workspace/grow.txt ] && grep -q ') Z' /proc/$p/stat; do sleep 0.01; done"
    )
    assert started.exit_code == 0
    # Each probe gives a survivor 0.3 s to write; the file must not grow across them.
    first = sandbox.exec("sleep 0.3; wc -c < /workspace/grow.txt").stdout
    second = sandbox.exec("sleep 0.3; wc -c < /workspace/grow.txt").stdout
    assert first == second


def test_a_command_cannot_end_pid_1(make_sandbox):
    sandbox = make_sandbox()
    result = sandbox.exec("kill -TERM 1; kill -INT 1; kill -HUP 1; kill -KILL 1; sleep 0.2")
    assert not result.sandbox_restarted
    first = sandbox.container_id
    again = sandbox.exec("echo alive")
    assert (again.stdout, sandbox.container_id) == ("alive\n", first)
    assert not again.restart_reason
