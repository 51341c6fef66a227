"""The session's tool-call log is bounded: a long session's memory stays flat (issue 14)."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import dataclass

import pytest

from haversack import (
    CallOutcome,
    MarkdownSection,
    Prompt,
    Session,
    SlicePolicy,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolLog,
    ToolResult,
)
from haversack._session._chain import EMPTY  # the bounded chain behind the log, unit-tested


@dataclass(frozen=True)
class Event:
    n: int


@dataclass(frozen=True)
class Big:
    size: int


@dataclass(frozen=True)
class Payload:
    text: str

    def render(self) -> str:
        return self.text


def _big(params: Big, *, context: ToolContext) -> ToolResult[Payload]:
    return ToolResult.ok(Payload("x" * params.size), f"{params.size} characters")


def _executor(session: Session, log: ToolLog | None = None) -> ToolExecutor:
    prompt = Prompt(
        ns="log",
        key="log",
        sections=[
            MarkdownSection(
                title="T",
                key="t",
                template="t",
                tools=[Tool[Big, Payload](name="big", description="b", handler=_big)],
            )
        ],
    )
    return ToolExecutor(prompt.render(), session=session, log=log)


# -- the ring -----------------------------------------------------------------------------


def test_bounded_chain_shows_the_newest_items_and_drops_the_rest() -> None:
    chain = EMPTY
    for n in range(1, 26):
        chain = chain.append_bounded(n, 4)
        assert chain.items() == tuple(range(max(1, n - 3), n + 1))
        assert chain.latest() == n
        assert chain._depth < 8  # hidden cells are dropped before they reach 2 x bound
    with pytest.raises(ValueError, match="bound"):
        EMPTY.append_bounded(1, 0)


def test_register_log_with_max_items_is_a_ring() -> None:
    session = Session()
    log = session.register_log(Event, max_items=3)
    for n in range(10):
        session.dispatch(Event(n))
    assert log.all() == (Event(7), Event(8), Event(9))
    assert log.policy is SlicePolicy.LOG
    log.extend([Event(10), Event(11)])
    assert log.all() == (Event(9), Event(10), Event(11))


def test_register_log_again_replaces_the_recording_and_the_bound() -> None:
    session = Session()
    session.register_log(Event, max_items=2)
    session.register_log(Event)  # the last call wins: unbounded, still one reducer
    for n in range(5):
        session.dispatch(Event(n))
    assert [e.n for e in session[Event]] == [0, 1, 2, 3, 4]
    session.register_log(Event, max_items=2)  # shrinking keeps the newest
    assert [e.n for e in session[Event]] == [3, 4]
    with pytest.raises(ValueError, match="max_items"):
        session.register_log(Event, max_items=0)


# -- the bounded record -------------------------------------------------------------------


def _event(rendered: str, arguments: object, value: object = None) -> ToolInvoked:
    return ToolInvoked(
        prompt_ns="p",
        prompt_key="k",
        tool_name="t",
        params=Big(1),
        arguments=arguments,  # type: ignore[arg-type]
        result=ToolResult.ok(value, "done"),
        rendered=rendered,
        outcome=CallOutcome.OK,
        call_id=None,
        duration_s=0.5,
    )


def test_a_small_record_is_kept_whole() -> None:
    event = _event("short", {"size": 1})
    assert event.compact(100) is event
    assert event.complete
    assert event.rendered_length == 5


def test_a_large_record_keeps_outcome_timing_sizes_and_previews() -> None:
    event = _event("r" * 10_000, {"text": "a" * 10_000}, Payload("v" * 10_000))
    kept = event.compact(100)
    assert not kept.complete
    assert kept.rendered == "r" * 100 + "[... 9900 more characters not kept]"
    assert kept.rendered_length == 10_000
    assert (kept.outcome, kept.duration_s, kept.success) == (CallOutcome.OK, 0.5, True)
    assert kept.result.value is None
    assert kept.params is None
    assert isinstance(kept.arguments, str)
    assert len(kept.arguments) < 200


@pytest.mark.parametrize(
    "arguments",
    [
        "j" * 100_000,
        b"j" * 100_000,
        {"k": list(range(1_000_000))},
        {str(n): n for n in range(100_000)},
    ],
)
def test_large_arguments_become_a_bounded_preview(arguments: object) -> None:
    kept = _event("ok", arguments).compact(100)
    assert isinstance(kept.arguments, str)
    assert len(kept.arguments) <= 200


# -- through the executor -----------------------------------------------------------------


def test_the_default_log_keeps_previews_and_subscribers_see_everything() -> None:
    session = Session()
    seen: list[ToolInvoked] = []
    session.subscribe(ToolInvoked, seen.append)
    with _executor(session) as executor:
        executor.execute("big", {"size": 50_000})
    (logged,) = session[ToolInvoked].all()
    assert len(seen[0].rendered) > 50_000
    assert seen[0].complete
    assert not logged.complete
    assert logged.rendered_length == len(seen[0].rendered)
    assert len(logged.rendered) < 1100
    assert logged.result.value is None


def test_full_results_are_opt_in() -> None:
    session = Session()
    with _executor(session, ToolLog(preview_chars=None, max_items=2)) as executor:
        for size in (10_000, 20_000, 30_000):
            executor.execute("big", {"size": size})
    assert [e.result.value.text.count("x") for e in session[ToolInvoked]] == [20_000, 30_000]


def test_memory_is_flat_over_many_large_calls() -> None:
    # Unbounded, each call kept ~200 KB (value + rendered text): 300 calls grew ~60 MB.
    session = Session()
    with _executor(session, ToolLog(max_items=50)) as executor:
        for _ in range(60):
            executor.execute("big", {"size": 100_000})
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            executor.execute("big", {"size": 100_000})
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    assert len(session[ToolInvoked]) == 50
    assert grown < 512 * 1024


def test_tool_log_validates() -> None:
    with pytest.raises(ValueError, match="max_items"):
        ToolLog(max_items=0)
    with pytest.raises(ValueError, match="preview_chars"):
        ToolLog(preview_chars=True)  # type: ignore[arg-type]


class _Hostile(dict):  # type: ignore[type-arg]
    def __len__(self) -> int:
        raise RuntimeError("no length")


def test_odd_arguments_never_break_the_record() -> None:
    session = Session()
    ToolLog(preview_chars=10).install(session)
    event = _event("r" * 100, _Hostile(a="b" * 50))
    session.dispatch(event)
    (kept,) = session[ToolInvoked].all()
    assert kept.arguments is None
    assert kept.rendered_length == 100
