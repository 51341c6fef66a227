"""The server's approval question and answers, below the transport: who is asked, what they
see, and that an approval covers exactly the arguments shown."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace

import anyio
import mcp.types as types
import pytest

from haversack import (
    ApprovalPolicy,
    CallOutcome,
    MarkdownSection,
    Prompt,
    Session,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    tool,
)
from haversack.server._elicitation import (
    MAX_REASON_CHARS,
    MAX_SHOWN_CHARS,
    ask_approval,
    can_elicit,
    shown_arguments,
)


@dataclass(frozen=True)
class Text:
    text: str


RAN: list[str] = []


@tool
def erase(params: Text, *, context: ToolContext) -> ToolResult[None]:
    """Erase."""
    RAN.append(params.text)
    return ToolResult.ok(None, f"erased {params.text}")


def _executor() -> ToolExecutor:
    prompt = Prompt(
        ns="t",
        key="e",
        sections=[MarkdownSection(title="E", key="e", template="x", tools=[erase])],
        policies=[ApprovalPolicy(["erase"])],
    )
    return ToolExecutor(prompt.render(), session=Session())


_FORM = types.ElicitationCapability()


def _ctx(answer=None, *, elicitation=_FORM):
    asked = []

    async def elicit_form(message, requested_schema, related_request_id=None):
        asked.append((message, related_request_id))
        return answer

    capabilities = types.ClientCapabilities(elicitation=elicitation)
    session = SimpleNamespace(client_capabilities=capabilities, elicit_form=elicit_form)
    return SimpleNamespace(session=session, request_id=7), asked


@pytest.mark.parametrize(
    ("elicitation", "expected"),
    [
        (None, False),
        (types.ElicitationCapability(), True),  # no mode named: form
        (types.ElicitationCapability(form={}), True),
        (types.ElicitationCapability(form={}, url={}), True),
        (types.ElicitationCapability(url={}), False),
    ],
)
def test_who_can_be_asked(elicitation, expected):
    ctx, _ = _ctx(elicitation=elicitation)
    assert can_elicit(ctx) is expected


def test_the_arguments_are_shown_whole_and_hidden_characters_escaped():
    shown = shown_arguments('{"path": "a\u200bb", "tag": "\U000e0041", "note": "\u00e9\\n"}')
    assert json.loads(shown) == {"path": "a\u200bb", "tag": "\U000e0041", "note": "\u00e9\n"}
    assert "\u200b" not in shown
    assert "\U000e0041" not in shown
    assert "\\u200b" in shown
    assert "\\udb40\\udc41" in shown
    assert "\u00e9" in shown  # readable text stays readable
    assert shown_arguments(None) == "{}"


def test_an_approval_is_void_if_the_arguments_change_before_it_is_used():
    RAN.clear()
    executor = _executor()
    first = executor.execute("erase", {"text": "tmp"}, call_id="c1").value
    ctx, asked = _ctx(types.ElicitResult(action="accept", content={"approve": True}))
    answer = anyio.run(ask_approval, ctx, first, 5.0)
    assert '"text": "tmp"' in asked[0][0]
    assert asked[0][1] == 7
    # The same call id held again with other arguments replaces what the user saw.
    executor.execute("erase", {"text": "everything"}, call_id="c1")
    result = executor.resume("c1", answer)
    assert not result.success
    assert "its approval was given for other arguments" in result.message
    assert RAN == []
    outcomes = [e.outcome for e in executor.session[ToolInvoked].all()]
    assert outcomes == [CallOutcome.PENDING, CallOutcome.PENDING, CallOutcome.DENIED]


def test_arguments_too_long_to_show_are_refused_without_asking():
    executor = _executor()
    held = executor.execute("erase", {"text": "x" * MAX_SHOWN_CHARS}, call_id="c").value
    ctx, asked = _ctx(types.ElicitResult(action="accept", content={"approve": True}))
    answer = anyio.run(ask_approval, ctx, held, 5.0)
    assert asked == []
    result = executor.resume("c", answer)
    assert "too long to show a person for approval" in result.message


def test_the_users_reason_is_one_bounded_line():
    executor = _executor()
    held = executor.execute("erase", {"text": "x"}, call_id="c").value
    reason = "line one\nline two\u202e " + "y" * (3 * MAX_REASON_CHARS)
    ctx, _ = _ctx(types.ElicitResult(action="accept", content={"approve": False, "reason": reason}))
    answer = anyio.run(ask_approval, ctx, held, 5.0)
    assert answer.reason.startswith("the user refused it: line one line two\\u202e yyy")
    assert len(answer.reason) < MAX_REASON_CHARS + 200
