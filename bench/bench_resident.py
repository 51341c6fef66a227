"""Resident executor vs one engine exec per command: ``shell_execute("true")`` both ways.

Two sandboxes on the python image (the default), one with ``resident`` on and one with it
off, each behind its own ToolExecutor, timed round-robin in the same run so load on a shared
machine hits both alike. The per-exec figure is the floor the resident is judged against
(it must be at least 5 times faster), and the issue's absolute target is a 10 ms median.
Needs a working Podman and the images from ``python -m haversack_podman build-images``.
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

SUITE = "resident"
Times = list[float]


def _executor(workspace_root: Path, *, resident: bool) -> Any:
    import haversack

    prompt = haversack.compose(
        ns="bench",
        key=f"resident-{resident}",
        packs=["podman"],
        config={
            "podman": {
                "image": PYTHON_IMAGE,
                "workspace_root": str(workspace_root),
                "resident": resident,
            }
        },
        strict=True,
    )
    return haversack.ToolExecutor(prompt.render(), session=haversack.Session())


def _tool(executor: Any, command: str) -> Callable[[], object]:
    def call() -> object:
        out = executor.execute("shell_execute", {"command": command})
        if not out.success:
            raise RuntimeError(f"shell_execute({command!r}) failed: {out.render()[:300]}")
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
    repeats = 10 if quick else 60
    with (
        tempfile.TemporaryDirectory() as tmp,
        _executor(Path(tmp), resident=True) as fast,
        _executor(Path(tmp), resident=False) as slow,
    ):
        fast_box, slow_box = fast.resources.get(Sandbox), slow.resources.get(Sandbox)
        data = _interleaved(
            {
                "tool_shell_execute_true_resident": _tool(fast, "true"),
                "tool_shell_execute_true_per_exec": _tool(slow, "true"),
                "sandbox_exec_true_resident": lambda: fast_box.exec(["true"]),
                "sandbox_exec_true_per_exec": lambda: slow_box.exec(["true"]),
                "sandbox_exec_cat_1KiB_stdin_resident": lambda: fast_box.exec(
                    ["cat"], stdin="x" * 1024
                ),
                "sandbox_exec_cat_1KiB_stdin_per_exec": lambda: slow_box.exec(
                    ["cat"], stdin="x" * 1024
                ),
            },
            repeats,
        )
        if fast_box.resident_off is not None or slow_box.resident_off is None:
            raise RuntimeError(
                f"the resident was not used as asked: {fast_box.resident_off!r}, "
                f"{slow_box.resident_off!r}"
            )
    return data


_FLOORS = {
    name: name.replace("_resident", "_per_exec")
    for name in (
        "tool_shell_execute_true_resident",
        "sandbox_exec_true_resident",
        "sandbox_exec_cat_1KiB_stdin_resident",
    )
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
        out.append(
            result(
                SUITE,
                name,
                sample,
                floor=(floor, Sample(tuple(data[floor]))),
                max_ratio=0.2,
                max_median_s=0.010 if name.startswith("tool_") else None,
            )
        )
    return out


if __name__ == "__main__":
    for key, times in figures("--quick" in sys.argv).items():
        print(f"{key}: median {statistics.median(times) * 1000:.2f} ms over {len(times)}")
