"""One ``tools/call`` request's :class:`~haversack.Interaction`: elicitation and progress."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from haversack._interaction import Answer, Interaction, Progress, Question, answer_from
from haversack._interrupt import check_cancelled
from haversack.errors import InteractionError

from ._elicitation import can_elicit

if TYPE_CHECKING:
    from collections.abc import Coroutine

__all__ = ["PROGRESS_BURST", "PROGRESS_PER_S", "RequestChannel"]

PROGRESS_BURST = 32
"""How many progress reports of one call wait to be sent at most (the newest are kept), and
how many may go out at once."""

PROGRESS_PER_S = 50.0
"""Past the burst, how many progress notifications per second one call sends at most: a tool
(or an upstream server) reporting in a tight loop costs the client this much, and the
reports in between are dropped, never queued without bound; the newest is always sent."""

_POLL_S = 0.05  # how often a sync handler waiting for an answer looks for a cancellation


class RequestChannel(Interaction):
    """Carries a handler's questions to the client's user (``elicitation/create`` on the
    request, so Streamable HTTP sends it on that request's stream) and its progress to the
    client as ``notifications/progress``, when the client sent a progress token.

    While the handler has reported nothing, a heartbeat says how long the call has been
    running, every ``interval_s`` (a client that resets its timeout on progress keeps
    waiting); the handler's first report replaces it, in the handler's own scale.
    """

    def __init__(self, ctx: Any, name: str, interval_s: float) -> None:
        from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

        self._ctx = ctx
        self._name = name
        self._interval_s = interval_s
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.token = progress_token_from_params(ctx.params)
        self.what = "running"
        self._wake = asyncio.Event()
        self._mutex = threading.Lock()
        self._queued: deque[Progress] = deque(maxlen=PROGRESS_BURST)
        self._armed = False
        self._finished = False
        self._last: float | None = None  # the handler's last value sent
        self._tokens = float(PROGRESS_BURST)
        self._filled_at = time.monotonic()

    # ------------------------------------------------------------------ questions
    async def aask(self, question: Question) -> Answer:
        import anyio
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        if not can_elicit(self._ctx):
            raise InteractionError(
                _refusal(
                    question,
                    "this MCP client cannot ask its user (it did not declare "
                    "the elicitation capability)",
                )
            )
        before, self.what = self.what, "awaiting the user's answer"
        try:
            with anyio.move_on_after(question.timeout_s):
                try:
                    result = await self._ctx.session.elicit_form(
                        question.message,
                        dict(question.schema),
                        related_request_id=self._ctx.request_id,
                    )
                except MCPError as exc:
                    raise InteractionError(
                        _refusal(question, f"the client could not ask its user ({exc})")
                    ) from None
                except ValidationError:
                    raise InteractionError(
                        _refusal(question, "the client's answer was not a valid elicitation result")
                    ) from None
                return answer_from(question, result.action, result.content)
        finally:
            self.what = before
        raise InteractionError(
            _refusal(question, f"no one answered within {question.timeout_s:g} s")
        )

    def ask(self, question: Question) -> Answer:
        # A sync handler runs in a thread of its own: the question is asked on the loop, and
        # the thread waits for it, looking out for a cancellation of the call.
        if threading.get_ident() == self._loop_thread:
            raise InteractionError(
                "ToolContext.ask() was called on the server's event loop, where waiting would "
                "stop every request; an async handler uses `await context.aask(...)`."
            )
        return _wait(self._loop, self.aask(question))

    # ------------------------------------------------------------------ progress
    def progress(self, update: Progress) -> None:
        if self.token is None:
            return
        with self._mutex:
            self._queued.append(update)
            if self._armed:
                return  # the pump has not taken the previous one yet: it takes this one
            self._armed = True
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
            return
        with contextlib.suppress(RuntimeError):  # the loop is gone: the call's client too
            self._loop.call_soon_threadsafe(self._wake.set)

    def finish(self) -> None:
        """The call is over: the pump sends the reports left, then returns."""
        self._finished = True
        self._wake.set()

    async def pump(self) -> None:
        """Send progress until :meth:`finish` (or cancelled): the handler's reports, else a
        heartbeat."""
        import anyio

        if self.token is None:
            return
        start = time.monotonic()
        while True:
            with anyio.move_on_after(self._interval_s):
                await self._wake.wait()
            if self._wake.is_set():
                self._wake.clear()
                await self.flush(paced=not self._finished)
                if self._finished:
                    await self.flush()  # what came while the last flush was sending
                    return
            elif self._last is None:
                elapsed = time.monotonic() - start
                await self._ctx.session.report_progress(
                    elapsed, None, f"{self._name} {self.what} for {elapsed:.1f} s"
                )

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(
            float(PROGRESS_BURST), self._tokens + (now - self._filled_at) * PROGRESS_PER_S
        )
        self._filled_at = now

    async def flush(self, *, paced: bool = False) -> None:
        """Send the handler's reports not sent yet, in order, each only if it rises (the
        specification asks for rising values); ``paced``: at most :data:`PROGRESS_PER_S`
        a second past the burst, the newest always last."""
        import anyio

        with self._mutex:
            updates = list(self._queued)
            self._queued.clear()
            self._armed = False
        for index, update in enumerate(updates):
            if self._last is not None and update.progress <= self._last:
                continue
            self._refill()
            if self._tokens < 1:
                if index < len(updates) - 1:
                    continue  # over the rate: skip to the newest
                if paced:
                    await anyio.sleep((1 - self._tokens) / PROGRESS_PER_S)
                    self._refill()
            self._tokens -= 1  # below zero only for the last report of a call, sent at once
            self._last = update.progress
            await self._ctx.session.report_progress(update.progress, update.total, update.message)


def _refusal(question: Question, why: str) -> str:
    who = f"Tool {question.tool!r}" if question.tool else "The tool"
    return (
        f"{who} needed to ask the user a question but {why}, so it stopped. Do not retry it "
        "as it is: ask the user yourself, then call it with what they said, or go on "
        "without it."
    )


def _wait(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, Answer]) -> Answer:
    import concurrent.futures

    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                check_cancelled()
    finally:
        future.cancel()  # the call was cancelled or failed: stop asking
