"""The Podman engine as a hostile peer (real Podman, ``@pytest.mark.podman``).

The sandbox's container removed from outside again and again, a container whose init exits
at once, an engine that holds a request forever or never answers at all (over TCP and over
ssh), an engine that drops the limits, and a network mode asked for without naming its
risk. Each must end in a result with a message (or a precise configuration error), never a
hang, an aborted evaluation or a ``close()`` that raises; after the engine recovers the next
command must work, with the workspace kept.
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haversack import Session, ToolExecutor
from haversack.errors import PackConfigError
from haversack.testing import compose_packs
from haversack_podman import Sandbox, podman_binary, podman_env

from ..podman._engine_proxy import EngineProxy  # noqa: TID252 - the same stand-in engine
from ._harness import Figure, budget

pytestmark = pytest.mark.podman

_INSPECT = re.compile(r"/containers/[^/]+/json")


@contextlib.contextmanager
def _executor(tmp_path: Path, **options: Any) -> Iterator[ToolExecutor]:
    root = tmp_path / "workspaces"
    root.mkdir(exist_ok=True)
    config = {"podman": {"workspace_root": str(root), "default_timeout_s": 10.0, **options}}
    executor = ToolExecutor(
        compose_packs(["vfs", "podman"], config=config).render(), session=Session()
    )
    try:
        yield executor
    finally:
        executor.close()  # must never raise: a raise fails the test


@contextlib.contextmanager
def _tarpit() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def hold() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(server.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in held:
            conn.close()


def _call(fig: Figure, ex: ToolExecutor, label: str, args: dict[str, Any]) -> Any:
    """One ``shell_execute``; a raise is a finding. Returns the result (or None)."""
    fig.case()
    start = time.monotonic()
    try:
        result = ex.execute("shell_execute", args)
    except Exception as exc:  # the finding
        fig.problem(f"{label}: raised {type(exc).__name__}: {exc}")
        return None
    fig.note(f"{label}: wall s", round(time.monotonic() - start, 2))
    fig.check(bool(result.message.strip()), f"{label}: no message for the model")
    return result


def _usable(fig: Figure, ex: ToolExecutor, label: str, *, remote: bool = False) -> None:
    fig.case()
    wrote = ex.execute("write_file", {"path": "/workspace/after.txt", "content": "x"})
    if remote:
        # A tcp:// or ssh:// engine keeps the workspace on the engine: without the workspace
        # agent the file tools answer so (a result, not a raise or a hang).
        fig.check(
            not wrote.success and "need the workspace agent" in wrote.message,
            f"{label}: the file tools broke: {wrote.render()[:200]}",
        )
        return
    fig.check(wrote.success, f"{label}: the file tools broke: {wrote.render()[:200]}")


def test_engine_failures_are_results(podman_service: Any, tmp_path: Path, figure) -> None:
    fig = figure("engine-failures", "removed, failing, stalling, silent, lying engines")

    # The container removed from outside, round after round: recreated, workspace kept.
    with _executor(tmp_path) as ex:
        sandbox = ex.resources.get(Sandbox)
        first = _call(fig, ex, "first command", {"command": "echo kept > kept.txt"})
        fig.check(first is not None and first.success, "the first command failed")
        for n in range(budget(3, 10)):
            subprocess.run(
                [podman_binary(), "rm", "-f", "-t", "0", sandbox.name],
                env=podman_env(),
                capture_output=True,
                check=False,
            )
            label = f"removed from outside #{n}"
            again = _call(fig, ex, label, {"command": "cat kept.txt"})
            if again is None:
                continue
            fig.check(again.success, f"{label}: {again.render()[:300]}")
            text = again.render()
            fig.check("removed from outside" in text, f"{label}: model not told: {text[:300]}")
            fig.check("kept" in (again.value.stdout if again.value else ""), f"{label}: lost")

    # A container whose init exits at once.
    with _executor(tmp_path, env={"PATH": "/nowhere"}) as ex:
        for n in range(2):
            failed = _call(fig, ex, f"cannot start #{n}", {"command": "true", "timeout": 3})
            if failed is not None:
                fig.check(not failed.success, "a container that cannot start succeeded")
                fig.check(
                    "failed to exec pid1" in failed.message,
                    f"the cause is not named: {failed.message[:300]}",
                )
        _usable(fig, ex, "cannot start")

    # An engine that holds the start forever, then recovers.
    stalling = {"on": True}
    assert podman_service.socket_path is not None
    proxy = EngineProxy(
        tmp_path / "stall.sock",
        podman_service.socket_path,
        stall=lambda method, path: stalling["on"] and path.endswith("/start"),
    )
    try:
        with _executor(tmp_path, connection_url=proxy.url) as ex:
            held = _call(fig, ex, "start held", {"command": "true", "timeout": 2})
            if held is not None:
                fig.check(not held.success, "a held start succeeded")
                fig.check("did not answer POST" in held.message, held.message[:300])
            _usable(fig, ex, "start held")
            stalling["on"] = False
            back = _call(fig, ex, "engine back", {"command": "echo back", "timeout": 10})
            fig.check(back is not None and back.success, "no recovery once the engine answered")
    finally:
        proxy.close()

    # An engine that drops the limits (what a rootless cgroup-v1 engine reports).
    def rootless_v1(method: str, path: str, body: Any) -> Any:
        if method == "GET" and _INSPECT.search(path) and isinstance(body, dict):
            body.setdefault("HostConfig", {}).update(Memory=0, MemorySwap=0, PidsLimit=0)
        return body

    proxy = EngineProxy(tmp_path / "drop.sock", podman_service.socket_path, rewrite=rootless_v1)
    try:
        with _executor(tmp_path, connection_url=proxy.url) as ex:
            dropped = _call(fig, ex, "limits dropped", {"command": "true", "timeout": 3})
            if dropped is not None:
                fig.check(not dropped.success, "a sandbox without its limits ran")
                fig.check("did not apply the sandbox's limits" in dropped.message, "no cause")
            _usable(fig, ex, "limits dropped")
    finally:
        proxy.close()

    # Engines that never answer, over TCP and over ssh.
    with _tarpit() as port:
        for url in (
            f"tcp://127.0.0.1:{port}",
            f"ssh://root@127.0.0.1:{port}/run/podman/podman.sock",
        ):
            with _executor(tmp_path, connection_url=url) as ex:
                silent = _call(fig, ex, f"silent {url[:3]}", {"command": "true", "timeout": 2})
                if silent is not None:
                    fig.check(not silent.success, f"{url}: a silent engine succeeded")
                    fig.check("within 4 s" in silent.message, f"unbounded: {silent.message}")
                _usable(fig, ex, f"silent {url[:3]}", remote=True)

    # A network asked for without naming the risk.
    for network in ("host", "bridge"):
        fig.case()
        try:
            compose_packs(["podman"], config={"podman": {"network": network}})
        except PackConfigError as exc:
            fig.check("accept_network_risk" in str(exc), f"{network}: {exc}")
        else:
            fig.problem(f"network {network!r} accepted without accept_network_risk")
    fig.assert_clean()
