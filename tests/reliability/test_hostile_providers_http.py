"""Hostile peers over HTTP: a model provider that misbehaves (a real local HTTP server that
never answers, trickles a stream that never ends, answers 429 with a minute's Retry-After,
or answers 200 with an HTML page, an empty stream or an empty JSON object) driving the real
provider SDKs through ``Agent.run``/``arun`` and ``haversack run``.

Every case must end with ``DeadlineExceededError`` or ``ProviderError`` (``haversack run``:
exit status 4 or 3, one error line, no traceback). A case that does not end at all is caught
by a generous hang bound (``HANG_S``, far above the deadlines), never by timing the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from haversack import Deadline, MarkdownSection, Prompt
from haversack.agent import Agent, AnthropicMessages, OpenAIChat, OpenAIResponses
from haversack.errors import DeadlineExceededError, ProviderError

from ._harness import Figure

AREA = "hostile-peers"
#: A run that has not ended after this long is hung (the deadlines below are 1.5 s).
HANG_S = 90.0
DEADLINE_S = 1.5
KINDS = ("openai", "openai-responses", "anthropic")
STALLS = ("silent", "trickle", "retry-after")


class HostileProvider:
    """A local HTTP server that reads each request whole, then misbehaves as ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.requests = 0
        self.dropped = 0  # connections the client closed while the server held them
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def base_url(self, kind: str) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return root if kind == "anthropic" else f"{root}/v1"

    def __enter__(self) -> HostileProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._listener.close()

    def wait_dropped(self, count: int) -> bool:
        """Whether ``count`` connections were dropped by the client (within the hang bound:
        the server sees the close a moment after the client raised)."""
        end = time.monotonic() + HANG_S
        while self.dropped < count and time.monotonic() < end:
            time.sleep(0.01)
        return self.dropped >= count

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            body += chunk
        self.requests += 1
        return True

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                if self._read_request(conn):
                    self._misbehave(conn)
        except OSError:
            self.dropped += 1

    def _misbehave(self, conn: socket.socket) -> None:
        mode = self.mode
        if mode == "silent":
            if conn.recv(1) == b"":  # blocks until the client gives up and closes
                self.dropped += 1
        elif mode == "trickle":
            # A comment line now and then: every read succeeds, no event ever completes.
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            piece = b": keep-alive\n\n"
            while not self._stop.is_set():
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                time.sleep(0.1)
        elif mode == "retry-after":
            _answer(
                conn,
                "429 Too Many Requests",
                "application/json",
                b'{"error": {}}',
                b"retry-after: 60\r\n",
            )
        elif mode == "html":
            page = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
            _answer(conn, "200 OK", "text/html", page)
        elif mode == "empty":
            _answer(conn, "200 OK", "text/event-stream", b"")
        elif mode == "empty-json":
            _answer(conn, "200 OK", "application/json", b"{}")


def _answer(conn: socket.socket, status: str, kind: str, body: bytes, extra: bytes = b"") -> None:
    conn.sendall(
        b"HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n%sconnection: close\r\n\r\n%s"
        % (status.encode(), kind.encode(), len(body), extra, body)
    )


def _prompt() -> Prompt:
    return Prompt(
        ns="test",
        key="hostile",
        sections=[MarkdownSection(title="Task", key="task", template="Do the task.")],
    )


def _provider(kind: str, url: str, *, stream: bool, use_async: bool) -> Any:
    cls: Any = {"openai": OpenAIChat, "openai-responses": OpenAIResponses}.get(
        kind, AnthropicMessages
    )
    provider = cls("hostile-model", base_url=url, api_key="k", stream=stream)
    # Build the client (and import the SDK) before the deadline starts.
    _ = provider.async_client if use_async else provider.client
    return provider


def _outcome(call: Callable[[], Any]) -> BaseException | str:
    """What ``call`` raised (or ``"returned"``), or ``"hung"`` past the hang bound."""
    box: list[BaseException | str] = []

    def target() -> None:
        try:
            call()
            box.append("returned")
        except BaseException as exc:  # the case's outcome, whatever it is
            box.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(HANG_S)
    return box[0] if box else "hung"


