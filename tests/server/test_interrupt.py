"""A cancelled call stops its worker thread, but never inside an import nor a block the tool
marked uninterruptible."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from haversack import ToolCallCancelled, check_cancelled, uninterruptible
from haversack._interrupt import run_interruptibly


def test_a_cancellation_waits_for_an_import_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI once cancelled shell_execute during its first, lazy import of urllib3: the half-run
    # module body left 'urllib3' without 'connection' for every later call in the process.
    name = f"slow_module_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("import time\ntime.sleep(0.6)\nfinished = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importing = threading.Event()
    after_import: list[bool] = []

    def tool() -> None:
        importing.set()
        __import__(name)
        after_import.append(True)
        while True:  # pure-Python work: the interrupt stops it at once
            time.sleep(0.01)

    async def scenario() -> None:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await run_interruptibly(tool, name="slow-import", grace_s=10)

                tg.start_soon(call)
                await anyio.to_thread.run_sync(importing.wait)
                await anyio.sleep(0.2)  # well inside the module body's sleep
                scope.cancel()

    started = time.monotonic()
    anyio.run(scenario)
    try:
        module = sys.modules.get(name)
        assert module is not None, "the interrupted import was undone: the module is gone"
        assert module.finished is True
        assert after_import == [True]  # the exception came after the import, in the loop
        assert time.monotonic() - started < 5
    finally:
        sys.modules.pop(name, None)


def test_a_cancelled_pure_python_call_stops_at_once() -> None:
    stopped = threading.Event()
    running = threading.Event()

    def tool() -> None:
        try:
            running.set()
            while True:
                time.sleep(0.01)
        except ToolCallCancelled:
            stopped.set()
            raise

    _cancel_when(running, tool)
    assert stopped.is_set()


def _cancel_when(ready: threading.Event, tool: Callable[[], object]) -> None:
    """Run ``tool`` interruptibly, cancel it once ``ready`` is set, wait for its thread."""
    finished = threading.Event()

    def run() -> None:
        try:
            tool()
        finally:
            finished.set()

    async def scenario() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_interruptibly(run, name="shielded", grace_s=5))
                await anyio.to_thread.run_sync(ready.wait)
                tg.cancel_scope.cancel()

    anyio.run(scenario)
    assert finished.wait(5)


def test_an_uninterruptible_block_runs_whole_and_the_cancellation_follows_it() -> None:
    inside = threading.Event()
    steps: list[str] = []

    def tool() -> None:
        with uninterruptible():
            inside.set()
            for i in range(30):  # pure-Python work an interrupt would stop at once
                time.sleep(0.01)
                steps.append(str(i))
            steps.append("cleaned up")
        steps.append("after the block")  # never reached: the cancellation is raised first

    _cancel_when(inside, tool)
    assert steps[-1] == "cleaned up"
    assert len(steps) == 31


def test_check_cancelled_stops_a_wait_inside_an_uninterruptible_block() -> None:
    waiting = threading.Event()
    steps: list[str] = []

    def tool() -> None:
        with uninterruptible():
            try:
                while True:
                    waiting.set()
                    time.sleep(0.01)
                    check_cancelled()
            finally:
                steps.append("cleaned up")

    started = time.monotonic()
    _cancel_when(waiting, tool)
    assert steps == ["cleaned up"]
    assert time.monotonic() - started < 5


def test_outside_a_cancellable_call_both_do_nothing() -> None:
    with uninterruptible():
        check_cancelled()
    ran = threading.Event()

    def elsewhere() -> None:
        with uninterruptible():
            check_cancelled()
        ran.set()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(5)
    assert ran.is_set()
