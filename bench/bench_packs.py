"""Pack discovery and composition: listing must cost about what a bare entry-point scan costs."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import Result, Sample, interpreter, measure, measure_process, result

SUITE = "packs"
REAL = ("planning", "podman", "vfs")
N_DISTS, N_PACKS, TOOLS_PER_PACK = 200, 50, 3
#: What any command line whose packs define dataclasses (params, options) and parse
#: arguments needs from the standard library, before any haversack code runs.
STDLIB_FLOOR = "typing, dataclasses, argparse, pathlib, json, threading"

#: Runs ``haversack render`` in this process and prints how many dataclasses it defined
#: (the core's, the packs' options, params and results): each costs a few compile() calls.
COUNT_DATACLASSES = """
import contextlib, dataclasses, io, runpy, sys
made = []
process = dataclasses._process_class
def counting(cls, *args, **kwargs):
    made.append(cls)
    return process(cls, *args, **kwargs)
dataclasses._process_class = counting
sys.argv = ["haversack", "render"]
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    runpy.run_module("haversack", run_name="__main__")
print(len(made))
"""

#: A process defining ``{count}`` frozen, slotted three-field dataclasses after the stdlib floor.
DEFINE_DATACLASSES = """
import {floor}
from dataclasses import dataclass
for _ in range({count}):
    @dataclass(frozen=True, slots=True)
    class Record:
        \"\"\"A record.\"\"\"
        a: int
        b: str = ""
        c: float = 0.0
"""


def _dataclasses_in_render(python: str, env: dict[str, str]) -> int:
    done = subprocess.run(
        [python, "-c", COUNT_DATACLASSES],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return int(done.stdout.split()[-1])


PACK_SOURCE = """
from haversack import Tool, ToolResult
from haversack.hookspecs import hookimpl

def _ok(params, *, context):
    return ToolResult.ok()

@hookimpl
def register_tools(register):
    for i in range({tools}):
        register(Tool[None, None](name=f"{name}_t{{i}}", description="A tool.", handler=_ok))
