"""The agent loop against llama.cpp's OpenAI-compatible server: its recorded exchanges
(``llamacpp/*.json``) replayed through a real local HTTP server, the real SDK clients in
front. With ``HAVERSACK_LLAMACPP_URL`` set (``nox -s llamacpp``) the same scenarios run
against that live server instead, and only what holds for any model is checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from haversack.errors import ProviderError

from ._llamacpp import MODEL, ReplayServer, load, load_all, run_scenario

LIVE = os.environ.get("HAVERSACK_LLAMACPP_URL")


@pytest.fixture
def server():
    """``(base URL, replay server or None)``."""
    if LIVE:
        yield LIVE.rstrip("/"), None
        return
    with ReplayServer(load_all()) as replay:
        yield replay.url, replay
    assert replay.unmatched == [], "requests the server was never sent (see the fixtures)"


def _chat_requests(replay: ReplayServer) -> list[dict]:
    return [e.request for e in replay.served if e.path == "/v1/chat/completions"]


@pytest.mark.parametrize("name", ["chat_tools", "chat_tools_streamed"])
def test_a_tool_round_trip_completes(server, name):
    """Turn 1 calls read_file (forced by tool_choice), turn 2 sends its result back: the
    assistant message carries ``"content": ""`` (the server answers 500 to null), and a
    streamed call whose every chunk repeats the name is read as one ``read_file``."""
    url, replay = server
    outcome = run_scenario(name, url)
    assert outcome.error is None, outcome.error
    assert outcome.calls, "the model called no tool"
    assert set(outcome.calls) == {"read_file"}
    if replay is None:
        return
    recorded, _ = load(name)
    assert outcome.calls == recorded["outcome"]["calls"]
    assert outcome.result.output == recorded["outcome"]["output"]
    second = _chat_requests(replay)[1]
    (assistant,) = [m for m in second["messages"] if m["role"] == "assistant"]
    assert assistant["content"] == ""
    assert [call["function"]["name"] for call in assistant["tool_calls"]] == ["read_file"]
    # tool_choice named a tool on turn 1 and went back to auto once it was called.
    first = _chat_requests(replay)[0]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    assert second["tool_choice"] == "auto"


def test_the_server_refuses_null_content_beside_tool_calls():
    """What the fix is for, kept in the recording: the same turn-2 request with
    ``"content": null`` got a 500 naming the content field."""
    _, exchanges = load("chat_tools")
    refused = [e for e in exchanges if e.status == 500]
    assert len(refused) == 1
    (assistant,) = [m for m in refused[0].request["messages"] if m["role"] == "assistant"]
    assert assistant["content"] is None
    assert "'content'), 'msg': 'Input should be a valid string'" in refused[0].body


def test_the_server_repeats_the_tool_name_in_every_chunk():
    """The recording shows why the SDK's own accumulator fails: every chunk of the one call
    repeats its name (and id), so joined they read ``read_fileread_file...``."""
    _, exchanges = load("chat_tools_streamed")
    names = []
    for line in exchanges[0].body.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    names.append(call["function"]["name"])
    assert len(names) > 1
    assert set(names) == {"read_file"}


def test_responses_against_a_chat_only_server_says_what_to_use(server):
    url, _ = server
    outcome = run_scenario("responses", url)
    assert isinstance(outcome.error, ProviderError)
    message = str(outcome.error)
    assert "Error code: 404" in message
    assert f"has no Responses API: use the model 'openai:{MODEL}', Chat Completions" in message


def test_anthropic_with_a_base_url_needs_no_key(server, monkeypatch):
    """No ANTHROPIC_API_KEY: the request goes out (and the server answers for itself)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    url, _ = server
    outcome = run_scenario("anthropic", url)
    assert isinstance(outcome.error, ProviderError)
    assert "No API key" not in str(outcome.error)
    assert "Error code: 404" in str(outcome.error)


def test_tool_choice_required_that_the_server_cannot_do_is_explained(server):
    url, _ = server
    outcome = run_scenario("chat_tool_choice_required", url)
    if outcome.error is None:  # a live server that learnt "required"
        assert outcome.calls
        return
    assert "Error code: 500" in str(outcome.error)
    assert "may not support tool_choice 'required'" in str(outcome.error)


def test_haversack_run_against_the_server_with_no_key(server, tmp_path):
    """``haversack run -m anthropic:... --base-url`` with no key in the environment reaches
    the server: exit 3 (docs/agents.md) with the server's 404 on one line, not "No API key"."""
    url, _ = server
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["HAVERSACK_PACKS"] = ""
    command = ["run", "go", "-p", "planning", "-m", f"anthropic:{MODEL}", "--base-url", url]
    done = subprocess.run(
        [sys.executable, "-m", "haversack", *command, "--transcript", "-"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    error, hint = done.stderr.splitlines()
    assert error.startswith("haversack: error: The Anthropic messages request for model")
    assert "Error code: 404" in error
    assert hint == "hint: see docs/agents.md (models, API keys, base URLs)."
