"""The remote Podman backend against a real second engine (``_remote_engine``): its own network
and mount namespaces and storage, reached over TCP. Every client runs inside the client
namespace (``client_run``: a fresh interpreter there); the engine's own CLI is used only to
look at what the engine holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from haversack_podman import BUSYBOX_IMAGE, PYTHON_IMAGE

from ._remote_engine import RemoteEngine

pytestmark = pytest.mark.podman


def _owned(engine: RemoteEngine, owner: str) -> tuple[str, str]:
    label = f"label=haversack.owner={owner}"
    containers = engine.engine_cli("ps", "-aq", "--filter", label).stdout.split()
    volumes = engine.engine_cli("volume", "ls", "-q", "--filter", label).stdout.split()
    return " ".join(containers), " ".join(volumes)


def test_commands_run_end_to_end_over_tcp(remote_engine: RemoteEngine, tmp_path: Path) -> None:
    result = remote_engine.client_run(
        f"""
        import json
        from haversack_podman import Sandbox, SandboxConfig
        s = Sandbox(SandboxConfig(image={PYTHON_IMAGE!r}, connection_url=URL,
                                  workspace_root={str(tmp_path)!r}))
        try:
            out = s.exec("echo out; echo err >&2; exit 3")
            fed = s.exec(["cat"], stdin="fed through stdin")
            cwd = s.exec("mkdir -p sub && cd sub && pwd && id -u")
            nested = s.exec("pwd", cwd="sub")
            late = s.exec("sleep 300", timeout_s=1)
            after = s.exec("echo still here")
            api = s.backend.service.client.api
            label = json.dumps({{"label": [f"haversack.owner={{s.id}}"]}})
            listed = api.get("/volumes/json", params={{"filters": label}}).json()
            volumes = [v["Name"] for v in listed]
            result = dict(
                out=[out.exit_code, out.stdout, out.stderr],
                fed=[fed.exit_code, fed.stdout],
                cwd=cwd.stdout, nested=nested.stdout,
                late=[late.exit_code, late.timed_out, late.sandbox_restarted],
                after=after.stdout, resident=s.resident_off,
                caps=[s.backend.caps.kind, s.backend.caps.host_workspace,
                      s.backend.caps.kernel_freezer],
                name=s.name, owner=s.id, mounted=s.mounted, volumes=volumes,
            )
        finally:
            s.close()
        """
    )
    assert result["out"] == [3, "out\n", "err\n"]
    assert result["fed"] == [0, "fed through stdin"]
    assert result["cwd"] == "/workspace/sub\n1000\n"
    assert result["nested"] == "/workspace/sub\n"
    assert result["late"] == [137, True, False]
    assert result["after"] == "still here\n"
    # Through the resident executor, over the same TCP link.
    assert result["resident"] is None
    assert result["caps"] == ["podman-remote", False, False]
    assert result["volumes"] == [f"{result['name']}-workspace"]
    # No host directory was made for it, and closing left nothing on the engine.
    assert result["mounted"] is None
    assert list(tmp_path.iterdir()) == []
    assert _owned(remote_engine, result["owner"]) == ("", "")


def test_the_workspace_is_a_volume_and_the_container_is_locked_down(
    remote_engine: RemoteEngine,
) -> None:
    result = remote_engine.client_run(
        f"""
        from haversack_podman import Sandbox, SandboxConfig
        with Sandbox(SandboxConfig(image={PYTHON_IMAGE!r}, connection_url=URL,
                                   pids_limit=77)) as s:
            first = s.exec("ls -ln -d /workspace; ls /sys/class/net")
            # What the engine says while the sandbox waits for its next command.
            result = dict(name=s.name, ls=first.stdout, info=s._inspect().raw)
        """
    )
    info = result["info"]
    mounts = {m["Destination"]: m for m in info["Mounts"]}
    assert mounts["/workspace"]["Type"] == "volume"
    assert mounts["/workspace"]["Name"] == f"{result['name']}-workspace"
    # Owned by the command user through the volume's options, without a chown.
    assert result["ls"].split()[2:4] == ["1000", "1000"]
    # No network interface but loopback.
    assert result["ls"].split("\n")[1:] == ["lo", ""]
    assert info["HostConfig"]["NetworkMode"] == "none"
    assert info["HostConfig"]["PidsLimit"] == 77
    assert info["HostConfig"]["ReadonlyRootfs"] is True
    assert "CAP_SYS_ADMIN" not in (info["EffectiveCaps"] or [])
    # Between commands the container is paused (engine-mode quiescence).
    assert info["State"]["Status"] == "paused"


def test_nothing_outlives_its_command_on_the_remote(remote_engine: RemoteEngine) -> None:
    result = remote_engine.client_run(
        f"""
        from haversack_podman import Sandbox, SandboxConfig
        count = "ps -o user,comm | grep -c '^agent.*sleep' || true"
        with Sandbox(SandboxConfig(image={PYTHON_IMAGE!r}, connection_url=URL)) as s:
            s.exec("setsid sleep 300 & nohup sleep 301 >/dev/null 2>&1 & echo started")
            left = s.exec(count).stdout
            s.exec("sleep 302 & sleep 303", timeout_s=1)
            after_timeout = s.exec(count).stdout
        result = dict(left=left, after_timeout=after_timeout)
        """
    )
    assert result == {"left": "0\n", "after_timeout": "0\n"}


def test_a_removed_container_is_recreated_with_the_workspace_kept(
    remote_engine: RemoteEngine,
) -> None:
    result = remote_engine.client_run(
        f"""
        import subprocess
        from haversack_podman import Sandbox, SandboxConfig
        with Sandbox(SandboxConfig(image={PYTHON_IMAGE!r}, connection_url=URL)) as s:
            s.exec("echo kept > /workspace/f; echo gone > /tmp/g")
            first = s.container_id
            s.backend.remove(first)  # as 'podman rm -f' on the engine's host would
            again = s.exec("cat /workspace/f; ls /tmp")
            result = dict(out=again.stdout, why=again.restart_reason,
                          restarted=again.sandbox_restarted, new=s.container_id != first)
        """
    )
    assert result["out"] == "kept\n"
    assert "created anew" in result["why"]
    assert result["new"] is True


def test_a_missing_image_is_loaded_onto_the_engine(remote_engine: RemoteEngine) -> None:
    remote_engine.engine_cli("rmi", "-f", BUSYBOX_IMAGE)
    assert remote_engine.engine_cli("image", "exists", BUSYBOX_IMAGE).returncode == 1
    result = remote_engine.client_run(
        f"""
        from haversack_podman import Sandbox, SandboxConfig
        with Sandbox(SandboxConfig(image={BUSYBOX_IMAGE!r}, connection_url=URL,
                                   resident=False)) as s:
            done = s.exec("echo busybox")
        result = dict(out=done.stdout, code=done.exit_code)
        """
    )
    assert result == {"out": "busybox\n", "code": 0}
    assert remote_engine.engine_cli("image", "exists", BUSYBOX_IMAGE).returncode == 0


def test_an_image_nowhere_is_a_clear_error(remote_engine: RemoteEngine) -> None:
    result = remote_engine.client_run(
        """
        from haversack_podman import Sandbox, SandboxConfig, SandboxImageMissingError
        with Sandbox(SandboxConfig(image="localhost/no-such-image:1", connection_url=URL)) as s:
            try:
                s.exec("true")
            except SandboxImageMissingError as exc:
                result = str(exc)
        """
    )
    assert "neither on the Podman engine at tcp://" in result
    assert "nor in this host's store" in result


def test_the_tools_over_tcp_and_file_tools_say_they_need_the_agent(
    remote_engine: RemoteEngine,
) -> None:
    result = remote_engine.client_run(
        """
        import haversack
        from haversack import Session, ToolExecutor
        prompt = haversack.compose(
            ns="test", key="remote", packs=["vfs", "podman"],
            config={"podman": {"connection_url": URL}},
        )
        ex = ToolExecutor(prompt.render(), session=Session())
        try:
            ok = ex.execute("shell_execute", {"command": "echo hi > x; cat x", "timeout": 60})
            py = ex.execute("evaluate_python", {"code": "print(6 * 7)", "timeout": 30})
            failed = ex.execute("shell_execute", {"command": "exit 4", "timeout": 30})
            slow = ex.execute("shell_execute", {"command": "sleep 60", "timeout": 1})
            write = ex.execute("write_file", {"path": "/workspace/a.txt", "content": "a"})
            again = ex.execute("shell_execute", {"command": "cat x", "timeout": 30})
            result = dict(
                ok=[ok.success, ok.value.stdout], py=[py.success, py.value.stdout],
                failed=[failed.success, failed.message],
                slow=[slow.success, slow.value.timed_out],
                write=[write.success, write.message], again=again.value.stdout,
            )
        finally:
            ex.close()
        """
    )
    assert result["ok"] == [True, "hi\n"]
    assert result["py"] == [True, "42\n"]
    assert result["failed"][0] is False
    # Not rolled back on a remote engine yet: the model is told so, not the opposite.
    assert "NOT undone" in result["failed"][1]
    assert result["slow"] == [False, True]
    assert result["write"][0] is False
    assert "need the workspace agent" in result["write"][1]
    assert result["again"] == "hi\n"


def test_a_users_directory_is_refused_on_a_remote_engine(
    remote_engine: RemoteEngine, tmp_path: Path
) -> None:
    result = remote_engine.client_run(
        f"""
        from haversack_podman import Sandbox, SandboxConfig, SandboxError
        try:
            Sandbox(SandboxConfig(connection_url=URL, workspace={str(tmp_path)!r}))
        except SandboxError as exc:
            result = str(exc)
        """
    )
    assert "the Podman engine at tcp://" in result
    assert "cannot see it" in result
