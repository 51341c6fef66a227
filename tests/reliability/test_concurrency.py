"""Concurrency: many sessions on ONE composed prompt, and ONE session shared by many callers.

Each session has its own executor (so its own workspace) but shares the prompt, its tools
and its policy objects. No plan, policy state or file may cross from one session to another,
and a failed (rolled back) call in one session must not undo another session's work.

One executor shared by threads or by asyncio tasks runs their calls one at a time: every
committed call must survive the rollbacks of the failed calls around it.
"""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from haversack import Session, ToolExecutor
from haversack.testing import compose_packs
from haversack.testing._state import filesystem_contents

from ._harness import Figure, budget


def _prompt(tmp_path: Path) -> Any:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "shared.txt").write_text("seed line\n")
    config = {
        "vfs": {
            "mounts": [{"host_path": str(seed), "mount_path": "seed"}],
            "allowed_host_roots": [str(tmp_path)],
        }
    }
    return compose_packs(["planning", "vfs"], config=config)


def _script(i: int, steps: int) -> list[tuple[str, dict[str, Any], bool | None]]:
    """(tool, arguments, expected success or None) for session ``i``."""
    mine = f"session-{i}"
    calls: list[tuple[str, dict[str, Any], bool | None]] = [
        ("planning_setup_plan", {"objective": f"objective of {mine}", "steps": [f"{mine} a"]}),
        ("write_file", {"path": f"{mine}.txt", "content": f"{mine}\n"}),
    ]
    # Session-local read-before-write: only even sessions read the seeded file, so only
    # they may edit it; odd ones must be denied even though other sessions read it.
    if i % 2 == 0:
        calls.append(("read_file", {"path": "seed/shared.txt"}, True))  # type: ignore[arg-type]
        calls.append(
            (
                "edit_file",
                {"path": "seed/shared.txt", "old_string": "seed", "new_string": mine},
                True,
            )
        )
    else:
        calls.append(
            (
                "edit_file",
                {"path": "seed/shared.txt", "old_string": "seed", "new_string": mine},
                False,
            )
        )
    for n in range(steps):
        calls.append(("planning_add_step", {"steps": [f"{mine} step {n}"]}, True))
        # A failing call: write_file over an existing file is refused and rolled back.
        calls.append(("write_file", {"path": f"{mine}.txt", "content": "clobbered"}, False))
        calls.append(("write_file", {"path": f"{mine}/f{n}.txt", "content": f"{mine} {n}"}, True))
    return [(c[0], c[1], c[2] if len(c) > 2 else True) for c in calls]  # type: ignore[misc]


def _check(fig: Figure, i: int, session: Session, executor: ToolExecutor, steps: int) -> None:
    mine = f"session-{i}"
    files = filesystem_contents(executor.resources.get_optional(_filesystem()))  # type: ignore[arg-type]
    foreign = [p for p, text in files.items() if "session-" in p + text and mine not in p + text]
    fig.check(not foreign, f"{mine}: files of other sessions appear: {foreign[:3]}")
    fig.check(files.get(f"{mine}.txt") == f"{mine}\n", f"{mine}: own file lost or clobbered")
    fig.check(
        len([p for p in files if p.startswith(f"{mine}/f")]) == steps,
        f"{mine}: expected {steps} files written, found {sorted(files)}",
    )
    shared = files.get("seed/shared.txt")
    expected = f"{mine} line\n" if i % 2 == 0 else "seed line\n"
    fig.check(shared == expected, f"{mine}: seed/shared.txt is {shared!r}, expected {expected!r}")
    plan = executor.execute("planning_read_plan", {}).render()
    fig.check(f"objective of {mine}" in plan, f"{mine}: lost its plan: {plan[:200]}")
    others = [w for w in plan.split() if w.startswith("session-") and not w.startswith(mine)]
    fig.check(not others, f"{mine}: plan holds other sessions' entries: {others[:3]}")
    fig.check(plan.count(f"{mine} step") == steps, f"{mine}: plan steps count wrong")


def _filesystem() -> type:
    from haversack import Filesystem

    return Filesystem


def _run_one(fig: Figure, rendered: Any, i: int, steps: int) -> None:
    session = Session()
    with ToolExecutor(rendered, session=session) as executor:
        for tool, args, expect in _script(i, steps):
            result = executor.execute(tool, args)
            fig.case()
            if expect is not None and result.success != expect:
                fig.problem(
                    f"session-{i}: {tool} {args}: success={result.success}, "
                    f"expected {expect}: {result.render()[:200]}"
                )
        _check(fig, i, session, executor, steps)


