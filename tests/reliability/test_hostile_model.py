"""A hostile model driving the agent loop: floods of calls, unknown tools, hostile arguments,
repeated and missing call ids, approvals asked for, in sync and async runs.

The model is a scripted provider in process (no HTTP: the wire formats have their own tests),
and the tools are every installed pack's (Podman's excepted). Each case is one run; it must
end with a ``RunResult`` (never an exception), answer every call of every response exactly
once and in order, run at most ``max_calls_per_turn`` calls per response, and record exactly
the calls it ran in the session.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import ApprovalPolicy, Session, ToolInvoked
from haversack.adapters import ToolCall
from haversack.agent import Agent, Conversation, Reply, Usage
from haversack.testing import compose_packs

from ._harness import PODMAN_PACKS, budget, loaded_packs
from ._hostile import hostile_values

CAP = 8


class _Script:
    """A provider whose responses are drawn up front; records what it was sent back."""

    name = "hostile"
    model = "hostile-1"

    def __init__(self, responses: list[tuple[ToolCall, ...]]) -> None:
        self.responses = list(responses)
        self.answers: list[list[tuple[str | None, str]]] = []

    def tools(self, rendered: Any) -> list[dict[str, Any]]:
        return [{"name": tool.name} for tool in rendered.tools]

    def start(self, system: str, task: str) -> Conversation:
        return Conversation(system, [])

    def complete(
        self, conversation: Conversation, tools: Any, on_text: Any, deadline: Any = None
    ) -> Reply:
        calls = self.responses.pop(0) if self.responses else ()
        return Reply("", calls, Usage(1, 1), "tool_calls" if calls else "stop", False)

    async def acomplete(
        self, conversation: Conversation, tools: Any, on_text: Any, deadline: Any = None
    ) -> Reply:
        return self.complete(conversation, tools, on_text)

    def add_reply(self, conversation: Conversation, reply: Reply) -> None:
        pass

    def add_results(self, conversation: Conversation, results: Any) -> None:
        self.answers.append([(call.call_id, result.render()) for call, result in results])

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def _prompt():
    packs = loaded_packs(exclude=sorted(PODMAN_PACKS))
    return compose_packs(packs, policies=[ApprovalPolicy(["*rm*", "*write*"])])


PROMPT = _prompt()
NAMES = [tool.name for tool in PROMPT.render().tools]


def _call(index: int) -> st.SearchStrategy[ToolCall]:
    arguments = st.one_of(
        st.fixed_dictionaries({"path": hostile_values(("notes/a.txt",))}),
        hostile_values(("notes/a.txt",)).map(lambda v: v if isinstance(v, str) else {"x": v}),
        st.just("{"),
        st.just(None),
    )
    return st.builds(
        ToolCall,
        call_id=st.one_of(st.just(f"c{index}"), st.just("same"), st.none()),
        name=st.one_of(st.sampled_from(NAMES), st.just("no_such_tool"), st.text(max_size=8)),
        arguments=arguments,
    )


@st.composite
def _responses(draw: st.DrawFn) -> list[tuple[ToolCall, ...]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        size = draw(st.sampled_from([0, 1, 2, CAP, CAP + 1, 3 * CAP]))
        out.append(tuple(draw(_call(i)) for i in range(size)))
    return out


def test_a_hostile_model_gets_bounded_answered_runs(figure) -> None:
    fig = figure("hostile-model", "agent loop")
    floods = 0

    @settings(
        max_examples=budget(30, 500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(responses=_responses(), mode=st.sampled_from(["sync", "async"]), yes=st.booleans())
    def case(responses: list[tuple[ToolCall, ...]], mode: str, yes: bool) -> None:
        nonlocal floods
        fig.case()
        where = f"{mode} run of {[len(r) for r in responses]} calls"
        script = _Script(responses)
        session = Session()
        approve = (lambda p: p.approve()) if yes else (lambda p: p.deny("no"))
        agent = Agent(PROMPT, script, max_turns=5, max_calls_per_turn=CAP, approve=approve)
        try:
            if mode == "sync":
                result = agent.run("go", session=session)
            else:
                result = asyncio.run(agent.arun("go", session=session))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            fig.problem(f"{where}: raised {type(exc).__name__}: {exc}")
            return
        # A response without calls ends the run: the ones after it are never asked for.
        answered = list(itertools.takewhile(bool, responses))
        fig.check(
            len(script.answers) == len(answered),
            f"{where}: {len(script.answers)} answers for {len(answered)} responses",
        )
        ran = 0
        for sent, answers in zip(answered, script.answers, strict=False):
            fig.check(
                [c.call_id for c in sent] == [a[0] for a in answers],
                f"{where}: answers out of order or missing",
            )
            fig.check(all(text.strip() for _, text in answers), f"{where}: an empty answer")
            refused = [t for _, t in answers if t.startswith("Not run: this response made")]
            fig.check(len(refused) == max(0, len(sent) - CAP), f"{where}: cap not applied")
            floods += bool(refused)
            ran += min(len(sent), CAP)
        final = [e for e in session[ToolInvoked].all() if e.outcome != "pending"]
        fig.check(len(final) == ran, f"{where}: {len(final)} calls recorded, {ran} run")
        fig.check(result.calls == tuple(final), f"{where}: RunResult.calls differ")

    case()
    fig.note("runs with a flood past the cap", floods)
    fig.check(floods > 0, "no case sent more calls than the cap; the cap was not tested")
    fig.assert_clean()


class _Recording(_Script):
    """A script that also records the tool names each request carried."""

    def __init__(self, responses: list[tuple[ToolCall, ...]]) -> None:
        super().__init__(responses)
        self.sent: list[list[str]] = []

    def complete(
        self, conversation: Conversation, tools: Any, on_text: Any, deadline: Any = None
    ) -> Reply:
        self.sent.append([t["name"] for t in tools])
        return super().complete(conversation, tools, on_text, deadline)


def _deferred_prompt() -> Any:
    from haversack import compose

    first, *rest = loaded_packs(exclude=sorted(PODMAN_PACKS))
    return compose(ns="reliability", key="deferred", packs=[first], deferred=rest)


DEFERRED = _deferred_prompt()
BASE = [tool.name for tool in DEFERRED.render().tools]
PACK_TOOLS = {
    name: [t.name for t in DEFERRED.with_pack(name).render().tools]
    for name in DEFERRED.deferred_packs
}
LATER = sorted({n for names in PACK_TOOLS.values() for n in names} - set(BASE))


@st.composite
def _loads(draw: st.DrawFn) -> list[tuple[ToolCall, ...]]:
    pack = st.one_of(
        st.sampled_from(DEFERRED.deferred_packs), hostile_values(("vfs",)), st.just(BASE[0])
    )
    call = st.one_of(
        st.builds(lambda p: ToolCall(None, "load_pack", {"pack": p}), pack),
        st.builds(lambda n: ToolCall(None, n, {"path": "a.txt"}), st.sampled_from(LATER)),
    )
    return [
        tuple(draw(st.lists(call, min_size=1, max_size=4))) for _ in range(draw(st.integers(1, 4)))
    ]


def test_a_hostile_model_loading_deferred_packs(figure) -> None:
    """Loads of real, repeated and hostile pack names mixed with calls of tools not loaded
    yet: every run ends, each request carries the first tools plus exactly those of the
    packs loaded so far (each once), and a deferred tool runs only once its pack is loaded."""
    fig = figure("hostile-model", "deferred pack loads")
    loads = 0

    @settings(
        max_examples=budget(20, 300),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(responses=_loads(), mode=st.sampled_from(["sync", "async"]))
    def case(responses: list[tuple[ToolCall, ...]], mode: str) -> None:
        nonlocal loads
        fig.case()
        where = f"{mode} run of {[len(r) for r in responses]} calls"
        script = _Recording(responses)
        agent = Agent(DEFERRED, script, max_turns=6, max_calls_per_turn=CAP)
        try:
            if mode == "sync":
                agent.run("go")
            else:
                asyncio.run(agent.arun("go"))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            fig.problem(f"{where}: raised {type(exc).__name__}: {exc}")
            return
        loaded: list[str] = []
        for index, sent in enumerate(script.sent):
            expected = list(BASE)
            for name in loaded:
                expected += [n for n in PACK_TOOLS[name] if n not in expected]
            fig.check(sent == expected, f"{where}: request {index} sent {sent}, not {expected}")
            if index >= len(script.answers):
                break
            for call, (_, text) in zip(responses[index], script.answers[index], strict=False):
                if call.name == "load_pack":
                    name = call.arguments["pack"] if isinstance(call.arguments, dict) else None
                    if text.startswith("Loaded pack") and name not in loaded:
                        loaded.append(name)
                        loads += 1
                        expected += [n for n in PACK_TOOLS[name] if n not in expected]
                    fig.check(len(text) < 100_000, f"{where}: an unbounded answer")
                elif call.name not in expected:
                    fig.check(
                        text.startswith("Unknown tool"),
                        f"{where}: {call.name} ran before its pack was loaded: {text[:80]}",
                    )

    case()
    fig.note("packs loaded", loads)
    fig.check(loads > 0, "no case loaded a pack; loading was not tested")
    fig.assert_clean()
