"""``FakeProvider``: an in-process model server the real ``openai`` and ``anthropic`` clients
talk to, answering from a script, turn by turn.

It speaks three wire formats on one port: OpenAI Chat Completions (``POST
/v1/chat/completions``), OpenAI Responses (``POST /v1/responses``) and Anthropic Messages
(``POST /v1/messages``), each with or without ``stream`` (server-sent events). Every request
is recorded, so a test can assert on exactly what the model was sent.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeCall", "FakeProvider", "FakeReply", "ReceivedRequest"]


@dataclass(frozen=True, slots=True)
class FakeCall:
    """A tool call the fake model makes. ``arguments`` is sent as is when it is a string
    (so a test can send malformed JSON); a mapping is JSON-encoded (or, for Anthropic, sent
    as the ``input`` object)."""

    name: str
    arguments: str | Mapping[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class FakeReply:
    """One model turn: text, tool calls, the token usage to report and an optional stop
    reason (``"length"`` for a truncated answer; otherwise derived from the calls)."""

    text: str = ""
    calls: Sequence[FakeCall] = ()
    input_tokens: int = 10
    output_tokens: int = 5
    stop: str | None = None


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """A request the fake provider received: the path and the decoded JSON body."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def api(self) -> str:
        """``"chat"``, ``"responses"`` or ``"anthropic"``."""
        return _API[self.path]

    @property
    def system(self) -> str:
        """The system text (instructions) the request carried, ``""`` if none."""
        body = self.body
        if self.api == "chat":
            for message in body.get("messages", ()):
                if message.get("role") == "system":
                    return str(message.get("content", ""))
            return ""
        key = "instructions" if self.api == "responses" else "system"
        system = body.get(key) or ""
        if isinstance(system, list):  # Anthropic also takes a list of text blocks
            return "".join(str(block.get("text", "")) for block in system)
        return str(system)

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offered, in order."""
        tools = self.body.get("tools") or ()
        if self.api == "chat":
            return [t["function"]["name"] for t in tools]
        return [t["name"] for t in tools]

    @property
    def tool_results(self) -> dict[str, str]:
        """Every tool result in the request's conversation: call id -> the text the model
        was sent (in the provider's own field: ``content`` or ``output``)."""
        body = self.body
        if self.api == "chat":
            return {
                m["tool_call_id"]: m["content"]
                for m in body.get("messages", ())
                if m.get("role") == "tool"
            }
        if self.api == "responses":
            items = body.get("input")
            return {
                i["call_id"]: i["output"]
                for i in (items if isinstance(items, list) else ())
                if i.get("type") == "function_call_output"
            }
        return {
            block["tool_use_id"]: _block_text(block.get("content"))
            for message in body.get("messages", ())
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        }


def _ack_now(connection: object) -> None:
    """Acknowledge the request's headers at once (Linux): a client that writes the body
    separately, under Nagle's algorithm, otherwise waits ~40 ms for our delayed ACK."""
    import socket
    from contextlib import suppress

    quickack = getattr(socket, "TCP_QUICKACK", None)
    if quickack is not None and isinstance(connection, socket.socket):
        with suppress(OSError):  # not a TCP socket after all: nothing to speed up
            connection.setsockopt(socket.IPPROTO_TCP, quickack, 1)


def _block_text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content or "")


#: What the script may hold: a reply, or a function of the request returning one.
Step = FakeReply | Callable[[ReceivedRequest], FakeReply]

_API = {
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
    "/v1/messages": "anthropic",
}


