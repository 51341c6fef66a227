"""The executor's pipeline: the parse step words refusals once, validators are built with the
executor, and a call's result text is rendered once and reused by the log and every adapter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

import pytest

from haversack import (
    MarkdownSection,
    Prompt,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    serde,
)
from haversack._arguments import ArgumentParser
from haversack._result import render_value
from haversack.adapters import anthropic, mcp, openai
from haversack.errors import ToolValidationError


@dataclass(frozen=True)
class Args:
    path: str
    count: int = 1


@dataclass
class Counted:
    """A value that counts how often it is rendered."""

    text: str
    renders: int = 0

    def render(self) -> str:
        self.renders += 1
        return f"<{self.text}>"


def _prompt(*tools: Tool[Any, Any]) -> Prompt:
    return Prompt(
        ns="t",
        key="pipeline",
        sections=[MarkdownSection(title="S", key="s", template="s", tools=list(tools))],
    )


def test_a_calls_text_is_rendered_once_and_reused_by_the_log_and_every_adapter() -> None:
    value = Counted("v")

    def show(params: Args, *, context: ToolContext) -> ToolResult[Counted]:
        return ToolResult.ok(value, message="Shown:")

    tool = Tool[Args, Counted](name="show", description="d", handler=show)
    session = Session()
    executor = ToolExecutor(_prompt(tool).render(), session=session)
    result = executor.execute("show", {"path": "a"}, call_id="c1")
    assert value.renders == 1
    text = "Shown:\n<v>"
    assert result.render() == text
    assert session[ToolInvoked].latest().rendered == text  # type: ignore[union-attr]
    assert anthropic.tool_result_block("c1", result)["content"] == text
    assert openai.chat_tool_message("c1", result.render())["content"] == text
    assert mcp.call_result(result)["content"][0]["text"] == text
    assert value.renders == 1  # nobody rendered it again


def test_result_json_is_serde_dump_without_none_fields() -> None:
    @dataclass(frozen=True)
    class Row:
        name: str
        note: str | None = None
        tags: tuple[str, ...] = ()
        meta: dict[str, Any] | None = None

    for value in (Row("a"), Row("é", "n", ("x",), {"k": None, "j": 1.5}), [Row("a"), Row("b")]):
        expected = json.dumps(
            serde.dump(value, exclude_none=True), ensure_ascii=False, separators=(",", ":")
        )
        assert render_value(value) == expected


def test_an_unencodable_value_fails_the_call_with_a_clear_message() -> None:
    class Opaque:
        pass

    def odd(params: Args, *, context: ToolContext) -> ToolResult[Any]:
        return ToolResult.ok({"x": Opaque()})

    tool = Tool[Args, None](name="odd", description="d", handler=odd)
    result = ToolExecutor(_prompt(tool).render(), session=Session()).execute("odd", {"path": "a"})
    assert not result.success
    assert "cannot be rendered" in result.message


def test_the_parse_step_words_its_refusals_for_the_model() -> None:
    tool = Tool[Args, None](name="reader", description="d", handler=lambda p, *, context: None)
    parse = ArgumentParser(tool)
    assert parse('{"path": "a"}') == Args("a")
    with pytest.raises(ToolValidationError) as caught:
        parse('{"path": "a", "bogus": 1}')
    assert caught.value.message == (
        "Invalid arguments for 'reader': unknown field 'bogus' (allowed fields: path, count)."
    )
    with pytest.raises(ToolValidationError) as caught:
        parse({"path": {1, 2}})
    assert caught.value.message.startswith("Invalid arguments for 'reader': they are not JSON")
    bare = Tool[None, None](name="bare", description="d", handler=lambda p, *, context: None)
    with pytest.raises(ToolValidationError) as caught:
        ArgumentParser(bare)('{"x": 1}')
    assert caught.value.message == (
        "Invalid arguments for 'bare': this tool takes no arguments, got {\"x\": 1}; "
        "call it with {}."
    )


def test_validators_are_built_when_the_executor_is_created() -> None:
    from haversack.serde import _core

    @dataclass(frozen=True)
    class Fresh:  # a type no other test has parsed
        size: int

    tool = Tool[Fresh, None](name="fresh", description="d", handler=lambda p, *, context: None)
    rendered = _prompt(tool).render()
    assert Fresh not in _core._validators
    ToolExecutor(rendered, session=Session())
    assert Fresh in _core._validators


def test_rendering_a_prompt_imports_no_pydantic_and_an_executor_does() -> None:
    script = textwrap.dedent(
        """
        import sys
        from dataclasses import dataclass
        from haversack import MarkdownSection, Prompt, Session, Tool, ToolExecutor, ToolResult

        @dataclass(frozen=True)
        class Args:
            path: str

        def handler(params, *, context):
            return ToolResult.ok()

        tool = Tool[Args, None](name="t", description="d", handler=handler)
        prompt = Prompt(ns="n", key="k", sections=[
            MarkdownSection(title="T", key="t", template="t", tools=[tool])])
        rendered = prompt.render()
        print("pydantic_core" in sys.modules)
        ToolExecutor(rendered, session=Session())
        print("pydantic_core" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]
