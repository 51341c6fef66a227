"""The Python kernel's state against a model, under failed calls at random points.

A random run of ``Sandbox.python`` calls, driven the way the executor drives a call (a
``snapshot`` before it, ``restore`` when it fails): each call assigns some variables and may
fail at a random point of its code (an exception, ``sys.exit``, ``os._exit``, a timeout, a
memory bomb, its process killed from a shell, a thread left running), or succeed and be
rolled back afterwards (a later step of the same call failed). A model holds the variables
of the last call that succeeded and was not rolled back; after every call the kernel's
variables must equal it. Calls that end the kernel (a command's ``kill -9 -1``, garbage
written into the kernel's channel) must say so, and the model starts empty again.
"""

from __future__ import annotations

import random

import pytest

from haversack_podman import PYTHON_IMAGE, Sandbox, SandboxConfig

from ._harness import budget

pytestmark = pytest.mark.podman

AREA = "python-kernel"

#: Code that fails, by how (each one after the assignments before its random point).
FAILURES = {
    "exception": "raise RuntimeError('at a random point')",
    "sys.exit": "import sys; sys.exit(4)",
    "os._exit": "import os; os._exit(0)",
    "killed": "import os, subprocess; subprocess.run(['kill', '-9', str(os.getpid())])",
    "thread left": "import threading, time\n"
    "threading.Thread(target=time.sleep, args=(30,)).start()",
    "memory bomb": "b = []\nwhile True:\n    b.append(bytearray(32 << 20))",
    "timeout": "while True:\n    pass",
}
#: Failures that cost a timeout are rarer.
SLOW = frozenset({"timeout", "memory bomb"})
#: Ways the whole kernel is lost (told, and then nothing is defined).
LOSSES = {
    "killed from a command": None,
    "garbage on its channel": (
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'\\xff' * 64)\n"
        "    except OSError:\n        pass"
    ),
}
_READ = "print(sorted((k, v) for k, v in globals().items() if k.startswith('v_')))"


def _assignments(rng: random.Random) -> list[tuple[str, int]]:
    return [(f"v_{rng.randrange(6)}", rng.randrange(1000)) for _ in range(rng.randrange(1, 5))]


def test_kernel_state_follows_the_last_successful_call(podman_service, tmp_path, figure) -> None:
    fig = figure(AREA, "random calls failing at random points")
    rng = random.Random(2911)
    steps = budget(40, 400)
    counts: dict[str, int] = {}
    sandbox = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace_root=tmp_path, memory="256m"))
    model: dict[str, int] = {}
    lost_pending = False
    try:
        for step in range(steps):
            fig.case()
            roll = rng.random()
            mark = sandbox.snapshot()
            assigned = _assignments(rng)
            if roll < 0.06:
                kind = rng.choice(sorted(LOSSES))
            elif roll < 0.5:
                kind = rng.choice(sorted(FAILURES))
                if kind in SLOW and rng.random() < 0.7:
                    kind = "exception"
            elif roll < 0.65:
                kind = "rolled back"
            else:
                kind = "success"
            counts[kind] = counts.get(kind, 0) + 1
            point = rng.randrange(len(assigned) + 1)
            lines = [f"{name} = {value}" for name, value in assigned]
            if kind == "killed from a command":
                sandbox.exec("kill -9 -1; true")
                result = None
            elif kind in LOSSES:
                result = sandbox.python("\n".join([*lines[:point], LOSSES[kind]]))
            elif kind in FAILURES:
                code = "\n".join([*lines[:point], FAILURES[kind], *lines[point:]])
                result = sandbox.python(code, timeout_s=2)
            else:
                result = sandbox.python("\n".join(lines))
            where = f"step {step} ({kind})"
            if kind in LOSSES:
                model, lost_pending = {}, True
                if result is not None:
                    fig.check(result.exit_code != 0, f"{where}: succeeded: {result}")
                    fig.check("state is lost" in result.stderr, f"{where}: not told: {result}")
                    lost_pending = False
            elif kind in FAILURES:
                fig.check(result is not None and result.exit_code != 0, f"{where}: {result}")
                sandbox.restore(mark)
            elif result is not None and result.exit_code != 0:
                fig.problem(f"{where}: a plain assignment failed: {result}")
                sandbox.restore(mark)
            elif kind == "rolled back":
                sandbox.restore(mark)
            else:
                model.update(assigned)
            sandbox.snapshot()
            seen = sandbox.python(_READ)
            if lost_pending:
                fig.check(
                    "a new kernel was started" in seen.stderr, f"{where}: loss not told: {seen}"
                )
                lost_pending = False
            expected = f"{sorted(model.items())}\n"
            if not fig.check(
                seen.exit_code == 0 and seen.stdout == expected,
                f"{where}: the kernel holds {seen.stdout.strip()!r} ({seen.stderr[-200:]!r}), "
                f"the last successful call left {expected.strip()!r}",
            ):
                model = {}  # resynchronise: one finding per divergence
                sandbox.python_restart()
    finally:
        sandbox.close()
    fig.note("calls by kind", counts)
    fig.assert_clean()