async def _arun_one(fig: Figure, rendered: Any, i: int, steps: int) -> None:
    session = Session()
    with ToolExecutor(rendered, session=session) as executor:
        for tool, args, expect in _script(i, steps):
            result = await executor.aexecute(tool, args)
            fig.case()
            if expect is not None and result.success != expect:
                fig.problem(f"session-{i}: {tool}: success={result.success}, expected {expect}")
            await asyncio.sleep(0)  # let the other tasks interleave
        _check(fig, i, session, executor, steps)


def test_sessions_in_threads(tmp_path: Path, figure) -> None:
    fig = figure("concurrency", "threads")
    rendered = _prompt(tmp_path).render()
    sessions, steps = budget(16, 64), budget(10, 40)
    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(_run_one, fig, rendered, i, steps) for i in range(sessions)]:
            future.result()
    fig.note("sessions", sessions)
    fig.note("threads", 8)
    fig.assert_clean()


def test_sessions_in_asyncio_tasks(tmp_path: Path, figure) -> None:
    fig = figure("concurrency", "asyncio tasks (aexecute)")
    rendered = _prompt(tmp_path).render()
    sessions, steps = budget(16, 64), budget(10, 40)

    async def main() -> None:
        await asyncio.gather(*(_arun_one(fig, rendered, i, steps) for i in range(sessions)))

    asyncio.run(main())
    fig.note("sessions", sessions)
    fig.assert_clean()


def _shared_script(worker: int, steps: int) -> list[tuple[str, dict[str, Any], bool]]:
    """Calls of one worker on a shared session: its own paths, a refused clobber per step,
    one plan step."""
    mine = f"worker-{worker}"
    calls: list[tuple[str, dict[str, Any], bool]] = [
        ("write_file", {"path": f"{mine}.txt", "content": f"{mine}\n"}, True)
    ]
    for n in range(steps):
        if n == steps // 2:  # one plan step per worker: the plan holds at most 100
            calls.append(("planning_add_step", {"steps": [f"{mine} step"]}, True))
        calls.append(("write_file", {"path": f"{mine}.txt", "content": "clobbered"}, False))
        calls.append(("write_file", {"path": f"{mine}/f{n}.txt", "content": f"{mine} {n}"}, True))
    return calls


def _check_shared(fig: Figure, executor: ToolExecutor, workers: int, steps: int) -> None:
    files = filesystem_contents(executor.resources.get_optional(_filesystem()))  # type: ignore[arg-type]
    plan = executor.execute("planning_read_plan", {}).render()
    for worker in range(workers):
        mine = f"worker-{worker}"
        fig.check(files.get(f"{mine}.txt") == f"{mine}\n", f"{mine}: own file lost or clobbered")
        written = [p for p in files if p.startswith(f"{mine}/f")]
        fig.check(len(written) == steps, f"{mine}: {len(written)} of {steps} committed files left")
        fig.check(plan.count(f"{mine} step") == 1, f"{mine}: its committed plan step is lost")


def _expect(fig: Figure, worker: int, tool: str, result: Any, expect: bool) -> None:
    fig.case()
    if result.success != expect:
        fig.problem(f"worker-{worker}: {tool}: success={result.success}, expected {expect}")


def test_one_session_shared_by_threads(tmp_path: Path, figure) -> None:
    # Rollbacks of failed calls must never take other threads' committed calls with them.
    fig = figure("concurrency", "one executor shared by threads")
    workers, steps = 8, budget(10, 250)
    with ToolExecutor(_prompt(tmp_path).render(), session=Session()) as executor:
        executor.execute("planning_setup_plan", {"objective": "shared"})

        def run(worker: int) -> None:
            for tool, args, expect in _shared_script(worker, steps):
                _expect(fig, worker, tool, executor.execute(tool, args), expect)

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads often, in the middle of calls
        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for future in [pool.submit(run, w) for w in range(workers)]:
                    future.result()
        finally:
            sys.setswitchinterval(interval)
        _check_shared(fig, executor, workers, steps)
    fig.note("threads", workers)
    fig.assert_clean()


def test_one_session_shared_by_asyncio_tasks(tmp_path: Path, figure) -> None:
    fig = figure("concurrency", "one executor shared by asyncio tasks")
    workers, steps = budget(16, 64), budget(10, 40)
    with ToolExecutor(_prompt(tmp_path).render(), session=Session()) as executor:
        executor.execute("planning_setup_plan", {"objective": "shared"})

        async def run(worker: int) -> None:
            for tool, args, expect in _shared_script(worker, steps):
                _expect(fig, worker, tool, await executor.aexecute(tool, args), expect)
                await asyncio.sleep(0)

        async def main() -> None:
            await asyncio.gather(*(run(w) for w in range(workers)))

        asyncio.run(main())
        _check_shared(fig, executor, workers, steps)
    fig.note("tasks", workers)
    fig.assert_clean()
