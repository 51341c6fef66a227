"""A tool's questions and progress in the agent loop: ``Agent(interaction=...)`` reaches the
handler, and ``haversack run``'s terminal interaction asks on a real pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import sys

import pytest

from haversack import InteractionError, ScriptedInteraction, Tool, ToolContext, ToolResult
from haversack._interaction import Progress, question
from haversack.agent import Agent
from haversack.cli.run import _Output, _Terminal
from haversack.testing import FakeCall, FakeProvider, FakeReply

from ._kit import PathArgs, prompt, provider


def confirm(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    context.report_progress(1, 2, "asking")
    answer = context.ask(f"Delete {params.path}?")
    return ToolResult.ok(None, message=f"{answer.action}:{answer.value}")


def test_the_agent_hands_its_interaction_to_the_tools():
    tools = (Tool[PathArgs, None](name="confirm", description="Ask.", handler=confirm),)
    user = ScriptedInteraction([True])
    script = [FakeReply("", calls=[FakeCall("confirm", {"path": "a"})]), FakeReply("Done.")]
    with FakeProvider(script) as fake:
        agent = Agent(prompt(extra_tools=tools), provider("openai", fake), interaction=user)
        result = agent.run("Delete a.")
    (call,) = result.calls
    assert call.result.message == "accept:True"
    assert user.questions[0].message == "Delete a?"
    assert user.updates == [Progress(1, 2, "asking")]


@pytest.fixture
def terminal(monkeypatch):
    """A real pseudo-terminal as stdin; returns what to type and the output."""
    master, slave = pty.openpty()
    stdin = os.fdopen(slave, "r", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    out = io.StringIO()
    yield (lambda text: os.write(master, text.encode())), _Terminal(_Output(out)), out
    stdin.close()
    os.close(master)


FORM = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "title": "Go ahead"},
        "n": {"type": "integer", "minimum": 1},
        "colour": {"type": "string", "enum": ["red", "green"]},
    },
    "required": ["ok", "n"],
}


def test_the_terminal_asks_each_field_and_types_the_answer(terminal):
    type_in, term, out = terminal
    type_in("maybe\ny\nseven\n7\ngreen\n")
    answer = term.ask(question("Shall I?\x1b[2J", FORM, tool="rm"))
    assert answer.action == "accept"
    assert answer.content == {"ok": True, "n": 7, "colour": "green"}
    shown = out.getvalue()
    assert "? rm asks: Shall I?\\x1b[2J" in shown  # escaped, never a live escape sequence
    assert "Go ahead (y/n): " in shown
    assert "colour (red / green): " in shown
    assert shown.count("again") == 2  # "maybe" and "seven" were asked again


def test_an_empty_required_field_declines_and_end_of_input_cancels(terminal):
    type_in, term, _ = terminal
    type_in("\n")
    assert term.ask(question("Shall I?", bool)).action == "decline"
    type_in("\x04")  # Ctrl-D: end of input
    assert term.ask(question("Shall I?", bool)).action == "cancel"


def test_an_answer_outside_the_form_declines(terminal):
    type_in, term, out = terminal
    type_in("y\n0\n\n")  # n must be at least 1
    assert term.ask(question("Shall I?", FORM)).action == "decline"
    assert "does not fit" in out.getvalue()


def test_without_a_terminal_the_tool_is_told_nobody_can_answer(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    term = _Terminal(_Output(io.StringIO()))
    with pytest.raises(InteractionError, match="no terminal to ask on"):
        term.ask(question("Shall I?", bool, tool="rm"))


def test_progress_is_printed_and_the_final_report_always(terminal):
    _, term, out = terminal
    term.progress(Progress(1, 10, "one"))
    for step in range(2, 10):
        term.progress(Progress(step, 10, None))  # within the interval: at most some shown
    term.progress(Progress(10, 10, "done\x1b]0;x"))
    lines = out.getvalue().splitlines()
    assert lines[0] == "  … 1/10 one"
    assert lines[-1] == "  … 10/10 done\\x1b]0;x"
