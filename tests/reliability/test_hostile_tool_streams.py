"""Hostile peers: tool-call streams as servers really send them, and worse. A real local
HTTP server streams Chat Completions chunks to the real openai SDK through ``OpenAIChat``:
names whole in every chunk (llama.cpp), in pieces (the API), in pieces then whole again,
ids repeated, calls interleaved by index; and garbage in the same places (wrong types,
missing fields, no choices, cut short).

A well-formed case must come back as the call the server meant (its tool, its arguments);
any case must end as a ``Reply`` or a ``ProviderError``: never another exception, never a
call whose name is a doubled tool name.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from haversack.agent import Conversation, OpenAIChat, Reply
from haversack.errors import ProviderError

from ._harness import Figure, budget

AREA = "hostile-peers"
TOOLS = ("read_file", "write_file", "grep")


class _Streams:
    """Serves each POST the next body of ``bodies`` as an event stream."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                payload = owner.bodies.pop(0).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def _pieces(rng: random.Random, text: str) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 3))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def _well_formed(rng: random.Random) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Chunks of 1-3 calls in one of the shapes servers send, and the calls they mean."""
    meant: list[tuple[str, str]] = []
    per_call: list[list[dict[str, Any]]] = []
    for index in range(rng.randint(1, 3)):
        name = rng.choice(TOOLS)
        arguments = json.dumps({"path": f"f{rng.randint(0, 99)}.txt", "n": rng.randint(0, 9)})
        meant.append((name, arguments))
        parts = _pieces(rng, arguments)
        shape = rng.choice(("whole-every-chunk", "pieces", "pieces-then-whole", "first-only"))
        if shape == "pieces":
            names: list[str | None] = [*_pieces(rng, name), *[None] * len(parts)]
        elif shape == "pieces-then-whole":
            names = [*_pieces(rng, name), *[name] * len(parts)]
        elif shape == "first-only":
            names = [name, *[None] * (len(parts) - 1)]
        else:
            names = [name] * len(parts)
        parts += [""] * (len(names) - len(parts))
        call_id = f"call_{index}"
        repeat_id = shape == "whole-every-chunk"
        per_call.append(
            [
                _call(index, piece_name, piece, call_id if repeat_id or i == 0 else None)
                for i, (piece_name, piece) in enumerate(zip(names, parts, strict=True))
            ]
        )
    chunks: list[dict[str, Any]] = []
    if rng.random() < 0.5:  # interleaved by index, as parallel calls may come
        while any(per_call):
            source = rng.choice([c for c in per_call if c])
            chunks.append(source.pop(0))
    else:
        for call_chunks in per_call:
            chunks.extend(call_chunks)
    return chunks, meant


def _call(index: int, name: str | None, arguments: str, call_id: str | None) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        call["id"] = call_id
    return _chunk({"tool_calls": [call]})


def _chunk(delta: Any, finish: Any = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


GARBAGE: tuple[Callable[[random.Random], Any], ...] = (
    lambda rng: rng.choice([None, 0, -1, 2**70, "x", [], {}, True, 1.5]),
    lambda rng: {"tool_calls": [{"index": rng.choice([None, "0", -3]), "function": None}]},
    lambda rng: {"tool_calls": [{"function": {"name": 7, "arguments": ["a"]}}]},
    lambda rng: {"tool_calls": "read_file"},
    lambda rng: {"content": {"text": "hi"}},
)


def _garbage(rng: random.Random) -> list[Any]:
    chunks: list[Any] = [_well_formed(rng)[0][0]] if rng.random() < 0.5 else []
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        if kind == 0:
            chunks.append(_chunk(rng.choice(GARBAGE)(rng)))
        elif kind == 1:
            chunks.append({"id": "x", "choices": rng.choice([None, [], "x", [None], [1]])})
        elif kind == 2:
            chunks.append(_chunk({}, finish=rng.choice([7, None, "length", []])))
        else:
            chunks.append(rng.choice([[], "text", 3, None]))
    return chunks


def _body(chunks: list[Any], *, done: bool = True) -> str:
    events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    return events + ("data: [DONE]\n\n" if done else "")


def _cases(count: int) -> Iterator[tuple[str, str, list[tuple[str, str]] | None]]:
    rng = random.Random(28)
    for number in range(count):
        if number % 3 == 2:
            yield f"garbage-{number}", _body(_garbage(rng), done=rng.random() < 0.7), None
        else:
            chunks, meant = _well_formed(rng)
            chunks.append(_chunk({}, "tool_calls"))
            yield f"quirk-{number}", _body(chunks), meant


def _complete(chat: OpenAIChat) -> Reply | BaseException:
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in TOOLS]
    try:
        return chat.complete(Conversation("", [{"role": "user", "content": "go"}]), tools, None)
    except BaseException as exc:  # the case's outcome, whatever it is
        return exc


def test_tool_call_streams_are_assembled_or_refused(
    figure: Callable[[str, str], Figure],
) -> None:
    fig = figure(AREA, "tool-call streams: names repeated, in pieces, garbage")
    streams = _Streams()
    chat = OpenAIChat("m", base_url=streams.url, api_key="k", stream=True)
    try:
        for label, body, meant in _cases(budget(90, 1500)):
            fig.case()
            streams.bodies.append(body)
            outcome = _complete(chat)
            if meant is None:
                if isinstance(outcome, Reply):
                    names = {call.name for call in outcome.calls}
                    fig.check(
                        not any(n.startswith(t * 2) for n in names for t in TOOLS),
                        f"{label}: a doubled name: {names}",
                    )
                else:
                    fig.check(isinstance(outcome, ProviderError), f"{label}: {outcome!r}")
                continue
            if not fig.check(isinstance(outcome, Reply), f"{label}: {outcome!r}"):
                continue
            assert isinstance(outcome, Reply)
            got = [(call.name, call.arguments) for call in outcome.calls]
            fig.check(got == meant, f"{label}: {got} != {meant}")
    finally:
        chat.close()
        streams.server.shutdown()
        streams.server.server_close()
    fig.assert_clean()
