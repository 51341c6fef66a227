"""The sandbox is locked down: no network, no root, nothing writable outside /workspace."""

from __future__ import annotations

import contextlib
import socket
import threading

import pytest

import haversack
from haversack.errors import PackConfigError
from haversack_podman import SandboxConfig

pytestmark = pytest.mark.podman


def test_commands_run_as_agent_in_workspace(sandbox):
    result = sandbox.exec("id -u; id -g; pwd")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["1000", "1000", "/workspace"]


def test_no_network_only_loopback(sandbox):
    code = (
        "import socket\n"
        "s = socket.socket(); s.settimeout(2)\n"
        "try:\n    s.connect(('1.1.1.1', 53)); print('connected')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
    )
    result = sandbox.exec(["python3", "-c", code])
    assert result.stdout.startswith("refused"), result
    interfaces = sandbox.exec("tail -n +3 /proc/net/dev | cut -d: -f1")
    assert interfaces.stdout.split() == ["lo"]


def test_cannot_write_outside_workspace(sandbox):
    for path in ("/etc/x", "/usr/x", "/x", "/home/agent/x"):
        result = sandbox.exec(["touch", path])
        assert result.exit_code != 0, path
        assert "Read-only file system" in result.stderr, result.stderr
    ok = sandbox.exec("echo hi > /workspace/a.txt && echo t > /tmp/t && cat /tmp/t")
    assert ok.exit_code == 0, ok.stderr
    host_file = sandbox.workspace / "a.txt"
    assert host_file.read_text() == "hi\n"
    assert (host_file.stat().st_uid, host_file.stat().st_gid) == (1000, 1000)


def test_no_capabilities_and_no_new_privileges(sandbox):
    result = sandbox.exec("grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status")
    fields = dict(line.split(":\t") for line in result.stdout.splitlines())
    assert fields == {"CapPrm": "0000000000000000", "CapEff": "0000000000000000", "NoNewPrivs": "1"}
    assert sandbox.exec("chown 0 /workspace").exit_code != 0


def test_container_carries_labels_and_limits(sandbox, podman_service, containers_with_label):
    sandbox.start()
    assert containers_with_label(f"haversack.owner={sandbox.id}") == [sandbox.container_id[:12]]
    info = podman_service.client.api.get(f"/containers/{sandbox.container_id}/json").json()
    host = info["HostConfig"]
    assert host["ReadonlyRootfs"] is True
    assert host["PidsLimit"] == sandbox.config.pids_limit
    assert host["Memory"] == sandbox.config.memory_bytes
    assert host["NetworkMode"] == "none"
    assert info["Config"]["Labels"]["haversack.sandbox"] == "1"
    # The container's own processes run as another user than the commands (1000:1000).
    assert info["Config"]["User"] == "65534:65534"
    assert sandbox.exec("id -u; id -g").stdout == "1000\n1000\n"


def test_two_sandboxes_have_separate_containers_and_workspaces(make_sandbox):
    first, second = make_sandbox(), make_sandbox()
    assert first.exec("echo one > f.txt").exit_code == 0
    assert second.exec("cat f.txt").exit_code != 0
    assert first.container_id != second.container_id
    assert first.workspace != second.workspace
    assert first.name != second.name
    assert not (second.workspace / "f.txt").exists()


def test_commands_cannot_signal_or_trace_the_containers_own_processes(sandbox):
    # init and ``sleep infinity`` run as 65534: a command (uid 1000, no capabilities) can
    # neither kill them (which would stop the container) nor ptrace them.
    result = sandbox.exec("kill -9 1 $(pidof sleep); kill -9 -1; echo sent")
    assert "sent" in result.stdout
    assert result.stderr.count("not permitted") == 2, result
    program = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for pid in (1, int(os.popen('pidof sleep').read())):\n"
        "    print(libc.ptrace(16, pid, 0, 0), ctypes.get_errno())\n"  # PTRACE_ATTACH
    )
    traced = sandbox.exec(["python3", "-c", program])
    assert traced.stdout == "-1 1\n-1 1\n", traced  # EPERM twice
    assert sandbox.exec("ps -o user,args").stdout.count("nobody") == 2
    assert sandbox.exec("echo alive").stdout == "alive\n"


@pytest.mark.parametrize("network", ["host", "bridge", "slirp4netns"])
def test_a_network_needs_the_risk_named(network, tmp_path):
    # Without the option the mode is refused before any container exists, and the error
    # names the risk and the option that accepts it.
    with pytest.raises(PackConfigError, match="accept_network_risk") as info:
        SandboxConfig(network=network, workspace_root=tmp_path)
    assert "send the workspace" in str(info.value)
    if network == "host":
        assert "127.0.0.1" in str(info.value)
    prompt_config = {"podman": {"network": network, "workspace_root": str(tmp_path)}}
    with pytest.raises(PackConfigError, match="accept_network_risk"):
        haversack.compose(ns="t", key="k", packs=["podman"], config=prompt_config, strict=True)


def test_host_network_reaches_the_hosts_loopback_once_accepted(make_sandbox):
    # The threat the option names, shown for real: a server bound to the host's 127.0.0.1
    # answers a command in a sandbox on the host network.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        served = threading.Thread(target=_answer_once, args=(server,), daemon=True)
        served.start()
        sandbox = make_sandbox(network="host", accept_network_risk=True)
        code = (
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
            "print(s.recv(64).decode())\n"
        )
        result = sandbox.exec(["python3", "-c", code], timeout_s=20)
        served.join(timeout=10)
    assert result.stdout == "host secret\n", result


def _answer_once(server: socket.socket) -> None:
    server.settimeout(30)
    with contextlib.suppress(OSError):
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"host secret")
