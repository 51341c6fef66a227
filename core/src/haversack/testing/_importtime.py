"""How long a pack's plugin module takes to import, measured in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["measure_import"]

# The core and pluggy are imported first: their cost is not the pack's.
_PROGRAM = """
import importlib, sys, time
import haversack, haversack.hookspecs
start = time.perf_counter()
importlib.import_module(sys.argv[1])
print(time.perf_counter() - start)
"""


def measure_import(module: str, *, timeout: float = 60.0) -> float:
    """Seconds to import ``module`` in a new interpreter that has already imported the core.

    The child sees this interpreter's ``sys.path``, so modules a test made importable
    (a fake site, a source tree) are found. Raises ``RuntimeError`` with the child's
    stderr when the import fails.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.pop("PYTHONSTARTUP", None)
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, module.partition(":")[0]],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"Importing {module} in a fresh interpreter failed:\n{done.stderr.strip()}"
        )
    return float(done.stdout.strip().splitlines()[-1])