def _run(
    kind: str, url: str, *, stream: bool, use_async: bool, seconds: float
) -> BaseException | str:
    provider = _provider(kind, url, stream=stream, use_async=use_async)
    agent = Agent(_prompt(), provider)
    if use_async:
        return _outcome(lambda: asyncio.run(agent.arun("hi", deadline=Deadline.after(seconds))))
    return _outcome(lambda: agent.run("hi", deadline=Deadline.after(seconds)))


def _cases(modes: tuple[str, ...]) -> Iterator[tuple[str, str, bool, bool]]:
    for mode in modes:
        for kind in KINDS:
            for stream in (False, True):
                yield mode, kind, stream, False
            yield mode, kind, True, True


def _label(mode: str, kind: str, stream: bool, use_async: bool) -> str:
    how = ("async " if use_async else "") + ("stream" if stream else "whole")
    return f"{mode}/{kind}/{how}"


def _try(case: tuple[str, str, bool, bool]) -> tuple[str, BaseException | str, bool]:
    """Run one case against its own server: (label, outcome, whether the server saw every
    connection it held dropped)."""
    mode, kind, stream, use_async = case
    # A reply in the wrong format must fail on its own, long before any deadline.
    seconds = DEADLINE_S if mode in STALLS else HANG_S / 3
    with HostileProvider(mode) as server:
        outcome = _run(
            kind, server.base_url(kind), stream=stream, use_async=use_async, seconds=seconds
        )
        dropped = mode != "silent" or server.wait_dropped(server.requests)
    return _label(*case), outcome, dropped


def _all(modes: tuple[str, ...]) -> list[tuple[str, BaseException | str, bool]]:
    # The cases wait on their servers, not the CPU: run them side by side.
    with ThreadPoolExecutor(max_workers=9) as pool:
        return list(pool.map(_try, _cases(modes)))


def test_a_provider_that_never_finishes_is_cut_at_the_deadline(
    figure: Callable[[str, str], Figure],
) -> None:
    fig = figure(AREA, "provider never answers, trickles, or asks to retry in a minute")
    for label, outcome, dropped in _all(STALLS):
        fig.case()
        if label.startswith("retry-after"):
            # Not retried past the deadline: the 60 s Retry-After is not slept through.
            fig.check(
                isinstance(outcome, ProviderError | DeadlineExceededError),
                f"{label}: {outcome!r}",
            )
        else:
            fig.check(isinstance(outcome, DeadlineExceededError), f"{label}: {outcome!r}")
            fig.check("model 'hostile-model'" in str(outcome), f"{label}: unnamed: {outcome}")
        fig.check(dropped, f"{label}: the connection was kept open")
    fig.assert_clean()


def test_a_reply_in_the_wrong_format_is_a_provider_error(
    figure: Callable[[str, str], Figure],
) -> None:
    fig = figure(AREA, "provider answers 200 with HTML, an empty stream or an empty object")
    for label, outcome, _ in _all(("html", "empty", "empty-json")):
        fig.case()
        if fig.check(isinstance(outcome, ProviderError), f"{label}: {outcome!r}"):
            fig.check("base URL" in str(outcome), f"{label}: no advice: {outcome}")
    fig.assert_clean()


