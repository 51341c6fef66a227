"""What the pack believes about its engine is checked, not assumed: that it shares this
kernel before freezing and killing by cgroup, and that it applied the limits.

A proxy in front of the real engine (``_engine_proxy``) plays what this machine cannot run:
an engine on another kernel whose container pids name local processes, and a rootless
cgroup-v1 engine that drops the limits.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haversack_podman import (
    BUSYBOX_IMAGE,
    PodmanService,
    Sandbox,
    SandboxConfig,
    SandboxError,
    podman_binary,
    podman_env,
)
from haversack_podman._cgroup import ContainerCgroup
from haversack_podman._container import dropped_limits

from ._engine_proxy import EngineProxy, Rewrite

pytestmark = pytest.mark.podman

_INSPECT = re.compile(r"/containers/[^/]+/json")


def _podman(*args: str) -> str:
    return subprocess.run(
        [podman_binary(), *args], env=podman_env(), check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def proxied(podman_service: PodmanService, tmp_path: Path) -> Iterator[Any]:
    """``proxied(rewrite)``: a service reached through an ``EngineProxy`` on a unix socket
    (so, as root, it counts as local), closed at teardown."""
    made: list[tuple[EngineProxy, PodmanService]] = []

    def make(rewrite: Rewrite) -> PodmanService:
        assert podman_service.socket_path is not None
        proxy = EngineProxy(
            tmp_path / f"proxy{len(made)}.sock", podman_service.socket_path, rewrite=rewrite
        )
        service = PodmanService(proxy.url, None, None, 0.0)
        made.append((proxy, service))
        return service

    yield make
    for proxy, service in made:
        service.close()
        proxy.close()


@pytest.fixture
def victim(podman_service: PodmanService) -> Iterator[tuple[str, int]]:
    """An unrelated local container: init, one child as uid 65534 and a background
    process, like a sandbox's baseline plus a job. Yields (name, init pid)."""
    name = f"haversack-victim-{time.monotonic_ns()}"
    _podman(
        "run", "-d", "--name", name, "--init", "--user", "65534:65534", "--network", "none",
        BUSYBOX_IMAGE, "sh", "-c", "sleep 1000 & exec sleep 1001",
    )  # fmt: skip
    try:
        pid = int(_podman("inspect", "--format", "{{.State.Pid}}", name))
        yield name, pid
    finally:
        subprocess.run(
            [podman_binary(), "rm", "-f", "-t", "0", name],
            env=podman_env(),
            capture_output=True,
            check=False,
        )


def test_a_pid_from_another_kernel_never_reaches_a_local_container(
    proxied: Any, victim: tuple[str, int], tmp_path: Path
) -> None:
    name, victim_pid = victim
    victim_cgroup = ContainerCgroup.locate(victim_pid)
    assert victim_cgroup is not None
    victim_tasks = victim_cgroup.tasks()
    assert len(victim_tasks) >= 3  # init, sleep 1001 and the background sleep 1000

    def other_kernel(method: str, path: str, body: Any) -> Any:
        # The engine's pid, read on this host, is the unrelated container's init.
        if method == "GET" and _INSPECT.search(path) and isinstance(body, dict):
            body.setdefault("State", {})["Pid"] = victim_pid
        return body

    service = proxied(other_kernel)
    assert service.local  # a unix socket as root: what the pack used to take as proof
    sandbox = Sandbox(SandboxConfig(image=BUSYBOX_IMAGE, workspace_root=tmp_path), service=service)
    try:
        result = sandbox.exec("sleep 100 & echo started", timeout_s=20)
        assert result.stdout == "started\n", result
        # The victim was neither frozen nor swept ...
        assert victim_cgroup.tasks() == victim_tasks
        assert not victim_cgroup.frozen()
        # ... because the sandbox did not take its cgroup for its own: engine mode.
        assert sandbox._state.cgroup is None
        # And the sandbox's own containment still holds, through the engine.
        left = sandbox.exec("ps -o user,args | grep -c '[s]leep 100' || true", timeout_s=20)
        assert left.stdout.strip() == "0", left
    finally:
        sandbox.close()
    assert _podman("inspect", "--format", "{{.State.Status}}", name) == "running"


def test_the_local_engine_is_proven_and_frozen_by_cgroup(
    podman_service: PodmanService, tmp_path: Path
) -> None:
    # The proof accepts the real thing: the private service's container is on this kernel.
    sandbox = Sandbox(SandboxConfig(image=BUSYBOX_IMAGE, workspace_root=tmp_path))
    try:
        sandbox.start()
        cgroup = sandbox._state.cgroup
        assert cgroup is not None
        assert sandbox.container_id is not None
        assert any(sandbox.container_id in part for part in cgroup.path.parts)
        assert cgroup.frozen()
    finally:
        sandbox.close()


def test_limits_are_read_back_from_the_real_container(
    podman_service: PodmanService, tmp_path: Path
) -> None:
    config = SandboxConfig(
        image=BUSYBOX_IMAGE, workspace_root=tmp_path, memory="300m", cpus=0.5, pids_limit=100
    )
    sandbox = Sandbox(config)
    try:
        sandbox.start()
        state = sandbox._inspect()
    finally:
        sandbox.close()
    assert dropped_limits(config, state) == []
    # What a rootless cgroup-v1 engine reports (measured: Memory 0, PidsLimit 0).
    dropped = dataclasses.replace(state, memory_limit=0, pids_limit=0, cpu_quota=0)
    problems = dropped_limits(config, dropped)
    assert [p.split(":")[0] for p in problems] == ["memory", "CPU quota", "pids limit"]
    assert "asked 314572800, the engine reports 0" in problems[0]


def test_an_engine_that_drops_the_limits_is_refused(
    proxied: Any, tmp_path: Path, containers_with_label: Any
) -> None:
    def rootless_v1(method: str, path: str, body: Any) -> Any:
        if method == "GET" and _INSPECT.search(path) and isinstance(body, dict):
            host = body.setdefault("HostConfig", {})
            host.update(Memory=0, MemorySwap=0, PidsLimit=0)
        return body

    service = proxied(rootless_v1)
    sandbox = Sandbox(SandboxConfig(image=BUSYBOX_IMAGE, workspace_root=tmp_path), service=service)
    try:
        for _ in range(2):
            with pytest.raises(SandboxError, match="did not apply the sandbox's limits") as info:
                sandbox.exec("true", timeout_s=10)
            assert "memory: asked 536870912, the engine reports 0" in str(info.value)
            assert "pids limit: asked 256" in str(info.value)
            assert containers_with_label(f"haversack.owner={sandbox.id}") == []
    finally:
        sandbox.close()
