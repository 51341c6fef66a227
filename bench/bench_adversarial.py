"""Adversarial sizes: every file and planning tool's worst inputs, at default and maximum limits.

Each workload is one tool call through a ``ToolExecutor`` over a prompt composed from the
installed pack, with the hostile input the issue found (or the worst one the limits still
allow). Two figures per workload: the median wall time of the call, and the peak of Python
memory allocated during one call (``tracemalloc``; RE2's own C++ memory is not traced: it is
capped at ``RE2_MAX_MEM`` = 4 MiB per compiled pattern).

Targets (issue 14): at default limits every call under 1 s and under 64 MiB of extra memory;
the 100,000-character grep case under 0.2 s. At maximum limits the figures are reported: they
are the documented worst case of a configuration at its ceiling.
"""

from __future__ import annotations

import gc
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Result, Sample, result

from haversack import Filesystem, Prompt, Session, ToolExecutor, ToolResult
from haversack._packs import compose
from haversack_planning import PlanningConfig, planning_section
from haversack_vfs import CONFIG_MAXIMA

SUITE = "adversarial"
TIME_TARGET_S = 1.0
MEMORY_TARGET_MIB = 64.0
GREP_ISSUE_TARGET_S = 0.2
MIB = 1024 * 1024


@dataclass
class Case:
    """One hostile call: ``setup(fs)`` prepares the workspace (not measured)."""

    tool: str
    label: str
    arguments: dict[str, Any]
    setup: Callable[[Filesystem], None]
    expect_success: bool | None = None  # None: either is a bounded outcome
    time_target_s: float = TIME_TARGET_S


