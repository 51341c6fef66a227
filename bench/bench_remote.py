"""Remote Podman vs local: ``Sandbox.exec(["true"])`` and ``shell_execute("true")`` both ways.

The remote engine is the test suite's (``tests/podman/_remote_engine.py``): a second Podman
service in its own network and mount namespaces and storage, reached over TCP through a veth
pair, so the figure is the remote backend's own cost (engine-mode quiescence: an exec, the
engine's process list, pause and unpause) plus a link with no real latency. One client
process inside the client namespace times a local and a remote sandbox round-robin, so load
on a shared machine hits both alike. The issue's target: remote at most 1.5 times local.
Needs root, ``ip``/``nsenter``/``unshare``, a working Podman and the pack's images.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

SUITE = "remote"
_TESTS = Path(__file__).resolve().parent.parent / "tests" / "podman"

_CLIENT = """
import time
import haversack
from haversack_podman import PYTHON_IMAGE, Sandbox

def executor(url):
    prompt = haversack.compose(
        ns="bench", key=f"remote-{url is not None}", packs=["podman"],
        config={"podman": {"image": PYTHON_IMAGE, "connection_url": url}}, strict=True,
    )
    return haversack.ToolExecutor(prompt.render(), session=haversack.Session())

def tool(ex):
    def call():
        out = ex.execute("shell_execute", {"command": "true"})
        if not out.success:
            raise RuntimeError(out.render()[:300])
    return call

local, remote = executor(None), executor(URL)
try:
    boxes = {"local": local.resources.get(Sandbox), "remote": remote.resources.get(Sandbox)}
    fns = {
        "sandbox_exec_true_local": lambda: boxes["local"].exec(["true"]),
        "sandbox_exec_true_remote": lambda: boxes["remote"].exec(["true"]),
        "tool_shell_execute_true_local": tool(local),
        "tool_shell_execute_true_remote": tool(remote),
    }
    for fn in fns.values():
        fn(); fn()
    times = {name: [] for name in fns}
    for _ in range(REPEATS):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    result = dict(times=times, kinds={k: b.backend.caps.kind for k, b in boxes.items()},
                  resident={k: b.resident_off for k, b in boxes.items()})
finally:
    local.close()
    remote.close()
"""


def figures(quick: bool) -> dict[str, list[float]]:
    """Seconds per run of each workload."""
    sys.path.insert(0, str(_TESTS))
    from _remote_engine import (  # type: ignore[import-not-found]  # tests/podman, put on sys.path above
        RemoteEngine,
        missing_tools,
    )

    from haversack_podman._containers_conf import containers_conf_text

    why = missing_tools()
    if why is not None:
        raise RuntimeError(f"the remote engine cannot run here: {why}")
    engine = RemoteEngine(containers_conf_text())
    engine.start()
    try:
        repeats = 10 if quick else 40
        out = engine.client_run(f"REPEATS = {repeats}\n" + _CLIENT, timeout=900)
    finally:
        engine.stop()
    if out["kinds"] != {"local": "podman-local", "remote": "podman-remote"}:
        raise RuntimeError(f"unexpected backends: {out['kinds']}")
    if any(off is not None for off in out["resident"].values()):
        raise RuntimeError(f"the resident executor was not used: {out['resident']}")
    times: dict[str, list[float]] = out["times"]
    return times


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure."""
    from _harness import Sample, result

    data = figures(quick)
    out = []
    for name, times in data.items():
        sample = Sample(tuple(times))
        if name.endswith("_local"):
            out.append(result(SUITE, name, sample, notes="floor: local Podman"))
            continue
        floor = name.replace("_remote", "_local")
        out.append(
            result(
                SUITE,
                name,
                sample,
                floor=(floor, Sample(tuple(data[floor]))),
                max_ratio=1.5,
                notes="remote engine over a veth link (no added latency)",
            )
        )
    return out


if __name__ == "__main__":
    for key, times in figures("--quick" in sys.argv).items():
        print(f"{key}: median {statistics.median(times) * 1000:.2f} ms over {len(times)}")