def _cli(args: list[str], cwd: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HAVERSACK_PACKS": "", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    return subprocess.run(
        [sys.executable, "-m", "haversack", "run", "Plan it", "-p", "planning", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=HANG_S,
        check=False,
    )


@pytest.mark.parametrize(
    ("mode", "kind", "status"),
    [
        ("silent", "openai", 4),
        ("trickle", "anthropic", 4),
        ("html", "openai", 3),
        ("empty", "anthropic", 3),
    ],
)
def test_haversack_run_ends_with_a_documented_exit_status(
    tmp_path: Any, mode: str, kind: str, status: int, figure: Callable[[str, str], Figure]
) -> None:
    fig = figure(AREA, f"haversack run against a provider: {mode}/{kind}")
    transcript = tmp_path / "run.jsonl"
    with HostileProvider(mode) as server:
        done = _cli(
            [
                "-m",
                f"{kind}:hostile-model",
                "--base-url",
                server.base_url(kind),
                "--timeout",
                "5" if status == 4 else "0",
                "--transcript",
                str(transcript),
            ],
            tmp_path,
        )
    fig.case()
    fig.check(done.returncode == status, f"exit {done.returncode}, not {status}: {done.stderr}")
    fig.check("Traceback" not in done.stderr, f"traceback: {done.stderr}")
    errors = [line for line in done.stderr.splitlines() if line.startswith("haversack: error:")]
    fig.check(len(errors) == 1, f"not one error line: {done.stderr}")
    fig.check('"stop_reason": "error"' in transcript.read_text(), "no end record")
    fig.assert_clean()


#: What a hostile model or tool result may try on a terminal: an OSC 52 clipboard write, a
#: clear screen, concealed text, a C1 CSI, a carriage return over the line, a bidi override.
TERMINAL_ATTACKS = (
    "\x1b]52;c;cm0gLXJmIH4=\x07",
    "\x1b[2J\x1b[H",
    "\x1b[8mhidden\x1b[0m",
    "\x9b31m",
    "\rOVERWRITTEN",
    "\u202etxt.exe",
)
RAW = ("\x1b", "\x9b", "\x07", "\r", "\u202e")


def test_haversack_run_escapes_what_it_prints_and_shows_approvals_whole(
    tmp_path: Any, figure: Callable[[str, str], Figure]
) -> None:
    from haversack.testing import FakeCall, FakeProvider, FakeReply

    fig = figure(AREA, "haversack run: terminal escapes and long approval arguments")
    hostile = "".join(TERMINAL_ATTACKS)
    # 300 harmless characters first, then what the person must see before approving.
    objective = "a" * 300 + " THEN-THE-PART-THAT-MATTERS " + hostile
    setup = FakeCall("planning_setup_plan", {"objective": objective, "steps": [hostile]}, "c1")
    script = [FakeReply(f"Text {hostile}", calls=[setup]), FakeReply(f"Done {hostile}")]
    with FakeProvider(script) as fake:
        done = _cli(
            [
                "-m",
                "openai:m",
                "--base-url",
                fake.openai_base_url,
                "--ask",
                "planning_*",
                "--yes",
                "--transcript",
                str(tmp_path / "run.jsonl"),
            ],
            tmp_path,
        )
    fig.case()
    fig.check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
    for raw in RAW:
        fig.case()
        fig.check(raw not in done.stdout, f"{raw!r} reached the terminal")
    for shown in ("\\x1b]52;c;", "\\x1b[2J", "\\x9b31m", "\\rOVERWRITTEN", "\\u202etxt.exe"):
        fig.case()
        fig.check(shown in done.stdout, f"{shown!r} not shown escaped")
    prompt = done.stdout[done.stdout.index("? planning_setup_plan") :]
    fig.case()
    fig.check(
        "THEN-THE-PART-THAT-MATTERS" in prompt.split("approved (--yes)")[0],
        f"the approval prompt cut the arguments: {prompt[:600]!r}",
    )
    fig.assert_clean()


@pytest.fixture
def http_server(tmp_path: Any) -> Iterator[tuple[str, int]]:
    """``haversack serve --transport http`` on a free port, with 1 s header and body timeouts."""
    yield from _serve(
        tmp_path,
        "-p",
        "planning",
        "--header-timeout",
        "1",
        "--body-timeout",
        "1",
        "--max-sessions",
        "3",
    )


@pytest.fixture
def workspace_server(tmp_path: Any) -> Iterator[tuple[str, int]]:
    """``haversack serve -p vfs --transport http`` with a 1 MiB memory budget for its
    sessions' in-memory workspaces."""
    yield from _serve(tmp_path, "-p", "vfs", "--max-memory", "1", "--max-sessions", "8")


def _serve(tmp_path: Any, *args: str) -> Iterator[tuple[str, int]]:
    import re

    env = {k: v for k, v in os.environ.items() if k != "HAVERSACK_MCP_TOKEN"}
    env["HAVERSACK_PACKS"] = ""
    proc = subprocess.Popen(
        [sys.executable, "-m", "haversack", "serve", "--transport", "http", "--port", "0", *args],
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"at http://([\d.]+):(\d+)", line)
    assert match, f"no address in the server's first line: {line!r}"
    yield match.group(1), int(match.group(2))
    proc.terminate()
    proc.wait(timeout=HANG_S)
    proc.stderr.close()


def _reply(sock: socket.socket) -> bytes:
    """What the server sends before it closes the connection (``b"hung"`` past the bound)."""
    sock.settimeout(HANG_S)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return b"hung"
    except OSError:
        pass
    return data


INIT_BODY = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}'
)


