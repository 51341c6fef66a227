"""A workspace agent that breaks its protocol, hangs, dies or is killed mid-request.

Each case must cost the caller one clear ``WorkspaceAgentError`` after bounded work (never a
hang, a crash or an unbounded read), and leave the ``AgentFilesystem`` usable: the agent is
started anew once, the volume's files are kept, snapshots taken before are refused.
The misbehaving agents are the real program with one operation (``read_text`` of
``bad.txt``) replaced by the attack, so everything else about them is genuine.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator

import pytest

from haversack_podman import PodmanService, podman_binary, podman_env
from haversack_podman._agent import AgentFilesystem
from haversack_podman._errors import WorkspaceAgentError

from ._agent_fixtures import new_volume, remove_volume

pytestmark = pytest.mark.podman

_ATTACKS = {
    # Bytes that are not a frame of JSON.
    "garbage": 'out.write(b"\\x00\\x00\\x00\\x05notjs"); out.flush()',
    # A length header far over the cap: the host must not try to read 2 GiB.
    "huge": 'out.write(LENGTH.pack(0x7FFFFFFF) + b"x" * 65536); out.flush()',
    # A frame that is JSON but not an object.
    "not_object": 'out.write(LENGTH.pack(2) + b"[]"); out.flush()',
    # An answer to a request that was never sent.
    "wrong_id": 'self.channel.send({"id": ident + 7, "ok": "forged"})',
    # A frame that is no answer.
    "no_answer": 'self.channel.send({"id": ident, "hello": 1})',
    # Silence: the request's deadline must end the wait.
    "hang": "time.sleep(3600)",
    # The agent process ends mid-request.
    "exit": "os._exit(3)",
}

_HOOK = """
import time

_real_dispatch = _Agent.dispatch


def _attack(self, ident, op, a):
    out = sys.stdout.buffer
    if op == "read_text" and a.get("path") == "bad.txt":
        {attack}
        return "after the attack"
    return _real_dispatch(self, ident, op, a)


_Agent.dispatch = _attack
main()
"""


class _Hostile(AgentFilesystem):
    attack = "hang"

    def _program(self) -> str:
        source = super()._program()
        tail = 'if __name__ == "__main__":\n    main()\n'
        assert source.endswith(tail)
        return source[: -len(tail)] + _HOOK.replace("{attack}", _ATTACKS[self.attack])


@pytest.fixture
def volume(podman_service: PodmanService) -> Iterator[str]:
    name = new_volume(podman_service)
    yield name
    remove_volume(podman_service, name)


def _hostile(service: PodmanService, volume: str, attack: str, timeout: float) -> _Hostile:
    cls = type(f"_Hostile_{attack}", (_Hostile,), {"attack": attack})
    return cls(service, volume, uid=1000, gid=1000, rpc_timeout=timeout)


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("garbage", "not a JSON object"),
        ("huge", "frame of 2147483647 bytes"),
        ("not_object", "not a JSON object"),
        ("wrong_id", "answered request"),
        ("no_answer", "no answer"),
        ("hang", "did not answer in time"),
        ("exit", "closed its channel"),
    ],
)
def test_a_broken_agent_is_one_clear_error_then_started_anew(podman_service, volume, attack, said):
    fs = _hostile(podman_service, volume, attack, timeout=3.0)
    try:
        fs.write("kept.txt", "survives\n")
        snap = fs.snapshot()
        first = fs._container_id
        generation = fs._generation
        with pytest.raises(WorkspaceAgentError, match=said) as info:
            fs.read_text("bad.txt")
        assert "It was started again" in str(info.value)
        assert fs._generation == generation + 1
        assert fs.lost is not None
        # The new agent serves, the volume kept its files, the old snapshot is refused.
        assert fs.read_text("kept.txt") == "survives\n"
        assert fs._container_id != first  # a fresh container, not the broken one
        with pytest.raises(WorkspaceAgentError, match="started again"):
            fs.restore(snap)
    finally:
        fs.close()


def test_an_agent_killed_mid_request_is_an_error_not_a_wait(podman_service, volume):
    # The request hangs in the agent; its container is killed from outside meanwhile. The
    # host sees the channel close long before the request's own (large) deadline.
    fs = _hostile(podman_service, volume, "hang", timeout=600.0)
    try:
        fs.write("kept.txt", "survives\n")
        name = fs.name
        killer = threading.Timer(
            1.0,
            subprocess.run,
            ([podman_binary(), "kill", name],),
            {"env": podman_env(), "capture_output": True, "check": False},
        )
        killer.start()
        try:
            with pytest.raises(WorkspaceAgentError, match="closed its channel"):
                fs.read_text("bad.txt")
        finally:
            killer.join()
        assert fs.read_text("kept.txt") == "survives\n"
    finally:
        fs.close()


def test_an_agent_that_cannot_start_is_a_clear_error(podman_service, volume):
    # No python3 in the busybox image: the start fails with the reason, no hang.
    from haversack_podman import BUSYBOX_IMAGE

    with pytest.raises(WorkspaceAgentError, match="did not start"):
        AgentFilesystem(podman_service, volume, uid=1000, gid=1000, image=BUSYBOX_IMAGE)


def test_an_agent_whose_restart_fails_says_so_and_retries_later(podman_service, volume):
    fs = _hostile(podman_service, volume, "exit", timeout=5.0)
    try:
        fs.image = "localhost/haversack-no-such-image:latest"  # the restart cannot work
        with pytest.raises(WorkspaceAgentError, match="Starting it again failed too"):
            fs.read_text("bad.txt")
        with pytest.raises(WorkspaceAgentError, match="failed"):
            fs.exists("x")  # tries once more, and says why it cannot
    finally:
        fs.close()