class FakeProvider:
    """A scripted model server on ``127.0.0.1`` (a free port), in a background thread.

    Use it as a context manager; point an OpenAI client at :attr:`openai_base_url` and an
    Anthropic client at :attr:`anthropic_base_url` (any API key will do). Each request takes
    the next step of the script; a request past its end gets an HTTP 400 naming the problem.
    """

    def __init__(self, script: Iterable[Step] = ()) -> None:
        self._script: list[Step] = list(script)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[ReceivedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifetime
    def start(self) -> FakeProvider:
        """Start serving (idempotent); returns ``self``."""
        if self._server is not None:
            return self
        provider = self

        class Handler(_Handler):
            owner = provider

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="haversack-fake-provider", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ script
    def add(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._lock:
            self._script.extend(steps)

    @property
    def remaining(self) -> int:
        """Steps not yet used."""
        with self._lock:
            return len(self._script)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._server is None:
            raise RuntimeError("The fake provider is not running; call start() or use `with`.")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url`` for ``openai.OpenAI``: :attr:`url` + ``/v1``."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``base_url`` for ``anthropic.Anthropic``: :attr:`url`."""
        return self.url

    def _next(self, request: ReceivedRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if not self._script:
                raise _ScriptExhaustedError(
                    f"the fake provider's script is exhausted after {len(self.requests) - 1} "
                    f"request(s); add a FakeReply for request {len(self.requests)}"
                )
            step = self._script.pop(0)
        return step(request) if callable(step) else step

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"


class _ScriptExhaustedError(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    owner: FakeProvider
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, the body waits for
    # the client's delayed ACK (~40 ms per request on Linux).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read :attr:`FakeProvider.requests` instead."""

    def do_POST(self) -> None:
        """Answer one API request from the script."""
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("content-length") or 0)
        _ack_now(self.connection)
        raw = self.rfile.read(length)
        if path not in _API:
            self._error(404, f"the fake provider serves {', '.join(_API)}, not {path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError as exc:
            self._error(400, f"the request body is not JSON: {exc}")
            return
        request = ReceivedRequest(path, body, {k.lower(): v for k, v in self.headers.items()})
        try:
            reply = self.owner._next(request)
        except _ScriptExhaustedError as exc:
            self._error(400, str(exc))
            return
        api = request.api
        stream = bool(body.get("stream"))
        model = str(body.get("model", "fake-model"))
        if api == "chat":
            payload = _chat(self.owner, reply, model)
            events = _chat_events(payload) if stream else None
        elif api == "responses":
            payload = _response(self.owner, reply, model)
            events = _response_events(payload) if stream else None
        else:
            payload = _message(self.owner, reply, model)
            events = _message_events(payload) if stream else None
        if events is None:
            self._send(200, "application/json", json.dumps(payload).encode())
        else:
            text = "".join(
                (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                for name, data in events
            )
            if api == "chat":
                text += "data: [DONE]\n\n"
            self._send(200, "text/event-stream", text.encode())

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        body: dict[str, Any] = {"error": {"message": message, "type": "invalid_request_error"}}
        if self.path.startswith("/v1/messages"):
            body = {"type": "error", **body}
        self._send(status, "application/json", json.dumps(body).encode())


# ---------------------------------------------------------------------- wire formats
def _json_arguments(call: FakeCall) -> str:
    arguments = call.arguments
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _chat(owner: FakeProvider, reply: FakeReply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": call.call_id or owner._id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": _json_arguments(call)},
            }
            for call in reply.calls
        ]
    finish = reply.stop or ("tool_calls" if reply.calls else "stop")
    return {
        "id": owner._id("chatcmpl-"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def _chat_events(payload: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    choice = payload["choices"][0]
    message = choice["message"]
    base = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[tuple[str | None, dict[str, Any]]] = [(None, chunk({"role": "assistant"}))]
    text = message.get("content") or ""
    for piece in _pieces(text):
        events.append((None, chunk({"content": piece})))
    for index, call in enumerate(message.get("tool_calls", ())):
        head = {"index": index, "id": call["id"], "type": "function"}
        events.append(
            (
                None,
                chunk(
                    {
                        "tool_calls": [
                            head | {"function": {"name": call["function"]["name"], "arguments": ""}}
                        ]
                    }
                ),
            )
        )
        for piece in _pieces(call["function"]["arguments"]):
            events.append(
                (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            )
    events.append((None, chunk({}, choice["finish_reason"])))
    events.append((None, base | {"choices": [], "usage": payload["usage"]}))
    return events


def _response(owner: FakeProvider, reply: FakeReply, model: str) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": owner._id("msg_"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.calls:
        output.append(
            {
                "type": "function_call",
                "id": owner._id("fc_"),
                "call_id": call.call_id or owner._id("call_"),
                "name": call.name,
                "arguments": _json_arguments(call),
                "status": "completed",
            }
        )
    truncated = reply.stop in ("length", "max_output_tokens")
    return {
        "id": owner._id("resp_"),
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "error": None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def _response_events(payload: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    seq = itertools.count()
    events: list[tuple[str | None, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(seq), **data}))

    emit("response.created", response=payload | {"status": "in_progress", "output": []})
    for index, item in enumerate(payload["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=index,
                item=item | {"content": [], "status": "in_progress"},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            emit(
                "response.content_part.added",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                part=part,
            )
            for piece in _pieces(text):
                emit(
                    "response.output_text.delta",
                    output_index=index,
                    item_id=item["id"],
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                text=text,
                logprobs=[],
            )
            emit(
                "response.content_part.done",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                part=part | {"text": text},
            )
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item=item | {"arguments": "", "status": "in_progress"},
            )
            for piece in _pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    output_index=index,
                    item_id=item["id"],
                    delta=piece,
                )
            emit(
                "response.function_call_arguments.done",
                output_index=index,
                item_id=item["id"],
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    kind = "response.incomplete" if payload["status"] == "incomplete" else "response.completed"
    emit(kind, response=payload)
    return events


def _message(owner: FakeProvider, reply: FakeReply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call in reply.calls:
        arguments = call.arguments
        if isinstance(arguments, str):
            # Anthropic's input is always an object; a string is sent under "raw".
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = {"raw": arguments}
        content.append(
            {
                "type": "tool_use",
                "id": call.call_id or owner._id("toolu_"),
                "name": call.name,
                "input": arguments,
            }
        )
    stop = {"length": "max_tokens"}.get(reply.stop or "", reply.stop)
    return {
        "id": owner._id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop or ("tool_use" if reply.calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def _message_events(payload: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    events: list[tuple[str | None, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, **data}))

    usage = payload["usage"]
    start = payload | {"content": [], "stop_reason": None, "usage": usage | {"output_tokens": 0}}
    emit("message_start", message=start)
    for index, block in enumerate(payload["content"]):
        if block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in _pieces(block["text"]):
                emit(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            emit("content_block_start", index=index, content_block=block | {"input": {}})
            for piece in _pieces(json.dumps(block["input"])):
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        emit("content_block_stop", index=index)
    emit(
        "message_delta",
        delta={"stop_reason": payload["stop_reason"], "stop_sequence": None},
        usage={"output_tokens": usage["output_tokens"]},
    )
    emit("message_stop")
    return events


def _pieces(text: str, size: int = 8) -> list[str]:
    """``text`` in chunks, as a model streams it (nothing for the empty string)."""
    return [text[i : i + size] for i in range(0, len(text), size)]