def test_slow_http_clients_are_dropped(
    http_server: tuple[str, int], figure: Callable[[str, str], Figure]
) -> None:
    fig = figure(AREA, "haversack serve over HTTP: slowloris headers and bodies")
    host, port = http_server
    slow_headers = [socket.create_connection((host, port)) for _ in range(20)]
    for sock in slow_headers:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ")
    slow_body = socket.create_connection((host, port))
    slow_body.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"accept: application/json, text/event-stream\r\ncontent-length: 200\r\n\r\n{"
    )
    for sock in slow_headers:
        fig.case()
        with sock:
            answer = _reply(sock)
        fig.check(answer != b"hung", "a connection sending its headers slowly was kept")
    fig.case()
    with slow_body:
        answer = _reply(slow_body)
    fig.check(answer.startswith(b"HTTP/1.1 408"), f"slow body: {answer[:200]!r}")
    fig.check(b"--body-timeout" in answer, f"the refusal names no limit: {answer[:300]!r}")
    # A real client is still served.
    fig.case()
    with socket.create_connection((host, port)) as real:
        real.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"accept: application/json, text/event-stream\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(INIT_BODY), INIT_BODY)
        )
        answer = _reply(real)
    fig.check(answer.startswith(b"HTTP/1.1 200"), f"the real client: {answer[:300]!r}")
    fig.assert_clean()


def _post(host: str, port: int, body: bytes, session: bytes = b"") -> bytes:
    """One POST to /mcp on a connection of its own; the whole answer."""
    extra = b"mcp-session-id: %s\r\nmcp-protocol-version: 2025-11-25\r\n" % session
    with socket.create_connection((host, port)) as client:
        client.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"accept: application/json, text/event-stream\r\nconnection: close\r\n"
            + (extra if session else b"")
            + b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )
        return _reply(client)


def _session_id(answer: bytes) -> bytes:
    for line in answer.split(b"\r\n\r\n")[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"mcp-session-id":
            return value.strip()
    return b""


def _open_stream(host: str, port: int, session: bytes) -> socket.socket:
    """A GET stream held open on ``session`` (the session is busy while it is)."""
    stream = socket.create_connection((host, port))
    stream.sendall(
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\n"
        b"mcp-session-id: %s\r\nmcp-protocol-version: 2025-11-25\r\n\r\n" % session
    )
    stream.settimeout(HANG_S)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = stream.recv(4096)
        if not chunk:
            break
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        stream.close()
        raise AssertionError(f"the stream was not opened: {head[:300]!r}")
    return stream


PING = b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}'
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'


