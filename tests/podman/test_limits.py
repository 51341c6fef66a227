"""Limits, timeouts and recovery: the sandbox stays usable after anything a command does."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.podman

LIST_SLEEPS = "ps -o pid,args | grep -c '[s]leep 300' || true"


def test_timeout_kills_command_and_background_grandchildren(sandbox):
    command = "sleep 300 & (sleep 300 &); setsid sleep 300 & sleep 300"
    result = sandbox.exec(command, timeout_s=1)
    assert result.timed_out
    assert result.exit_code == 137
    assert result.duration_s < 10
    assert sandbox.exec(LIST_SLEEPS).stdout.strip() == "0"


def test_background_processes_do_not_outlive_their_command(sandbox):
    started = sandbox.exec("sleep 300 > /dev/null 2>&1 & echo started")
    assert started.stdout == "started\n"
    assert not started.timed_out
    assert sandbox.exec(LIST_SLEEPS).stdout.strip() == "0"


def test_timeout_is_clamped_to_the_configured_maximum(make_sandbox):
    sandbox = make_sandbox(default_timeout_s=1.0, max_timeout_s=2.0)
    result = sandbox.exec("sleep 30", timeout_s=1000)
    assert result.timed_out
    assert result.duration_s < 10


def test_pids_limit_is_enforced(make_sandbox):
    sandbox = make_sandbox(pids_limit=32)
    result = sandbox.exec("for i in $(seq 64); do sleep 5 & done; wait", timeout_s=20)
    assert "can't fork" in result.stderr or "Resource temporarily unavailable" in result.stderr
    assert sandbox.exec("echo ok").stdout == "ok\n"


def test_memory_limit_kills_with_137_and_sandbox_survives(make_sandbox):
    sandbox = make_sandbox(memory="128m")
    result = sandbox.exec(["python3", "-c", "x = bytearray(400 * 1024 * 1024); print('no')"])
    assert result.exit_code == 137
    assert "no" not in result.stdout
    assert sandbox.exec("echo ok").stdout == "ok\n"


def test_fork_bomb_then_usable(make_sandbox):
    sandbox = make_sandbox(pids_limit=64)
    result = sandbox.exec("f(){ f | f & }; f; sleep 300", timeout_s=3)
    # Either the final sleep ran (and timed out) or the bomb left it no pid to fork.
    assert result.timed_out or "can't fork" in result.stderr, result
    after = sandbox.exec("echo ok; ps -o pid | wc -l")
    assert after.stdout.startswith("ok\n"), after
    # init, sleep infinity, the resident executor, sh, ps, wc and the header line
    assert int(after.stdout.split()[1]) <= 7


def test_exhausted_pids_limit_recovers_by_restart(make_sandbox):
    sandbox = make_sandbox(pids_limit=32)
    sandbox.start()
    first_start = sandbox.container_id
    # Processes in their own sessions, left behind on purpose, fill the pids limit.
    sandbox.exec("for i in $(seq 40); do setsid sleep 300 & done; true", timeout_s=20)
    assert sandbox.exec("echo ok").stdout == "ok\n"
    assert sandbox.container_id == first_start


def test_remote_style_timeout_kills_from_inside(make_sandbox, podman_service):
    from haversack_podman import PodmanService

    remote = PodmanService(podman_service.base_url, None, None, 0.0)
    remote.local = False  # take the path used for services on another host
    try:
        sandbox = make_sandbox()
        sandbox.backend.service = remote
        result = sandbox.exec("sleep 300 & sleep 300", timeout_s=1)
        assert result.timed_out
        assert result.exit_code == 137
        assert sandbox.exec(LIST_SLEEPS).stdout.strip() == "0"
        sandbox.close()
    finally:
        remote.client.close()


def test_an_oom_kill_leaves_nothing_in_the_callers_working_directory(
    podman_service, tmp_path, monkeypatch
):
    # conmon drops an "oom" marker in its cwd on an OOM kill; a service started from the
    # caller's cwd used to leave that file in the user's project.
    from haversack_podman import PYTHON_IMAGE, Sandbox, SandboxConfig
    from haversack_podman._service import _start_private

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    service = _start_private()
    try:
        config = SandboxConfig(image=PYTHON_IMAGE, memory="128m", workspace_root=tmp_path)
        with Sandbox(config, service=service) as sandbox:
            killed = sandbox.exec(["python3", "-c", "x = bytearray(400 * 1024 * 1024)"])
            assert killed.exit_code == 137
    finally:
        service.close()
    assert sorted(p.name for p in project.iterdir()) == []
