"""Cancellation at every point of a call (area ``cancellation``): a cancelled sync call is
rolled back or committed whole, and never leaves the executor stuck.

The MCP server runs a sync tool's call in a thread of its own and, when the client cancels,
raises ``ToolCallCancelled`` in that thread. CPython delivers such an exception at the
thread's next bytecode, wherever it is. The executor must take it only where it is safe: an
interrupt that landed between taking the call lock and entering the ``try`` that gives it
back left the lock held, and every later call of the MCP session hung.

A profiler parks the worker thread at each point where CPython could deliver the interrupt,
in the core and in the tool's pack (executor, call lock, session, policies, resources, the
handler); the test cancels the call there, and the thread goes on once the interrupt has
been raised or deferred. A failure
is a call that neither rolled back nor committed whole (the file, the log and the
read-before-write record disagree), a worker thread that did not finish, or a next call on
the same executor that does not complete.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest

import haversack
import haversack_vfs
from haversack import MarkdownSection, Session, ToolExecutor, ToolInvoked
from haversack._interrupt import Interruptible, run_interruptibly
from haversack.errors import ToolCallCancelled
from haversack.testing import compose_packs

from ._harness import budget

GUARD_S = 10.0  # only bounds a broken run
SECTION = MarkdownSection(title="Work", key="work", template="Edit files.")
# Lines of these trees are the points tried; the gate's own lines are left out (parking
# there while it holds its mutex would only wait for the interrupter to give up).
TREES = (Path(haversack.__file__).parent, Path(haversack_vfs.__file__).parent)
GATE_FILE = str(Path(haversack.__file__).parent / "_interrupt.py")


def _ours(filename: str) -> bool:
    return filename != GATE_FILE and any(filename.startswith(str(tree)) for tree in TREES)


class Parker:
    """A profiler for the worker thread: counts the points of our code where CPython can
    deliver an asynchronous exception, and parks at point ``stop`` until the interrupt for
    the cancelled call has been raised or deferred.

    Those points are a function's entry and the return of a call into C (the eval breaker
    is checked there); an exception the profiler lets through is raised at that point. A
    line tracer would add points CPython never has (inside a ``with`` block's exit).
    """

    def __init__(self, stop: int | None) -> None:
        self.stop = stop
        self.seen = 0
        self.where = ""
        self.parked = threading.Event()
        self.interrupted = threading.Event()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "c_return") or self.parked.is_set():
            return
        if not _ours(frame.f_code.co_filename):
            return
        self.seen += 1
        if self.seen == self.stop:
            self.where = f"{event} {Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
            self.parked.set()
            self.interrupted.wait(GUARD_S)


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Callable[[Parker], None]:
    """Install the tracer in each interruptible worker thread, and tell it when the
    interrupter has acted."""
    current: list[Parker] = []
    install, interrupt = Interruptible.install, Interruptible.interrupt

    def installing(gate: Interruptible) -> None:
        install(gate)
        if current:
            sys.setprofile(current[0])

    def interrupting(gate: Interruptible, finished: threading.Event, wait_s: float) -> None:
        try:
            interrupt(gate, finished, wait_s)
        finally:
            if current:
                current[0].interrupted.set()

    monkeypatch.setattr(Interruptible, "install", installing)
    monkeypatch.setattr(Interruptible, "interrupt", interrupting)

    def use(parker: Parker) -> None:
        current[:] = [parker]

    return use


def _cancel_at(executor: ToolExecutor, call: Callable[[], Any], parker: Parker) -> str:
    """Run ``call`` interruptibly; cancel it when the tracer parks. What the caller saw."""
    seen: list[str] = []

    async def scenario() -> None:
        with anyio.fail_after(GUARD_S * 3), anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    try:
                        await run_interruptibly(call, name="haversack tool test", grace_s=GUARD_S)
                        seen.append("returned")
                    except ToolCallCancelled:
                        seen.append("ToolCallCancelled")

                tg.start_soon(run)
                parked = await anyio.to_thread.run_sync(parker.parked.wait, GUARD_S)
                if parked:
                    scope.cancel()
                else:
                    seen.append("never parked")
                    parker.interrupted.set()

    anyio.run(scenario)
    return seen[0] if seen else "cancelled"


def _next_call_completes(executor: ToolExecutor, name: str) -> bool:
    done = threading.Event()

    def call() -> None:
        executor.execute("write_file", {"path": f"{name}.txt", "content": "after"})
        done.set()

    threading.Thread(target=call, daemon=True).start()
    return done.wait(GUARD_S)


def _points(prompt: Any, traced: Callable[[Parker], None], tool: str) -> int:
    """How many of our lines one uncancelled call runs."""
    parker = Parker(None)
    traced(parker)
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        _seed(executor)
        anyio.run(lambda: run_interruptibly(_call(executor, tool, 0), name="count", grace_s=5))
    return parker.seen


def _seed(executor: ToolExecutor) -> None:
    executor.execute("write_file", {"path": "seed.txt", "content": "one\n"})
    executor.execute("read_file", {"path": "seed.txt"})


def _call(executor: ToolExecutor, tool: str, k: int) -> Callable[[], Any]:
    if tool == "write_file":
        return lambda: executor.execute("write_file", {"path": f"new{k}.txt", "content": "x"})
    return lambda: executor.execute(
        "edit_file", {"path": "seed.txt", "old_string": "one", "new_string": f"two{k}"}
    )


# Coverage's tracer beside this test's profiler made each case 200 times slower (1.2 s
# became 240 s); the code it runs is measured by the other tests.
@pytest.mark.no_cover
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_cancellation_at_any_point_rolls_back_or_commits_whole(
    figure, traced: Callable[[Parker], None], tool: str
) -> None:
    fig = figure("cancellation", f"{tool} cancelled at each point it can be interrupted")
    prompt = compose_packs(["vfs"], sections=[SECTION])
    total = _points(prompt, traced, tool)
    fig.check(total > 50, f"the profiler saw only {total} points of a {tool} call")
    step = max(1, total // budget(60, 100_000))
    stops = range(1, total + 1, step)
    fig.note("points", total)
    outcomes: dict[str, int] = {}
    for k in stops:
        fig.case()
        parker = Parker(k)
        traced(parker)
        session = Session()
        events: list[ToolInvoked] = []
        session.subscribe(ToolInvoked, events.append)
        with ToolExecutor(prompt.render(), session=session) as executor:
            _seed(executor)
            before = len(events)
            seen = _cancel_at(executor, _call(executor, tool, k), parker)
            traced(Parker(None))
            at = f"{tool} cancelled at point {k} ({parker.where})"
            mine = events[before:]
            outcome = mine[-1].outcome.name if mine else "unrecorded"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            files = executor.resources.get(haversack.Filesystem)
            if tool == "write_file":
                changed = files.exists(f"new{k}.txt")
            else:
                changed = files.read_text("seed.txt") != "one\n"
            fig.check(len(mine) <= 1, f"{at}: recorded {len(mine)} times")
            if outcome == "OK":
                fig.check(changed, f"{at}: recorded OK but its change is missing")
            else:
                fig.check(not changed, f"{at}: {outcome}, yet its change stayed ({seen})")
            fig.check(
                executor._lock.readers == 0 and executor._lock.waiting == 0,
                f"{at}: the call lock has {executor._lock.readers} readers, "
                f"{executor._lock.waiting} waiting",
            )
            fig.check(_next_call_completes(executor, f"next{k}"), f"{at}: the next call hung")
    fig.note("outcomes", outcomes)
    fig.check(outcomes.get("ABORTED", 0) > 0, f"no cancellation rolled a call back: {outcomes}")
    fig.assert_clean()
