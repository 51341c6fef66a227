"""Lifecycle: lazy start, reuse, close leaves nothing, clear errors, cleanup of orphans."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from haversack_podman import (
    BUSYBOX_IMAGE,
    SandboxImageMissingError,
    SandboxUnavailableError,
    cleanup,
    get_service,
    podman_binary,
)

pytestmark = pytest.mark.podman


def test_container_is_lazy_and_reused(sandbox):
    assert sandbox.container_id is None
    assert sandbox.workspace.is_dir()
    sandbox.exec("true")
    first = sandbox.container_id
    sandbox.exec("true")
    assert first is not None
    assert sandbox.container_id == first


def test_close_leaves_no_container_and_no_directory(make_sandbox, containers_with_label):
    sandbox = make_sandbox()
    sandbox.exec("echo x > f")
    label = f"haversack.owner={sandbox.id}"
    assert len(containers_with_label(label)) == 1
    sandbox.close()
    sandbox.close()  # idempotent
    assert containers_with_label(label) == []
    assert not sandbox.workspace.exists()
    with pytest.raises(Exception, match="closed"):
        sandbox.exec("true")


def test_missing_image_gives_clear_error_and_no_leftovers(make_sandbox, containers_with_label):
    sandbox = make_sandbox(image="localhost/haversack-no-such-image:latest")
    with pytest.raises(SandboxImageMissingError, match="build-images"):
        sandbox.exec("true")
    assert containers_with_label(f"haversack.owner={sandbox.id}") == []
    sandbox.close()
    assert not sandbox.workspace.exists()


def test_mounts_are_copied_and_writable_by_agent(make_sandbox, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "data.txt").write_text("v1\n")
    sandbox = make_sandbox(mounts={str(source): "project"})
    result = sandbox.exec("cat project/data.txt && echo v2 >> project/data.txt")
    assert result.exit_code == 0, result.stderr
    assert (sandbox.workspace / "project/data.txt").read_text() == "v1\nv2\n"
    assert (source / "data.txt").read_text() == "v1\n"  # a copy, not a live mount


def test_unreachable_connection_url_is_a_clear_error(podman_service, tmp_path):
    with pytest.raises(SandboxUnavailableError, match="does not answer"):
        get_service(f"unix://{tmp_path}/nothing.sock")


def test_cleanup_removes_orphans_of_dead_processes(podman_service, tmp_path, containers_with_label):
    script = textwrap.dedent(
        f"""
        import os
        from haversack_podman import Sandbox, SandboxConfig
        s = Sandbox(SandboxConfig(image="{BUSYBOX_IMAGE}"))
        s.exec("true")
        print(s.id, s.workspace, s.backend.service._process.pid, flush=True)
        os._exit(0)  # no close, no atexit: leave the container and workspace behind
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    owner, workspace, service_pid = out[0], out[1], int(out[2])
    assert containers_with_label(f"haversack.owner={owner}")
    assert os.path.isdir(workspace)
    report = cleanup()
    assert report.containers >= 1
    assert containers_with_label(f"haversack.owner={owner}") == []
    assert not os.path.exists(workspace)
    assert report.services >= 1
    assert service_pid not in _service_pids_after_exit(service_pid)


def _service_pids_after_exit(pid):
    """``[pid]`` while the process still exists (zombies excluded), else ``[]``."""
    for _ in range(500):  # SIGTERM is asynchronous; give podman up to ~5 s to exit
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return []
        if state in ("Z", "X"):
            return []
        time.sleep(0.01)
    return [pid]


def test_cleanup_spares_live_sandboxes(sandbox, containers_with_label):
    sandbox.start()
    cleanup()
    assert containers_with_label(f"haversack.owner={sandbox.id}") != []
    assert sandbox.exec("echo alive").stdout == "alive\n"


def test_cli_commands(podman_service):
    env = {**os.environ}
    build = subprocess.run(
        [sys.executable, "-m", "haversack_podman", "build-images"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    assert "haversack-sandbox-busybox" in build.stdout
    clean = subprocess.run(
        [sys.executable, "-m", "haversack_podman", "cleanup"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert clean.returncode == 0
    assert clean.stdout.startswith("removed")
    assert podman_binary()


class _Cancelled(BaseException):
    """Stands for the MCP server's cancellation, raised into the thread at any point."""


def test_a_start_interrupted_after_create_is_begun_again(sandbox, monkeypatch):
    """A cancelled first call may stop start() between create and settle; the next call
    must not find a half-made container ("name already in use", or never started)."""
    real_settle = type(sandbox)._settle
    calls = []

    def settle_once_cancelled(self):
        calls.append(1)
        if len(calls) == 1:
            raise _Cancelled
        real_settle(self)

    monkeypatch.setattr(type(sandbox), "_settle", settle_once_cancelled)
    with pytest.raises(_Cancelled):
        sandbox.exec("true")
    assert sandbox.exec("echo after").stdout == "after\n"
    assert len(calls) == 2
    # Settled this time: the container is frozen between commands (layer (a) holds).
    cgroup = sandbox._state.cgroup
    assert cgroup is not None
    assert cgroup.frozen()


def test_a_start_interrupted_before_the_id_was_recorded_reuses_the_name(sandbox):
    """The container exists under the sandbox's own name but the sandbox never learnt it."""
    import json

    from haversack_podman._podman_backend import podman_spec

    api = get_service(None).client.api

    spec = sandbox._spec()
    body = podman_spec(spec, sandbox.backend.workspace_mount(spec))
    created = api.post("/containers/create", data=json.dumps(body))
    assert created.status_code < 400, created.text
    assert sandbox.exec("echo after").stdout == "after\n"
    assert sandbox.container_id != created.json()["Id"]


def test_the_backend_lists_the_sandboxes_it_owns(make_sandbox):
    first, second = make_sandbox(), make_sandbox()
    first.start()
    second.start()
    owned = {item.owner: item for item in first.backend.list_owned()}
    assert owned[first.id].creator_pid == os.getpid()
    assert owned[first.id].ref == first.container_id
    assert owned[first.id].name == first.name
    assert owned[second.id].ref == second.container_id
    first.close()
    assert first.id not in {item.owner for item in second.backend.list_owned()}
    assert second.id in {item.owner for item in second.backend.list_owned()}


def test_a_backend_without_an_engine_pause_is_kept_quiet_by_killing_alone(make_sandbox):
    # What Kubernetes has: no pause. The sandbox is then quiet once the command user's
    # processes are killed and the process list shows the baseline; it is never paused.
    from haversack_podman._backend import BackendCaps
    from haversack_podman._podman_backend import PodmanBackend

    class NoPause(PodmanBackend):
        @property
        def caps(self) -> BackendCaps:
            return BackendCaps("no-pause", True, False, False)

    sandbox = make_sandbox()
    sandbox._backend.__class__ = NoPause
    result = sandbox.exec("setsid sleep 300 & nohup sleep 301 >/dev/null 2>&1 & echo started")
    assert result.stdout == "started\n"
    assert sandbox._state.cgroup is None  # engine mode
    assert sandbox._inspect().status == "running"
    assert sandbox.exec("ps -o user,comm | grep -c '^agent.*sleep' || true").stdout == "0\n"
    with sandbox.quiesced():
        assert sandbox._inspect().status == "running"
