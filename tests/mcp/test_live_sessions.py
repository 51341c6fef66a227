"""The cap on sessions whose MCP servers run at once in one process (``max_live_sessions``):
each executor (each HTTP session of ``serve``) has its own servers; past the cap the least
recently used idle session's servers are stopped and start again on its next call."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from haversack import Session, ToolExecutor, compose

from .test_hostile_servers import PLAIN, hostile
from .test_startup import _alive, _starts


def _prompt(tmp_path: Path, limit: int, timeout_s: float = 60, **plan):
    command = hostile(tmp_path, tools=[PLAIN], starts=str(tmp_path / "starts"), **plan)
    server = {"command": command, "timeout_s": timeout_s}
    config = {"mcp": {"servers": {"s": server}, "max_live_sessions": limit}}
    return compose(ns="t", key="k", packs=["mcp"], config=config, strict=True).render()


def _wait_dead(pid: int) -> bool:
    for _ in range(1500):
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_idle_sessions_servers_are_stopped_past_the_cap_and_restart(tmp_path):
    rendered = _prompt(tmp_path, 2)
    executors = [ToolExecutor(rendered, session=Session()) for _ in range(3)]
    try:
        for executor in executors:
            assert executor.execute("s_ok", {}).success
        first, second, third = _starts(tmp_path)  # the first took the listing's server over
        # Three sessions against a cap of two: the least recently used one's server stopped.
        assert _wait_dead(first)
        assert _alive(second)
        assert _alive(third)
        # That session is not broken: its next call starts its server again, stopping the
        # now least recently used one's.
        again = executors[0].execute("s_ok", {})
        assert again.success, again.message
        assert len(_starts(tmp_path)) == 4
        assert _wait_dead(second)
        assert _alive(third)
    finally:
        for executor in executors:
            executor.close()
    assert all(_wait_dead(pid) for pid in _starts(tmp_path))


def test_a_busy_session_is_not_stopped_and_the_refusal_names_the_limit(tmp_path):
    calling = tmp_path / "calling"
    rendered = _prompt(tmp_path, 1, timeout_s=30, call_delay=600, calling=str(calling))
    busy = ToolExecutor(rendered, session=Session())
    other = ToolExecutor(rendered, session=Session())
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(busy.execute("s_ok", {})))
    try:
        worker.start()
        for _ in range(3000):  # until the busy session's call reached its server
            if calling.exists():
                break
            time.sleep(0.02)
        assert calling.exists()
        refused = other.execute("s_ok", {})
        assert not refused.success
        assert "max_live_sessions = 1" in refused.message
        assert "raise max_live_sessions" in refused.message
        [listed] = _starts(tmp_path)
        assert _alive(listed)  # the busy session's server kept running
    finally:
        busy.close()  # ends the call in flight
        other.close()
        worker.join(120)
    assert not worker.is_alive()