class Rig:
    """An executor over the vfs pack with ``config``; the workspace is rebuilt per case."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.executor: ToolExecutor | None = None

    def fresh(self, case: Case) -> ToolExecutor:
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        gc.collect()
        prompt = compose(ns="bench", key="adv", packs=["vfs"], config={"vfs": self.config})
        executor = ToolExecutor(prompt.render(), session=Session())
        fs: Filesystem = executor.resources.get(Filesystem)  # type: ignore[type-abstract]
        case.setup(fs)
        if case.tool == "edit_file":  # the read-before-write policy wants a read first
            executor.execute("read_file", {"path": case.arguments["path"], "limit": 1})
        self.executor = executor
        return executor


def _file(path: str, text: str) -> Callable[[Filesystem], None]:
    def setup(fs: Filesystem) -> None:
        fs.write(path, text)

    return setup


def _many(count: int, directory: str = "d") -> Callable[[Filesystem], None]:
    def setup(fs: Filesystem) -> None:
        for index in range(count):
            fs.write(f"{directory}/{'a' * 100}{index}", "")

    return setup


def _random_lines(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    line = 99
    rows = ["".join(rng.choice("ab") for _ in range(line)) for _ in range(512)]
    block = "\n".join(rows) + "\n"
    return (block * (size // len(block) + 1))[:size]


def _grep_files(count: int, size: int) -> Callable[[Filesystem], None]:
    text = _random_lines(size)

    def setup(fs: Filesystem) -> None:
        for index in range(count):
            fs.write(f"g/f{index}.txt", text)

    return setup


def _nothing(fs: Filesystem) -> None:
    return None


def vfs_cases(limits: Mapping[str, Any]) -> list[Case]:
    """The hostile calls for a configuration whose limits are ``limits``."""
    file_bytes = int(limits["max_file_bytes"])
    write_bytes = int(limits["max_write_bytes"])
    pattern_chars = int(limits["max_pattern_chars"])
    big = "a" * file_bytes
    long_literal = "a" * 100_000
    files = int(limits["max_files"]) - 10
    half = file_bytes // 2
    return [
        Case(
            "grep",
            f"{pattern_chars + 1:,}-char pattern (one over the limit)",
            {"pattern": "a" * (pattern_chars + 1)},
            _nothing,
            expect_success=False,
        ),
        Case(
            "grep",
            "100,000-char literal over a 100,000-char line (the issue's 44 s case)",
            {"pattern": long_literal},
            _file("big.txt", long_literal + "\n"),
            time_target_s=GREP_ISSUE_TARGET_S,
        ),
        Case(
            "grep",
            f"[ab]{{999}}c (large RE2 program) over 4 x {file_bytes // MIB} MiB",
            {"pattern": "[ab]{999}c"},
            _grep_files(4, file_bytes),
        ),
        Case(
            "grep",
            f"DFA-hostile (a|b)*a(a|b){{20}}c over 4 x {file_bytes // MIB} MiB (work budget)",
            {"pattern": "(?:a|b)*a(?:a|b){20}c"},
            _grep_files(4, file_bytes),
        ),
        Case(
            "grep",
            f"plain text over one {file_bytes // MIB} MiB line",
            {"pattern": "a" * (min(pattern_chars, 1000) - 1) + "b"},
            _file("line.txt", big),
        ),
        Case(
            "grep",
            "every line matches, longest lines kept (match cap)",
            {"pattern": "a", "max_matches": int(limits["max_grep_matches"])},
            _file("lines.txt", ("a" * 10_000 + "\n") * (file_bytes // 10_001)),
        ),
        Case(
            "edit_file",
            "replace_all 'a' by 2,048 x 'b' in a 1 MB file (the issue's +1.9 GiB case)",
            {"path": "a.txt", "old_string": "a", "new_string": "b" * 2048, "replace_all": True},
            _file("a.txt", "a" * 1_000_000),
            expect_success=False,
        ),
        Case(
            "edit_file",
            f"replace_all doubling a {half // MIB} MiB file to the per-file limit",
            {"path": "a.txt", "old_string": "a", "new_string": "bb", "replace_all": True},
            _file("a.txt", "a" * half),
            expect_success=True,
        ),
        Case(
            "edit_file",
            "ambiguous 500,000-char old_string in a 1 MB file (the issue's 60-74 s case)",
            {"path": "a.txt", "old_string": "a" * 500_000, "new_string": "b"},
            _file("a.txt", "a" * 1_000_000),
            expect_success=False,
        ),
        Case(
            "edit_file",
            f"unique edit at the end of a {file_bytes // MIB} MiB file, maximal new_string",
            {"path": "a.txt", "old_string": "END", "new_string": "b" * (write_bytes - 16)},
            _file("a.txt", "a" * (file_bytes - write_bytes) + "END"),
            expect_success=True,
        ),
        Case(
            "read_file",
            f"middle window of a {file_bytes // MIB} MiB file of 2-byte lines",
            {"path": "a.txt", "offset": file_bytes // 4},
            _file("a.txt", "a\n" * (file_bytes // 2)),
        ),
        Case(
            "read_file",
            f"one {file_bytes // MIB} MiB line (cut at the read limit)",
            {"path": "a.txt"},
            _file("a.txt", big),
        ),
        Case(
            "write_file",
            f"{write_bytes // MIB} MiB of content (the write limit)",
            {"path": "new.txt", "content": "w" * write_bytes},
            _nothing,
            expect_success=True,
        ),
        Case(
            "write_file",
            "content 1 byte over the write limit",
            {"path": "new.txt", "content": "w" * (write_bytes + 1)},
            _nothing,
            expect_success=False,
        ),
        Case(
            "glob",
            f"'*a' x 127 + 'b' (the longest segment) over {files:,} names of 100+ 'a's",
            {"pattern": "d/" + "*a" * 127 + "b"},
            _many(files),
        ),
        Case(
            "glob",
            f"{pattern_chars + 1:,}-char pattern (one over the limit)",
            {"pattern": "*" * (pattern_chars + 1)},
            _nothing,
            expect_success=False,
        ),
        Case(
            "ls",
            f"a directory of {files:,} entries",
            {"path": "d"},
            _many(files),
        ),
        Case(
            "rm",
            f"a directory of {files:,} files",
            {"path": "d"},
            _many(files),
            expect_success=True,
        ),
    ]


def planning_cases(config: PlanningConfig) -> list[tuple[str, str, dict[str, Any], bool]]:
    """(tool, label, arguments, expect_success) for the planning tools at ``config``."""
    steps = ["s" * config.max_title_chars] * config.max_steps
    return [
        (
            "planning_setup_plan",
            f"{config.max_steps} steps of {config.max_title_chars} chars (the limits)",
            {"objective": "o" * config.max_objective_chars, "steps": steps},
            True,
        ),
        (
            "planning_setup_plan",
            "a 3 MB 'ab ab ...' objective",
            {"objective": "ab " * 1_000_000},
            False,
        ),
        (
            "planning_setup_plan",
            f"{config.max_steps + 1} steps (one too many)",
            {"objective": "o", "steps": [*steps, "x"]},
            False,
        ),
    ]


def _peak_mib(call: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - base) / MIB


def _check(name: str, outcome: ToolResult[Any], expect: bool | None) -> str:
    if expect is not None and outcome.success is not expect:
        raise RuntimeError(f"{name}: expected success={expect}, got {outcome.render()[:300]}")
    return "ok" if outcome.success else "refused"


def _timed(call: Callable[[], ToolResult[Any]]) -> tuple[float, ToolResult[Any]]:
    gc.collect()
    start = time.perf_counter()
    outcome = call()
    return time.perf_counter() - start, outcome


def _rows(
    name: str,
    prepare: Callable[[bool], Callable[[], ToolResult[Any]]],
    expect: bool | None,
    *,
    repeats: int,
    judged: bool,
    time_target_s: float,
) -> list[Result]:
    """Time ``repeats`` calls and trace one; ``prepare(again)`` (untimed) gives the call."""
    times: list[float] = []
    first: ToolResult[Any] | None = None
    for index in range(repeats):
        took, outcome = _timed(prepare(index > 0))
        times.append(took)
        first = first or outcome
    assert first is not None
    how = _check(name, first, expect)
    peak = _peak_mib(prepare(True))
    sample = Sample(tuple(times))
    return [
        result(
            SUITE,
            f"{name} — time",
            sample,
            max_median_s=time_target_s if judged else None,
            notes=f"{how}: {first.message[:140]}",
        ),
        Result(
            suite=SUITE,
            name=f"{name} — peak memory",
            value=round(peak, 3),
            unit="MiB",
            target=f"≤ {MEMORY_TARGET_MIB:g} MiB" if judged else "",
            passed=(peak <= MEMORY_TARGET_MIB) if judged else None,
            notes="tracemalloc peak during one call",
        ),
    ]


def _vfs(scope: str, limits: Mapping[str, Any], *, repeats: int, judged: bool) -> list[Result]:
    rig = Rig({k: v for k, v in limits.items() if k in CONFIG_MAXIMA})
    out: list[Result] = []
    for case in vfs_cases(limits):
        # A call that changes the workspace gets a fresh one each run (built untimed).
        fresh = bool(case.expect_success) and case.tool in ("edit_file", "write_file", "rm")
        executor = rig.fresh(case)

        def prepare(
            again: bool, case: Case = case, fresh: bool = fresh, first: ToolExecutor = executor
        ) -> Callable[[], ToolResult[Any]]:
            ex = rig.fresh(case) if again and fresh else (rig.executor or first)
            return partial(ex.execute, case.tool, case.arguments)

        out += _rows(
            f"{scope}, {case.label}: {case.tool}",
            prepare,
            case.expect_success,
            repeats=repeats,
            judged=judged,
            time_target_s=case.time_target_s,
        )
        print(f"  {out[-2].name}: {out[-2].display}, {out[-1].display}", flush=True)
    if rig.executor is not None:
        rig.executor.close()
    return out


def _planning(scope: str, config: PlanningConfig, *, repeats: int, judged: bool) -> list[Result]:
    prompt = Prompt(ns="bench", key="plan", sections=[planning_section(config)])
    executor = ToolExecutor(prompt.render(), session=Session())
    out: list[Result] = []
    for tool, label, arguments, expect in planning_cases(config):

        def prepare(
            again: bool, tool: str = tool, arguments: dict[str, Any] = arguments
        ) -> Callable[[], ToolResult[Any]]:
            return partial(executor.execute, tool, arguments)

        out += _rows(
            f"{scope}, {label}: {tool}",
            prepare,
            expect,
            repeats=repeats,
            judged=judged,
            time_target_s=TIME_TARGET_S,
        )
        print(f"  {out[-2].name}: {out[-2].display}, {out[-1].display}", flush=True)
    executor.close()
    return out


DEFAULT_LIMITS: dict[str, Any] = {
    "max_file_bytes": 16 * MIB,
    "max_write_bytes": 1 * MIB,
    "max_pattern_chars": 1000,
    "max_grep_matches": 100,
    "max_files": 50_000,
}


def run(quick: bool) -> list[Result]:
    """The suite's figures for ``bench/run.py``."""
    repeats = 2 if quick else 5
    results = _vfs("default limits", DEFAULT_LIMITS, repeats=repeats, judged=True)
    results += _planning("default limits", PlanningConfig(), repeats=repeats, judged=True)
    results += _vfs("maximum limits", dict(CONFIG_MAXIMA), repeats=1, judged=False)
    results += _planning(
        "maximum limits",
        PlanningConfig(max_steps=1000, max_objective_chars=10_000, max_title_chars=10_000),
        repeats=1,
        judged=False,
    )
    return results


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row.name}: {row.display} {row.target} {row.passed}")
