"""Leaks: memory over a long run of calls, and what is left after closing.

Memory is measured with tracemalloc: allocated bytes after a warm-up, then after N more
sessions (each opened, used and closed) and after N more calls in one session. The slopes
are reported as figures. Only a generous bound is asserted (see each test): the point is to
catch a leak that grows with every call, not to benchmark.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

from haversack import Session, ToolExecutor
from haversack.testing import compose_packs

from ._harness import budget

#: One round of calls: a plan, files written, read, edited, searched, removed, and failures.
ROUND: tuple[tuple[str, dict[str, Any]], ...] = (
    ("planning_setup_plan", {"objective": "leak check", "steps": ["a", "b"]}),
    ("planning_add_step", {"steps": ["c"]}),
    ("planning_update_step", {"step_id": 1, "status": "done"}),
    ("write_file", {"path": "src/m.py", "content": "x = 1\n" * 50}),
    ("read_file", {"path": "src/m.py"}),
    (
        "edit_file",
        {"path": "src/m.py", "old_string": "x = 1\n", "new_string": "y\n", "replace_all": True},
    ),
    ("grep", {"pattern": "y"}),
    ("glob", {"pattern": "**/*.py"}),
    ("ls", {"path": "src"}),
    ("write_file", {"path": "src/m.py", "content": "exists"}),  # fails, rolled back
    ("read_file", {"path": "../../etc/passwd"}),  # fails
    ("rm", {"path": "src"}),
)


def _round(executor: ToolExecutor) -> int:
    for name, args in ROUND:
        executor.execute(name, args)
    return len(ROUND)


def _allocated() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_memory_across_sessions(tmp_path: Path, figure) -> None:
    """Sessions opened, used and closed: memory must return to a plateau.

    Bound: the growth per session after warm-up must stay under 4 KiB (one round allocates
    tens of KiB, so a leaked session or workspace would blow far past it).
    """
    fig = figure("leaks", "memory across sessions")
    rendered = compose_packs(["planning", "vfs"]).render()
    warmup, sessions = 20, budget(200, 2000)

    def one() -> None:
        with ToolExecutor(rendered, session=Session()) as executor:
            fig.case(_round(executor))

    tracemalloc.start()
    try:
        for _ in range(warmup):
            one()
        base = _allocated()
        for _ in range(sessions):
            one()
        grown = _allocated() - base
    finally:
        tracemalloc.stop()
    slope = grown / sessions
    fig.note("sessions_after_warmup", sessions)
    fig.note("bytes_growth_total", grown)
    fig.note("bytes_per_session", round(slope, 1))
    fig.check(slope < 4096, f"memory grows {slope:.0f} bytes per closed session")
    fig.assert_clean()


def test_memory_within_one_session(figure) -> None:
    """Thousands of calls in one session. The session keeps a ToolInvoked event per call
    (by design: the transcript), so memory grows with the call count; the slope is reported.

    Bound: under 64 KiB per call (each call's event holds its arguments and result text of
    a few hundred bytes to a few KiB; snapshots of the workspace must not pile up).
    """
    fig = figure("leaks", "memory within one session")
    rendered = compose_packs(["planning", "vfs"]).render()
    rounds = budget(100, 1000)
    tracemalloc.start()
    try:
        with ToolExecutor(rendered, session=Session()) as executor:
            for _ in range(10):
                _round(executor)
            base = _allocated()
            for _ in range(rounds):
                fig.case(_round(executor))
            grown = _allocated() - base
    finally:
        tracemalloc.stop()
    slope = grown / (rounds * len(ROUND))
    fig.note("calls_after_warmup", rounds * len(ROUND))
    fig.note("bytes_growth_total", grown)
    fig.note("bytes_per_call", round(slope, 1))
    fig.check(slope < 64 * 1024, f"memory grows {slope:.0f} bytes per call")
    fig.assert_clean()