def test_sessions_past_the_limit_evict_the_idlest_or_are_refused_naming_it(
    http_server: tuple[str, int], figure: Callable[[str, str], Figure]
) -> None:
    fig = figure(AREA, "haversack serve over HTTP: sessions past --max-sessions")
    host, port = http_server
    # Five clients that open a session and never close it, against --max-sessions 3: each
    # new one is admitted, the idlest (the oldest) closed to make room.
    answers = [_post(host, port, INIT_BODY) for _ in range(5)]
    sessions = [_session_id(answer) for answer in answers]
    fig.case(len(answers))
    statuses = [answer[:12] for answer in answers]
    fig.check(statuses == [b"HTTP/1.1 200"] * 5, f"idle sessions not evicted: {statuses}")
    fig.check(all(sessions), f"no session id: {answers!r}")
    for session in sessions[2:]:
        _post(host, port, INITIALIZED, session)
    fig.case(2)
    for session in sessions[:2]:
        gone = _post(host, port, PING, session)
        fig.check(gone.startswith(b"HTTP/1.1 404"), f"an evicted session still served: {gone!r}")
    fig.case()
    kept = _post(host, port, PING, sessions[4])
    fig.check(kept.startswith(b"HTTP/1.1 200"), f"the newest session was closed: {kept[:300]!r}")
    # Every session busy (a stream held open): a new one is refused, naming the limit.
    streams = [_open_stream(host, port, session) for session in sessions[2:]]
    try:
        fig.case()
        refused = _post(host, port, INIT_BODY)
        fig.check(refused.startswith(b"HTTP/1.1 503"), f"busy sessions evicted: {refused!r}")
        fig.check(b"--max-sessions" in refused, f"the refusal names no limit: {refused!r}")
    finally:
        for stream in streams:
            stream.close()
    fig.assert_clean()


KIB = 1024


def _open_session(host: str, port: int) -> bytes:
    session = _session_id(_post(host, port, INIT_BODY))
    assert session, "no session id"
    _post(host, port, INITIALIZED, session)
    return session


def _call(host: str, port: int, session: bytes, tool: str, **arguments: Any) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return _post(host, port, json.dumps(body).encode(), session)


def _tool_result(answer: bytes) -> dict[str, Any]:
    """The ``result`` of a tools/call answer (sent as JSON or as one SSE event)."""
    if not answer.startswith(b"HTTP/1.1 200"):
        return {"http": answer[:300].decode("latin-1")}
    body = answer.split(b"\r\n\r\n", 1)[1]
    for line in body.splitlines():
        text = line.removeprefix(b"data:").strip()
        if text.startswith(b"{"):
            message = json.loads(text)
            return message.get("result") or {"error": message.get("error")}
    return {"unparsed": body[:300].decode("latin-1")}


def _wrote(result: dict[str, Any]) -> bool:
    return "content" in result and not result.get("isError")


def test_sessions_past_the_memory_budget_evict_idle_ones_or_are_refused_naming_it(
    workspace_server: tuple[str, int], figure: Callable[[str, str], Figure]
) -> None:
    """2,000 sessions each holding a big workspace must not all be kept: the server's
    budget (--max-memory 1, in MiB) closes idle sessions holding memory, idlest first, never
    a busy one; a call it cannot make room for is rolled back, a new session refused."""
    fig = figure(AREA, "haversack serve over HTTP: sessions past --max-memory")
    host, port = workspace_server
    big = "a" * (400 * KIB)
    first, second, third = (_open_session(host, port) for _ in range(3))
    fig.case(2)
    for session in (first, second):
        wrote = _tool_result(_call(host, port, session, "write_file", path="big", content=big))
        fig.check(_wrote(wrote), f"a write within the budget failed: {wrote}")
    # 1,200 KiB would pass the 1 MiB budget: the idlest session holding memory (the first)
    # is closed to make room, and the call succeeds.
    fig.case(3)
    wrote = _tool_result(_call(host, port, third, "write_file", path="big", content=big))
    fig.check(_wrote(wrote), f"no idle session was closed to make room: {wrote}")
    gone = _post(host, port, PING, first)
    fig.check(gone.startswith(b"HTTP/1.1 404"), f"the idlest session was kept: {gone[:300]!r}")
    kept = _tool_result(_call(host, port, second, "read_file", path="big", limit=1))
    fig.check(_wrote(kept), f"a session was closed though the first made room: {kept}")
    # The other two busy (a stream held open): nothing can be closed, so the call that
    # grows memory fails, names the limit and the option, and is rolled back.
    streams = [_open_stream(host, port, session) for session in (second, third)]
    try:
        fourth = _open_session(host, port)
        fig.case(3)
        refused = _tool_result(_call(host, port, fourth, "write_file", path="big", content=big))
        text = json.dumps(refused)
        fig.check(refused.get("isError") is True, f"a call past the budget succeeded: {text}")
        fig.check("--max-memory" in text, f"the refusal names no option: {text[:500]}")
        listed = _tool_result(_call(host, port, fourth, "ls"))
        fig.check("big" not in json.dumps(listed), f"the refused write was kept: {listed}")
        # Exactly full: a new session is refused with 503 naming the limit (the fourth
        # busy too, so no idle session holds memory to close).
        rest = 1024 * KIB - 2 * len(big)
        wrote = _tool_result(
            _call(host, port, fourth, "write_file", path="rest", content="b" * rest)
        )
        fig.check(_wrote(wrote), f"a write filling the budget exactly failed: {wrote}")
        streams.append(_open_stream(host, port, fourth))
        fig.case(2)
        full = _post(host, port, INIT_BODY)
        fig.check(full.startswith(b"HTTP/1.1 503"), f"a session past the budget: {full[:300]!r}")
        fig.check(b"--max-memory" in full, f"the refusal names no option: {full[:500]!r}")
    finally:
        for stream in streams:
            stream.close()
    # Busy sessions were never closed.
    fig.case()
    for session in (second, third):
        alive = _post(host, port, PING, session)
        fig.check(alive.startswith(b"HTTP/1.1 200"), f"a busy session was closed: {alive[:300]!r}")
    fig.assert_clean()


