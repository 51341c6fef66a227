"""What the servers people run send, through the real SDK clients and a real local HTTP
server: tool-call streams that repeat names, empty and garbage replies, keys optional with a
base URL, ``tool_choice`` per provider, and ``haversack run``'s options for them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from haversack.agent import Agent, AnthropicMessages, Conversation, OpenAIChat
from haversack.errors import ProviderError
from haversack.testing import FakeCall, FakeProvider, FakeReply

from ._kit import PROVIDERS, prompt, provider


class Scripted:
    """Answers the n-th POST with the n-th ``(status, content type, body)``."""

    def __init__(self, answers: list[tuple[int, str, str]]) -> None:
        self.answers = list(answers)
        self.bodies: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                owner.bodies.append(
                    json.loads(self.rfile.read(int(self.headers["content-length"])))
                )
                status, kind, text = owner.answers.pop(0)
                payload = text.encode()
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Scripted:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _sse(*chunks: dict) -> tuple[int, str, str]:
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return 200, "text/event-stream", "".join(lines) + "data: [DONE]\n\n"


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _call_chunk(index: int, name: str | None, arguments: str, call_id: str | None) -> dict:
    function = {"arguments": arguments} | ({"name": name} if name is not None else {})
    call = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        call["id"] = call_id
    return _chunk({"tool_calls": [call]})


def _tools(*names: str) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


def _streamed(chunks: list[dict], tools: list[dict], *, use_async: bool = False):
    conversation = Conversation("", [{"role": "user", "content": "go"}])
    with Scripted([_sse(*chunks, _chunk({}, "tool_calls"))]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", stream=True)
        if use_async:

            async def complete():
                try:
                    return await chat.acomplete(conversation, tools, None)
                finally:
                    await chat.aclose()

            return asyncio.run(complete())
        try:
            return chat.complete(conversation, tools, None)
        finally:
            chat.close()


@pytest.mark.parametrize(
    ("names", "ids", "expected"),
    [
        # llama.cpp's server: the whole name (and id) in every chunk of the call.
        (["read_file", "read_file", "read_file"], ["c1", "c1", "c1"], "read_file"),
        # The API's own way: the name in pieces, the id once.
        (["read_", "file", None], ["c1", None, None], "read_file"),
        # In pieces, then whole again in later chunks.
        (["read_", "file", "read_file"], ["c1", None, "c1"], "read_file"),
    ],
)
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_streamed_tool_call_is_assembled_as_the_server_meant_it(names, ids, expected, use_async):
    chunks = [
        _call_chunk(0, name, piece, call_id)
        for name, piece, call_id in zip(names, ['{"path"', ': "a', '.txt"}'], ids, strict=True)
    ]
    reply = _streamed(chunks, _tools("read_file", "write_file"), use_async=use_async)
    (call,) = reply.calls
    assert (call.call_id, call.name, call.arguments) == ("c1", expected, '{"path": "a.txt"}')
    assert reply.stop == "tool_calls"


def test_two_streamed_calls_that_repeat_their_names_stay_apart():
    chunks = [
        _call_chunk(0, "read_file", '{"path": "a"}', "c1"),
        _call_chunk(1, "write_file", '{"path": ', "c2"),
        _call_chunk(1, "write_file", '"b"}', "c2"),
    ]
    reply = _streamed(chunks, _tools("read_file", "write_file"))
    assert [(c.call_id, c.name, c.arguments) for c in reply.calls] == [
        ("c1", "read_file", '{"path": "a"}'),
        ("c2", "write_file", '{"path": "b"}'),
    ]


def test_a_name_in_pieces_that_really_repeats_is_kept_when_it_names_a_tool():
    chunks = [_call_chunk(0, "ab", "{", "c1"), _call_chunk(0, "ab", "}", None)]
    (call,) = _streamed(chunks, _tools("abab")).calls
    assert call.name == "abab"


def test_a_name_that_cannot_be_told_is_refused_with_advice():
    chunks = [_call_chunk(0, "ab", "{", "c1"), _call_chunk(0, "ab", "}", None)]
    with pytest.raises(ProviderError) as caught:
        _streamed(chunks, _tools("read_file"))
    assert str(caught.value) == (
        "The OpenAI chat completions request for model 'm' failed: tool call 0 of the stream "
        "has a name sent in pieces that repeat ('ab' + 'ab'), and neither reading names a "
        "tool; run with --no-stream (stream=False) so the server sends each call whole"
    )


@pytest.mark.parametrize(
    ("answer", "stream", "detail"),
    [
        (_sse(), True, "the server's stream ended without a single chunk (an empty reply"),
        (
            _sse({"id": "x", "object": "chat.completion.chunk", "choices": []}),
            True,
            "the server streamed 1 chunk(s) with no choice in them",
        ),
        ((200, "application/json", '{"id": "x", "choices": []}'), False, "has no choices"),
        ((200, "text/plain", "Service ready"), False, "answered with text, not a chat"),
    ],
)
def test_an_empty_or_garbage_reply_is_one_clear_error(answer, stream, detail):
    with Scripted([answer]) as server:
        chat = OpenAIChat("m", base_url=server.url, api_key="k", stream=stream)
        with pytest.raises(ProviderError) as caught:
            chat.complete(Conversation("", [{"role": "user", "content": "go"}]), [], None)
        chat.close()
    message = str(caught.value)
    assert message.startswith("The OpenAI chat completions request for model 'm' failed: ")
    assert detail in message
    assert message.endswith("check that the base URL points at the OpenAI API")
    assert "Error" not in message.split("failed: ", 1)[1]  # no exception class names


@pytest.mark.parametrize("kind", PROVIDERS)
def test_tool_choice_is_mapped_per_provider_and_released_once_a_tool_ran(kind):
    script = [
        FakeReply(calls=[FakeCall("read_note", {"path": "a"}, "c1")]),
        FakeReply("done"),
    ]
    with FakeProvider(script) as fake:
        model = provider(kind, fake)
        model.tool_choice = "read_note"
        result = Agent(prompt(), model).run("go")
    assert result.output == "done"
    first, second = (request.body["tool_choice"] for request in fake.requests)
    forced, auto = {
        "openai": ({"type": "function", "function": {"name": "read_note"}}, "auto"),
        "openai-responses": ({"type": "function", "name": "read_note"}, "auto"),
        "anthropic": ({"type": "tool", "name": "read_note"}, {"type": "auto"}),
    }[kind]
    assert (first, second) == (forced, auto)


@pytest.mark.parametrize(
    ("kind", "choice", "sent"),
    [
        ("openai", "required", "required"),
        ("openai", "none", "none"),
        ("openai-responses", "required", "required"),
        ("anthropic", "required", {"type": "any"}),
        ("anthropic", "none", {"type": "none"}),
    ],
)
def test_the_named_choices_are_mapped_per_provider(kind, choice, sent):
    with FakeProvider([FakeReply("done")]) as fake:
        model = provider(kind, fake)
        model.tool_choice = choice
        Agent(prompt(), model).run("go")
    assert fake.requests[0].body["tool_choice"] == sent


def test_a_tool_choice_that_names_no_tool_is_refused():
    with FakeProvider([FakeReply("done")]) as fake:
        model = provider("openai", fake)
        model.tool_choice = "delete_everything"
        with pytest.raises(ProviderError, match="tool_choice 'delete_everything' is neither"):
            Agent(prompt(), model).run("go")
    assert fake.requests == []


def test_an_anthropic_base_url_from_the_environment_needs_no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    model = AnthropicMessages("m")
    try:
        assert model.client.api_key == "unused"
    finally:
        model.close()


# ------------------------------------------------------------------------- haversack run


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update({"HAVERSACK_PACKS": "", "COLUMNS": "200"}, **extra)
    return env


def _run(args: list[str], cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "haversack", "run", "Plan it", "-p", "planning", *args],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_an_empty_stream_ends_haversack_run_with_one_line_and_exit_3(tmp_path):
    with Scripted([_sse()]) as server:
        done = _run(["-m", "openai:m", "--base-url", server.url, "--transcript", "-"], tmp_path)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "haversack: error: The OpenAI chat completions request for model 'm' failed: the "
        "server's stream ended without a single chunk (an empty reply; if the server answers "
        "without streaming, run with --no-stream, stream=False); check that the base URL "
        "points at the OpenAI API",
        "hint: see docs/agents.md (models, API keys, base URLs).",
    ]


@pytest.mark.parametrize(
    ("kind", "forced"),
    [
        ("openai", {"type": "function", "function": {"name": "planning_read_plan"}}),
        ("anthropic", {"type": "tool", "name": "planning_read_plan"}),
    ],
)
def test_run_takes_the_api_key_and_the_tool_choice(tmp_path, kind, forced):
    script = [FakeReply(calls=[FakeCall("planning_read_plan", {}, "c1")]), FakeReply("done")]
    with FakeProvider(script) as fake:
        url = fake.anthropic_base_url if kind == "anthropic" else fake.openai_base_url
        options = ["--api-key", "sk-cli", "--tool-choice", "planning_read_plan"]
        done = _run(["-m", f"{kind}:m", "--base-url", url, *options, "--transcript", "-"], tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = fake.requests
    assert first.headers["authorization"] == "Bearer sk-cli"
    assert first.body["tool_choice"] == forced
    assert second.body["tool_choice"] in ("auto", {"type": "auto"})


def test_run_refuses_a_tool_choice_that_names_no_tool(tmp_path):
    done = _run(["-m", "openai:m", "--tool-choice", "planning_nope"], tmp_path)
    assert done.returncode == 2
    assert "--tool-choice 'planning_nope' is neither auto, required, none nor one of the " in (
        done.stderr
    )
    assert "planning_read_plan" in done.stderr
