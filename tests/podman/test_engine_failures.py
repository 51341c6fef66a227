"""Failures of the engine are results, never hangs or aborts: a container that cannot start,
one removed from outside, an engine that does not answer."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import haversack
from haversack import Session, ToolExecutor
from haversack_podman import PYTHON_IMAGE, Sandbox, podman_binary, podman_env

from ._engine_proxy import EngineProxy

pytestmark = pytest.mark.podman

MakeExecutor = Callable[..., ToolExecutor]


@pytest.fixture
def make_executor(podman_service: Any, tmp_path: Path) -> Iterator[MakeExecutor]:
    made: list[ToolExecutor] = []

    def make(**options: Any) -> ToolExecutor:
        options.setdefault("image", PYTHON_IMAGE)
        options.setdefault("workspace_root", str(tmp_path))
        prompt = haversack.compose(
            ns="test", key="engine", packs=["vfs", "podman"], config={"podman": options}
        )
        executor = ToolExecutor(prompt.render(), session=Session())
        made.append(executor)
        return executor

    yield make
    for executor in made:
        executor.close()


def _remove_from_outside(name: str) -> None:
    subprocess.run(
        [podman_binary(), "rm", "-f", "-t", "0", name],
        env=podman_env(),
        check=True,
        capture_output=True,
    )


def test_a_container_that_cannot_start_is_an_error_result(
    make_executor: MakeExecutor, containers_with_label: Callable[[str], list[str]]
) -> None:
    # PATH without sleep: the container is created, starts, and its init exits at once.
    ex = make_executor(env={"PATH": "/nowhere"})
    sandbox = ex.resources.get(Sandbox)
    for _ in range(2):  # the executor stays usable, and a second call fails the same way
        result = ex.execute("shell_execute", {"command": "true", "timeout": 5})
        assert not result.success
        assert "stopped right after it started" in result.message, result.message
        assert "failed to exec pid1" in result.message, result.message
        # Nothing of the failed container is left running or lying around.
        assert containers_with_label(f"haversack.owner={sandbox.id}") == []
    written = ex.execute("write_file", {"path": "/workspace/a.txt", "content": "kept\n"})
    assert written.success, written.render()
    assert (sandbox.workspace / "a.txt").read_text() == "kept\n"
    ex.close()  # never raises for it
    assert sandbox.closed


def test_a_removed_container_is_created_anew_and_the_model_told(
    make_executor: MakeExecutor,
) -> None:
    ex = make_executor()
    sandbox = ex.resources.get(Sandbox)
    first = ex.execute("shell_execute", {"command": "echo kept > w.txt && echo lost > /tmp/t"})
    assert first.success, first.render()
    old_id = sandbox.container_id
    assert old_id is not None
    _remove_from_outside(sandbox.name)
    again = ex.execute("shell_execute", {"command": "cat w.txt; ls -A /tmp"})
    assert again.success, again.render()
    assert again.value.stdout == "kept\n"  # the workspace kept, /tmp emptied
    assert sandbox.container_id not in (None, old_id)
    text = again.render()
    assert "removed from outside the sandbox" in text, text
    assert "/tmp is empty" in text, text
    assert "The sandbox container had to be restarted" in again.message
    # Told once: the next command runs in the new container without a notice.
    quiet = ex.execute("shell_execute", {"command": "true"})
    assert quiet.success, quiet.render()
    assert "restarted" not in quiet.render()


def test_a_removed_container_between_calls_does_not_break_file_tools(
    make_executor: MakeExecutor,
) -> None:
    ex = make_executor()
    sandbox = ex.resources.get(Sandbox)
    assert ex.execute("shell_execute", {"command": "true"}).success
    _remove_from_outside(sandbox.name)
    failed = ex.execute("shell_execute", {"command": "echo x > f.txt; exit 3"})
    assert not failed.success
    assert failed.value.exit_code == 3  # it ran, in the new container, and was rolled back
    assert not (sandbox.workspace / "f.txt").exists()
    assert ex.execute("write_file", {"path": "/workspace/g.txt", "content": "g"}).success
    _remove_from_outside(sandbox.name)
    ex.close()


@pytest.fixture
def tarpit() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never says a word."""
    held: list[socket.socket] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def hold() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(server.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in held:
        conn.close()


def _assert_bound(message: str, most: float) -> None:
    """The message names the bound the request was given (what was left of the call's
    timeout plus the engine grace when it was sent), and it is at most ``most``."""
    bound = re.search(r"within ([0-9.]+) s", message)
    assert bound is not None, message
    assert 0 < float(bound.group(1)) <= most, message


def test_an_engine_that_never_answers_is_an_error_within_the_calls_timeout(
    make_executor: MakeExecutor, tarpit: int
) -> None:
    ex = make_executor(connection_url=f"tcp://127.0.0.1:{tarpit}")
    for _ in range(2):
        result = ex.execute("shell_execute", {"command": "true", "timeout": 2})
        assert not result.success
        # Bounded by the call's timeout (2 s) plus the engine grace (2 s), not podman-py's
        # 60 s default per request.
        assert "does not answer" in result.message, result.message
        _assert_bound(result.message, 4.0)
    # The executor stays usable: a tcp:// or ssh:// engine keeps the workspace on the engine,
    # so the file tools answer (without touching the engine) that they need the agent.
    written = ex.execute("write_file", {"path": "/workspace/a.txt", "content": "a"})
    assert not written.success
    assert "need the workspace agent" in written.message, written.message


def test_an_engine_that_stalls_a_start_is_an_error_and_the_sandbox_recovers(
    make_executor: MakeExecutor,
    podman_service: Any,
    tmp_path: Path,
    containers_with_label: Callable[[str], list[str]],
) -> None:
    stalling = {"on": True}

    def stall(method: str, path: str) -> bool:
        return stalling["on"] and method == "POST" and path.endswith("/start")

    proxy = EngineProxy(tmp_path / "engine.sock", podman_service.socket_path, stall=stall)
    try:
        ex = make_executor(connection_url=proxy.url)
        sandbox = ex.resources.get(Sandbox)
        result = ex.execute("shell_execute", {"command": "true", "timeout": 3})
        assert not result.success
        assert proxy.stalled, "the proxy never saw the start"
        assert "did not answer POST" in result.message, result.message
        # The bound the request was given: what was left of timeout (3 s) + grace (2 s).
        bound = re.search(r"/start within ([0-9.]+) s", result.message)
        assert bound is not None, result.message
        assert float(bound.group(1)) <= 5.0
        assert containers_with_label(f"haversack.owner={sandbox.id}") == []
        stalling["on"] = False  # the engine recovers: so does the sandbox
        again = ex.execute("shell_execute", {"command": "echo back", "timeout": 10})
        assert again.success, again.render()
        assert again.value.stdout == "back\n"
        ex.close()
    finally:
        proxy.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("peer", ["refuses", "never answers"])
def test_an_ssh_engine_that_cannot_be_reached_is_an_error_within_the_calls_timeout(
    make_executor: MakeExecutor, tarpit: int, peer: str
) -> None:
    # podman-py's own ssh transport waited 300 s for the tunnel of an ssh that had already
    # failed; the pack's forward watches ssh and the call's deadline.
    port = _closed_port() if peer == "refuses" else tarpit
    ex = make_executor(connection_url=f"ssh://root@127.0.0.1:{port}/run/podman/podman.sock")
    result = ex.execute("shell_execute", {"command": "true", "timeout": 2})
    assert not result.success
    assert "ssh did not forward the Podman socket" in result.message, result.message
    _assert_bound(result.message, 4.0)
    if peer == "refuses":
        assert "Connection refused" in result.message, result.message
    # The executor stays usable: a tcp:// or ssh:// engine keeps the workspace on the engine,
    # so the file tools answer (without touching the engine) that they need the agent.
    written = ex.execute("write_file", {"path": "/workspace/a.txt", "content": "a"})
    assert not written.success
    assert "need the workspace agent" in written.message, written.message


def test_an_engine_that_holds_the_command_start_is_an_error_not_a_hang(
    make_executor: MakeExecutor, podman_service: Any, tmp_path: Path
) -> None:
    # The attached stream's start (POST /exec/<id>/start with Upgrade: tcp) used to be read
    # without any bound: an engine that never answered it held the call forever.
    holding = {"on": True}

    def hold(method: str, path: str) -> bool:
        return holding["on"] and "/exec/" in path and path.endswith("/start")

    proxy = EngineProxy(tmp_path / "engine.sock", podman_service.socket_path, stall=hold)
    try:
        ex = make_executor(connection_url=proxy.url)
        result = ex.execute("shell_execute", {"command": "echo never", "timeout": 2})
        assert not result.success
        assert proxy.stalled, "the proxy never saw the command start"
        assert "did not start the command within" in result.message, result.message
        holding["on"] = False
        again = ex.execute("shell_execute", {"command": "echo back", "timeout": 10})
        assert again.success, again.render()
        assert again.value.stdout == "back\n"
        ex.close()
    finally:
        proxy.close()