"""


def _real_packs_present() -> bool:
    return all(importlib.util.find_spec(f"haversack_{name}.plugin") for name in REAL)


def _site(root: Path) -> list[str]:
    """200 fake distributions, 50 of them packs (3 tools each); returns the pack names."""
    from haversack.testing import write_distribution

    names = []
    for i in range(N_DISTS):
        if i % (N_DISTS // N_PACKS) == 0:
            name = f"synth{i:03d}"
            module = f"hvbench_{name}"
            source = PACK_SOURCE.format(tools=TOOLS_PER_PACK, name=name)
            write_distribution(
                root,
                f"hvbench-{name}",
                entry_points={name: module},
                requires=["haversack>=0.1"],
                modules={module: source},
            )
            names.append(name)
        else:
            write_distribution(root, f"hvbench-lib{i:03d}")
    return names


def _age(root: Path) -> None:
    """Date the fake site back, as an install that is not being written to right now."""
    then = time.time() - 600
    for path in [root, *root.rglob("*")]:
        os.utime(path, (then, then))


def _watch_overhead(repeats: int) -> list[Result]:
    """What naming slow imports costs per pack: the watchdog (every command) and the
    budgeted import thread (packs/check/tools), each around a no-op import."""
    from haversack._packs._watch import watching, within

    def watched() -> None:
        with watching("importing pack 'bench'"):
            pass

    def threaded() -> None:
        within(lambda: None, "importing pack 'bench'", 10.0)

    return [
        result(
            SUITE,
            "watchdog around one pack import (every command)",
            measure(watched, repeats=repeats * 10),
            max_median_s=100e-6,
            notes="one shared daemon thread, started once per process (~0.3 ms, not timed)",
        ),
        result(
            SUITE,
            "budgeted import thread for one pack (packs, check, tools)",
            measure(threaded, repeats=repeats * 10),
            max_median_s=1e-3,
            notes="a daemon thread per pack, so a hanging import is reported, not waited for",
        ),
    ]


def _interleaved(
    commands: dict[str, list[str]], *, repeats: int, env: dict[str, str]
) -> dict[str, Sample]:
    """Whole-process samples of every command, taken in turns (one run of each per round).

    On a shared machine the load drifts during a suite; taking the floors and the workloads
    in the same rounds lets the drift hit them alike, so their ratios stay meaningful.
    """
    for argv in commands.values():  # warm-up: writes the bytecode and discovery caches
        measure_process(argv, repeats=1, warmup=0, env=env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            times[name].extend(measure_process(argv, repeats=1, warmup=0, env=env).times_s)
    return {name: Sample(tuple(found)) for name, found in times.items()}


def _haversack_command(python: str) -> list[str]:
    """The installed ``haversack`` script next to the interpreter, else ``python -m haversack``."""
    script = Path(python).with_name("haversack")
    return [str(script)] if script.is_file() else [python, "-m", "haversack"]


def _processes(names: list[str], root: Path, cache: str, repeats: int) -> list[Result]:
    """The issue's start-up targets, each a whole fresh process against a floor of the run."""
    python = interpreter()
    # As installed: bytecode caches written (the warm-up runs write them).
    skip = ("HAVERSACK_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    # A cache of our own: the warm-up run fills it, the measured runs hit it.
    env["HAVERSACK_CACHE_DIR"] = cache
    if _real_packs_present():
        env["HAVERSACK_PACKS"] = ",".join(REAL)
        what = "the three real packs"
    else:
        env["HAVERSACK_PACKS"] = ",".join(names[:3])
        env["PYTHONPATH"] = str(root)
        what = "3 synthetic packs (real pack plugins not found)"
    haversack = _haversack_command(python)
    defined = _dataclasses_in_render(python, env)
    records = DEFINE_DATACLASSES.format(floor=STDLIB_FLOOR, count=defined)
    scan = "from importlib.metadata import entry_points; entry_points(group='haversack')"
    listing = "import haversack; haversack.discover()"
    warm = _interleaved(
        {
            "pass": [python, "-c", "pass"],
            "stdlib": [python, "-c", f"import {STDLIB_FLOOR}"],
            "records": [python, "-c", records],
            "render": [*haversack, "render"],
            "packs": [*haversack, "packs"],
            "scan": [python, "-c", scan],
            "discover": [python, "-c", listing],
        },
        repeats=repeats,
        env=env,
    )
    cold = _interleaved(
        {
            "pass": [python, "-c", "pass"],
            "scan": [python, "-c", scan],
            "discover": [python, "-c", listing],
            "render": [*haversack, "render"],
        },
        repeats=max(3, repeats // 3),
        env={**env, "HAVERSACK_NO_CACHE": "1"},
    )
    base = ("python -c pass", warm["pass"])
    bare_scan = ("bare entry-point scan process", warm["scan"])
    return [
        result(SUITE, base[0], warm["pass"], notes="floor: interpreter start and exit"),
        result(
            SUITE,
            "the standard library any such CLI imports (whole process)",
            warm["stdlib"],
            floor=base,
            notes=f"python -c 'import {STDLIB_FLOOR}': what the render floor is made of "
            "before a line of haversack or a pack runs (reported, no target)",
        ),
        result(
            SUITE,
            f"the same, then {defined} dataclasses defined (whole process)",
            warm["records"],
            floor=base,
            notes=f"as many frozen slotted dataclasses as haversack render defines ({what}, "
            "counted in this run): the cost of the model's types before any other work",
        ),
        result(
            SUITE,
            "haversack render (whole process)",
            warm["render"],
            floor=base,
            max_ratio=5,
            notes=f"{what}; warm discovery cache; 10.7x before issue 18's start-up work",
        ),
        result(
            SUITE,
            "haversack packs (whole process)",
            warm["packs"],
            floor=base,
            max_ratio=5,
            notes=f"{what} imported; token estimates from the schema cache (no pydantic); "
            "20.0x before issue 18's start-up work",
        ),
        result(
            SUITE,
            bare_scan[0],
            warm["scan"],
            notes=f'floor: python -c "{scan}"',
        ),
        result(
            SUITE,
            "discover() (whole process, lists, imports no pack)",
            warm["discover"],
            floor=bare_scan,
            max_ratio=1.2,
            notes=f'python -c "{listing}"; warm discovery cache',
        ),
        result(
            SUITE,
            "discover(), discovery cache off (whole process)",
            cold["discover"],
            floor=("bare entry-point scan process", cold["scan"]),
            notes="every run scans and checks compatibility (a cache miss); same-round floor",
        ),
        result(
            SUITE,
            "haversack render, discovery cache off (cold)",
            cold["render"],
            floor=(base[0], cold["pass"]),
            notes=f"{what}; every run scans and checks compatibility (a cache miss)",
        ),
    ]


def run(quick: bool) -> list[Result]:
    """Discovery vs a bare scan, compose with 50 packs, and ``haversack render`` vs python."""
    from importlib.metadata import entry_points

    from haversack._packs import compose, discover

    repeats = 5 if quick else 30
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
        root = Path(tmp) / "site"
        root.mkdir()
        names = _site(root)
        sys.path.insert(0, str(root))
        importlib.invalidate_caches()
        # The in-process figures are the scan's: the discovery cache is off for them.
        saved = {k: os.environ.get(k) for k in ("HAVERSACK_NO_CACHE", "HAVERSACK_CACHE_DIR")}
        os.environ["HAVERSACK_NO_CACHE"] = "1"
        os.environ["HAVERSACK_CACHE_DIR"] = cache
        try:
            bare = measure(lambda: list(entry_points(group="haversack")), repeats=repeats)
            floor = ("entry_points(group='haversack') scan", bare)
            results.append(
                result(SUITE, floor[0], bare, notes=f"floor: {N_DISTS} extra dists on sys.path")
            )
            results.append(
                result(
                    SUITE,
                    "discover() (lists, imports nothing)",
                    measure(discover, repeats=repeats),
                    floor=floor,
                    max_ratio=1.5,
                    notes=f"{N_PACKS} packs among {N_DISTS} distributions",
                )
            )
            results.append(
                result(
                    SUITE,
                    f"compose() with {N_PACKS} synthetic packs",
                    measure(lambda: compose(ns="b", key="b", packs=names), repeats=repeats),
                    floor=floor,
                    notes=f"{N_PACKS * TOOLS_PER_PACK} tools; import cost paid once (warm-up)",
                )
            )
            results.extend(_watch_overhead(repeats))
            _age(root)
            del os.environ["HAVERSACK_NO_CACHE"]
            results.append(
                result(
                    SUITE,
                    "discover() with a warm discovery cache",
                    measure(discover, repeats=repeats),
                    floor=floor,
                    notes="stats the path and reads one JSON file instead of scanning",
                )
            )
        finally:
            sys.path.remove(str(root))
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        results.extend(_processes(names, root, cache, repeats))
    return results
