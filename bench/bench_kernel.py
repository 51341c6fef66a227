"""The Python kernel vs a fresh ``python3`` per call: ``evaluate_python`` both ways.

Two sandboxes on the python image, each behind its own ToolExecutor: one runs
``evaluate_python`` in its kernel (a fork of the kernel's state per call), the other with the
kernel turned off, which is exactly the path every call took before the kernel (a fresh
``python3 -B -`` through the resident executor, the program on stdin). Timed round-robin in the
same run so load on a shared machine hits both alike. Also: a kernel call while the kernel
holds 100 MB of data (the fork copies page tables, not pages), and a failed call (an
exception, so the state is rolled back). Needs a working Podman and the python image.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from haversack_podman import PYTHON_IMAGE, Sandbox

SUITE = "kernel"
Times = list[float]


def _executor(workspace_root: Path, key: str) -> Any:
    import haversack

    prompt = haversack.compose(
        ns="bench",
        key=key,
        packs=["podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace_root": str(workspace_root)}},
        strict=True,
    )
    return haversack.ToolExecutor(prompt.render(), session=haversack.Session())


def _tool(executor: Any, code: str, *, fails: bool = False) -> Callable[[], object]:
    def call() -> object:
        out = executor.execute("evaluate_python", {"code": code})
        if out.success == fails:
            raise RuntimeError(f"evaluate_python({code!r}): {out.render()[:300]}")
        return out

    return call


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, Times]:
    for fn in fns.values():
        fn()
        fn()
    out: dict[str, Times] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def figures(quick: bool) -> dict[str, Times]:
    """Seconds per run of each workload."""
    repeats = 10 if quick else 40
    with (
        tempfile.TemporaryDirectory() as tmp,
        _executor(Path(tmp), "kernel") as kernel,
        _executor(Path(tmp), "fresh") as fresh,
        _executor(Path(tmp), "loaded") as loaded,
    ):
        fresh_box = fresh.resources.get(Sandbox)
        fresh_box.start()  # a start clears kernel_off: turn it off after
        fresh_box.kernel_off = "turned off by the benchmark (the path before the kernel)"
        _tool(loaded, "data = bytes(range(256)) * 409_600")()  # 100 MiB held by the kernel
        data = _interleaved(
            {
                "tool_evaluate_python_pass_kernel": _tool(kernel, "pass"),
                "tool_evaluate_python_pass_fresh_python3": _tool(fresh, "pass"),
                "tool_evaluate_python_pass_kernel_holding_100MiB": _tool(loaded, "pass"),
                "tool_evaluate_python_exception_kernel": _tool(kernel, "1 / 0", fails=True),
                "tool_evaluate_python_exception_fresh_python3": _tool(fresh, "1 / 0", fails=True),
            },
            repeats,
        )
        boxes = (kernel.resources.get(Sandbox), loaded.resources.get(Sandbox))
        if any(box.kernel_off is not None for box in boxes):
            raise RuntimeError(f"the kernel was not used: {[b.kernel_off for b in boxes]}")
    return data


#: Each kernel figure's floor: the same call through a fresh python3.
_FLOORS = {
    "tool_evaluate_python_pass_kernel": "tool_evaluate_python_pass_fresh_python3",
    "tool_evaluate_python_pass_kernel_holding_100MiB": "tool_evaluate_python_pass_fresh_python3",
    "tool_evaluate_python_exception_kernel": "tool_evaluate_python_exception_fresh_python3",
}


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure."""
    from _harness import Sample, result

    data = figures(quick)
    out = []
    for name, times in data.items():
        sample = Sample(tuple(times))
        floor = _FLOORS.get(name)
        if floor is None:
            out.append(result(SUITE, name, sample))
            continue
        # A kernel call forks a warm interpreter instead of starting one: at most the cost
        # of the fresh start it replaces.
        pair = (floor, Sample(tuple(data[floor])))
        out.append(result(SUITE, name, sample, floor=pair, max_ratio=1.0))
    return out


if __name__ == "__main__":
    for key, times in figures("--quick" in sys.argv).items():
        print(f"{key}: median {statistics.median(times) * 1000:.2f} ms over {len(times)}")
