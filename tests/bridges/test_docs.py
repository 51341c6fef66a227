"""The bridge examples of ``docs/bridges.md`` (files under ``docs/snippets/``) run as written,
each with its framework's offline model in place of a real one."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "docs" / "snippets"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_snippet_{name}", SNIPPETS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_includes_every_snippet():
    page = (ROOT / "docs" / "bridges.md").read_text(encoding="utf-8")
    for path in sorted(SNIPPETS.glob("bridge_*.py")):
        assert f'--8<-- "docs/snippets/{path.name}"' in page, path.name


def test_pydantic_ai_example():
    steps = [
        ToolCallPart("write_file", {"path": "notes.md", "content": "hello\n"}, tool_call_id="w"),
        ToolCallPart("rm", {"path": "notes.md"}, tool_call_id="r"),
        TextPart("Created and removed notes.md."),
    ]
    returns = []

    def model(messages, info):
        returns.extend(p.content for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[steps.pop(0)])

    asked = []

    def approve(call):
        asked.append(call.tool_name)
        return True

    output = asyncio.run(_load("bridge_pydantic_ai").main(FunctionModel(model), approve))
    assert output == "Created and removed notes.md."
    assert asked == ["rm"]
    assert "notes.md" in returns[0]
    assert "Removed" in returns[1] or "removed" in returns[1], returns[1]


def test_openai_agents_example():
    from agents import RunConfig

    from ._agents_model import ScriptedModel

    model = ScriptedModel(
        ("write_file", {"path": "notes.md", "content": "hello\n"}, "w"),
        ("rm", {"path": "notes.md"}, "r"),
        "Created and removed notes.md.",
    )
    asked = []

    def approve(item):
        asked.append(item.tool_name)
        return True

    module = _load("bridge_openai_agents")
    output = asyncio.run(module.main(model, approve, run_config=RunConfig(tracing_disabled=True)))
    assert output == "Created and removed notes.md."
    assert asked == ["rm"]
    assert "notes.md" in model.seen[0]
    assert "notes.md" in model.seen[1]


def test_llm_example(monkeypatch):
    import io
    import sys

    from ._llm_model import MODEL_ID, scripted

    monkeypatch.setattr(sys, "stdin", io.StringIO())  # no terminal, even under pytest -s

    steps = (
        ("write_file", {"path": "notes.md", "content": "hello\n"}, "w"),
        ("rm", {"path": "notes.md"}, "r"),
        "Created notes.md; removing it was not approved.",
    )
    with scripted(*steps) as model:
        output = _load("bridge_llm").main(MODEL_ID)
    assert output.endswith("Created notes.md; removing it was not approved.")
    assert "notes.md" in model.seen[0]
    # No terminal in the test run: ask_on_terminal answers no, and the model is told.
    assert "The user did not approve this call." in model.seen[1]
