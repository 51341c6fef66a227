"""The workspace agent as a hostile peer (real Podman, ``@pytest.mark.podman``).

One ``AgentFilesystem`` on a named volume, round after round: its agent sends garbage, an
oversized frame, a non-object, a forged answer or no answer, hangs, exits mid-request, or
its container is killed or removed from outside between requests. Each round must end in one
``WorkspaceAgentError`` with a message (never a hang past the bound, another exception or a
wrong answer), and the next operation must work with the volume's files kept.
"""

from __future__ import annotations

import random
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from haversack_podman import AgentFilesystem, WorkspaceAgentError, podman_binary, podman_env

from ..podman._agent_fixtures import new_volume, remove_volume  # noqa: TID252 - one set-up
from ..podman.test_agent_hostile import _ATTACKS  # noqa: TID252 - the same attacks
from ._harness import budget

pytestmark = pytest.mark.podman

AREA = "workspace-agent"
#: An operation still running after this long is hung (the request deadline is 2 s).
_HANG_S = 60.0

_HOOK = """
import time

_real_dispatch = _Agent.dispatch


def _attack(self, ident, op, a):
    out = sys.stdout.buffer
    path = a.get("path") or ""
    if op == "read_text" and path.startswith("attack-"):
        kind = path[len("attack-") :]
{branches}
        return "after the attack"
    return _real_dispatch(self, ident, op, a)


_Agent.dispatch = _attack
main()
"""


class _Hostile(AgentFilesystem):
    def _program(self) -> str:
        source = super()._program()
        tail = 'if __name__ == "__main__":\n    main()\n'
        branches = "".join(
            f"        if kind == {name!r}:\n            {code}\n" for name, code in _ATTACKS.items()
        )
        return source[: -len(tail)] + _HOOK.replace("{branches}\n", branches)


def _bounded(fn: Any) -> tuple[bool, BaseException | None, Any]:
    """Run ``fn`` in a thread: (ended within the hang bound, its exception, its value)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(_HANG_S)
    return not thread.is_alive(), box.get("error"), box.get("value")


def _engine(*args: str) -> None:
    subprocess.run([podman_binary(), *args], env=podman_env(), capture_output=True, check=False)


def test_a_hostile_agent_costs_one_error_per_round(podman_service: Any, figure, tmp_path: Path):
    fig = figure(AREA, "garbage, oversized, forged, silent, dying, killed and removed agents")
    rounds = budget(9, 40)
    kinds = [*_ATTACKS, "kill_between", "remove_between"]
    rng = random.Random(27)
    volume = new_volume(podman_service)
    fs = _Hostile(podman_service, volume, uid=1000, gid=1000, rpc_timeout=2.0)
    try:
        fs.write("kept.txt", "kept\n")
        for round_ in range(rounds):
            kind = kinds[round_] if round_ < len(kinds) else rng.choice(kinds)
            fig.case()
            if kind == "kill_between":
                _engine("kill", fs.name)
                op = lambda: fs.read_text("kept.txt")  # noqa: E731
            elif kind == "remove_between":
                _engine("rm", "-f", "-t", "0", fs.name)
                op = lambda: fs.read_text("kept.txt")  # noqa: E731
            else:
                op = lambda k=kind: fs.read_text(f"attack-{k}")  # noqa: E731
            ended, error, value = _bounded(op)
            if not fig.check(ended, f"{kind}: still running after {_HANG_S:.0f} s"):
                break
            fig.check(
                isinstance(error, WorkspaceAgentError) and bool(str(error)),
                f"{kind}: {type(error).__name__}: {error!s:.200} (value {value!r:.80})",
            )
            ended, error, value = _bounded(lambda: fs.read_text("kept.txt"))
            fig.check(
                ended and error is None and value == "kept\n",
                f"{kind}: the next operation gave {error!r:.200} / {value!r:.80}",
            )
        fig.note("rounds", rounds)
    finally:
        fs.close()
        remove_volume(podman_service, volume)
    fig.assert_clean()