@pytest.fixture
def mounted_server(tmp_path: Any) -> Iterator[tuple[str, int]]:
    """``haversack serve -p vfs`` whose every workspace loads a 700 KiB host mount when its
    session opens, against a 1 MiB memory budget."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.txt").write_text("m" * (700 * KIB))
    (tmp_path / "pyproject.toml").write_text(
        "[tool.haversack.packs.vfs]\n"
        f"allowed_host_roots = [{str(src)!r}]\n"
        "[[tool.haversack.packs.vfs.mounts]]\n"
        f"host_path = {str(src)!r}\n"
    )
    yield from _serve(tmp_path, "-p", "vfs", "--max-memory", "1", "--max-sessions", "8")


def test_workspaces_loaded_when_sessions_open_count_against_the_memory_budget(
    mounted_server: tuple[str, int], figure: Callable[[str, str], Figure]
) -> None:
    """A workspace's host mounts are loaded when its session's first call opens it: that
    too must fit the budget (an idle session closed to make room, else a refusal)."""
    fig = figure(AREA, "haversack serve over HTTP: mounted workspaces past --max-memory")
    host, port = mounted_server
    first, second, third = (_open_session(host, port) for _ in range(3))
    fig.case()
    opened = _tool_result(_call(host, port, first, "read_file", path="big.txt", limit=1))
    fig.check(_wrote(opened), f"the first workspace was not opened: {opened}")
    # Two mounted workspaces (1,400 KiB) do not fit: the idle first session is closed.
    fig.case(2)
    opened = _tool_result(_call(host, port, second, "read_file", path="big.txt", limit=1))
    fig.check(_wrote(opened), f"no idle session was closed to make room: {opened}")
    gone = _post(host, port, PING, first)
    fig.check(gone.startswith(b"HTTP/1.1 404"), f"the idle session was kept: {gone[:300]!r}")
    # The second busy: the third's workspace is not opened, and the refusal says why.
    stream = _open_stream(host, port, second)
    try:
        fig.case(2)
        refused = _tool_result(_call(host, port, third, "ls"))
        text = json.dumps(refused)
        fig.check(refused.get("isError") is True, f"a workspace past the budget opened: {text}")
        fig.check("--max-memory" in text, f"the refusal names no option: {text[:500]}")
    finally:
        stream.close()
    fig.case()
    alive = _tool_result(_call(host, port, second, "read_file", path="big.txt", limit=1))
    fig.check(_wrote(alive), f"the busy session was closed: {alive}")
    fig.assert_clean()
