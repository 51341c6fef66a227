"""The python blocks of docs/agents.md and docs/adapters.md run as written, with the real
SDK clients pointed (by their own environment variables) at a scripted FakeProvider."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from haversack.testing import FakeCall, FakeProvider, FakeReply

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"<!-- fake-model: (\w+) -->\n```python\n(.*?)^```", re.DOTALL | re.MULTILINE)

SCRIPTS = {
    "words": [
        FakeReply("Let me count.", calls=[FakeCall("count_words", {"text": "to be or not to be"})]),
        FakeReply("There are 6 words."),
    ],
    "fetch": [
        FakeReply(
            "Fetching both.",
            calls=[
                FakeCall("fetch", {"url": "a.example"}),
                FakeCall("fetch", {"url": "b.example"}),
            ],
        ),
        FakeReply("Each title is its host name."),
    ],
    "delete": [
        FakeReply(
            calls=[
                FakeCall("delete", {"path": "junk.tmp"}),
                FakeCall("delete", {"path": "secrets/k"}),
            ]
        ),
        FakeReply("Removed the junk; secrets/ stays."),
    ],
}


def blocks() -> list[tuple[str, str, str]]:
    found = []
    for page in ("agents.md", "adapters.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        found += [(page, script, source) for script, source in BLOCK.findall(text)]
    return found


def test_every_python_block_is_run():
    for page in ("agents.md", "adapters.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        assert text.count("```python") == len([b for b in blocks() if b[0] == page])
    providers = " ".join(source for _, _, source in blocks())
    for spec in ('"openai:', '"openai-responses:', '"anthropic:'):
        assert spec in providers


@pytest.mark.parametrize(("page", "script", "source"), blocks(), ids=lambda v: str(v)[:20])
def test_block_runs(page, script, source, monkeypatch, capsys):
    for variable in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(variable, raising=False)
    name = f"_agents_doc_{abs(hash(source))}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        if script == "none":
            exec(compile(source, f"{page}", "exec"), module.__dict__)
            return
        with FakeProvider(SCRIPTS[script]) as fake:
            monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.anthropic_base_url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs")
            monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
            exec(compile(source, f"{page}", "exec"), module.__dict__)
        assert fake.remaining == 0  # the example used the whole script
    finally:
        del sys.modules[name]
    assert SCRIPTS[script][-1].text in capsys.readouterr().out or script == "delete"
