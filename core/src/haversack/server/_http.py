"""The Streamable HTTP transport: bearer-token authentication, an Origin check, one
Haversack session per MCP session."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haversack.errors import HaversackError

from ._frames import MAX_FRAME_BYTES, decode_frame

if TYPE_CHECKING:
    from haversack._prompt import Prompt

    from ._mcp import ServeOptions
    from ._memory_budget import MemoryBudget

__all__ = ["TOKEN_ENV", "HttpSettings", "http_app", "read_token", "serve_http"]

TOKEN_ENV = "HAVERSACK_MCP_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""The environment variable ``haversack serve --transport http`` reads its bearer token from."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class HttpSettings:
    """Where and how the HTTP transport listens.

    ``token``: the bearer token every request must carry (``Authorization: Bearer ...``);
    ``None`` serves without authentication, which is allowed on a loopback host only.
    ``allowed_origins``: browser origins allowed besides the loopback ones (a request
    without an ``Origin`` header is not from a browser page and is allowed; one from any
    other origin gets 403, which is what stops DNS-rebinding pages). ``path``: where the
    MCP endpoint is mounted.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    allowed_origins: Sequence[str] = ()
    path: str = "/mcp"
    header_timeout_s: float = 10.0
    """A connection whose request headers are not all in this long after its first byte
    (a slowloris client) is closed."""
    body_timeout_s: float = 30.0
    """A request whose body is not all in this long after its headers gets 408."""
    max_sessions: int = 64
    """MCP sessions open at once (each holds its own resources: a workspace, a sandbox, MCP
    servers). A request that would open another closes the session idle the longest (no
    request in flight, no open stream) to make room; when every session is busy it gets 503
    naming the limit."""
    session_idle_timeout_s: float = 1800.0
    """An MCP session with no request for this long is closed with its resources."""
    max_memory_bytes: int = 1 << 30
    """What the open sessions' resources may hold in memory together (an in-memory
    workspace holds its files' bytes: :class:`haversack.HoldsMemory`). A call that would
    leave them over it first closes idle sessions holding memory, idlest first (never one
    serving a request); if that is not enough, the call fails and is rolled back, and a new
    session gets 503 while the budget is used up. 1 GiB by default: four workspaces at the
    vfs pack's 256 MiB cap, or all 64 sessions at 16 MiB each."""

    def __post_init__(self) -> None:
        if self.token is None and not is_loopback(self.host):
            raise HaversackError(
                f"Refusing to serve MCP over HTTP on {self.host!r} without authentication: "
                f"set a bearer token ({TOKEN_ENV}=... or --token-file PATH), or listen on "
                "127.0.0.1."
            )
        if self.max_memory_bytes < 1:
            raise HaversackError(
                f"HttpSettings.max_memory_bytes must be positive, got {self.max_memory_bytes!r}."
            )
        if self.token is not None and len(self.token) < 16:
            raise HaversackError(
                "The MCP bearer token is shorter than 16 characters; use a long random one "
                "(for example: python -c 'import secrets; print(secrets.token_urlsafe(32))')."
            )


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(
    token_file: str | None, environ: MutableMapping[str, str] | None = None
) -> str | None:
    """The bearer token: ``token_file``'s first line if given, else ``$HAVERSACK_MCP_TOKEN``."""
    env = os.environ if environ is None else environ
    if token_file is not None:
        path = Path(token_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise HaversackError(
                f"Cannot read the MCP token file {str(path)!r}: {exc.strerror or exc}."
            ) from exc
        token = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not token:
            raise HaversackError(f"The MCP token file {str(path)!r} is empty.")
        return token
    value = env.get(TOKEN_ENV, "").strip()
    return value or None


def _origin_allowed(origin: str, extra: Sequence[str]) -> bool:
    for allowed in (*extra, *(f"http://{n}" for n in _LOOPBACK_NAMES)):
        if origin == allowed or (
            origin.startswith(allowed + ":") and origin[len(allowed) + 1 :].isdigit()
        ):
            return True
    return False


async def _respond(
    send: Send, status: int, body: dict[str, Any] | str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    if isinstance(body, str):
        data, kind = body.encode(), b"text/plain; charset=utf-8"
    else:
        data, kind = json.dumps(body).encode(), b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _guard(app: ASGIApp, settings: HttpSettings) -> ASGIApp:
    """Check the Origin and the bearer token, then answer malformed JSON-RPC bodies, before
    the SDK's transport sees the request (which checks the Host header)."""
    expected = None if settings.token is None else settings.token.encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        origin = headers.get(b"origin")
        if origin is not None and not _origin_allowed(
            origin.decode("latin-1"), settings.allowed_origins
        ):
            await _respond(
                send,
                403,
                f"Origin {origin.decode('latin-1')!r} is not allowed; start the server with "
                "--allow-origin ORIGIN to allow it.",
            )
            return
        if expected is not None:
            given = headers.get(b"authorization", b"")
            scheme, _, credential = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), expected):
                await _respond(
                    send,
                    401,
                    "Missing or wrong bearer token: send 'Authorization: Bearer <token>' with "
                    f"the token the server was started with ({TOKEN_ENV} or --token-file).",
                    [(b"www-authenticate", b'Bearer realm="haversack"')],
                )
                return
        if scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        import anyio

        chunks: list[bytes] = []
        size = 0
        more = True
        # A client that sends its body a byte at a time must not hold the connection.
        with anyio.move_on_after(settings.body_timeout_s) as waited:
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_FRAME_BYTES:
                    await _respond(send, 413, f"The request body exceeds {MAX_FRAME_BYTES} bytes.")
                    return
                chunks.append(chunk)
                more = message.get("more_body", False)
        if waited.cancelled_caught:
            await _respond(
                send,
                408,
                f"The request body did not arrive within {settings.body_timeout_s:g} s "
                "(the server's body timeout, --body-timeout).",
                [(b"connection", b"close")],
            )
            return
        body = b"".join(chunks)
        from mcp.shared.message import SessionMessage

        decoded = decode_frame(body)
        if not isinstance(decoded, SessionMessage):
            await _respond(
                send, 400, decoded.model_dump(by_alias=True, mode="json", exclude_unset=True)
            )
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        opening = not any(k == b"mcp-session-id" for k in headers)
        if not opening:
            await app(scope, replay, send)
            return
        refusal: list[str] = []
        token = _REFUSAL.set(refusal)
        try:
            await app(scope, replay, _naming_the_session_limit(send, settings, refusal))
        finally:
            _REFUSAL.reset(token)

    return guarded


# Why the admission of the request being served refused a new session (the memory budget),
# for the guard to say; set per opening request, which admission runs in.
_REFUSAL: ContextVar[list[str] | None] = ContextVar("haversack_http_refusal", default=None)


def _naming_the_session_limit(send: Send, settings: HttpSettings, refusal: list[str]) -> Send:
    """``send``, with the SDK's bare 503 for a session past the limit replaced by one that
    names the limit and the option that raises it."""
    refused = False

    async def sending(message: Message) -> None:
        nonlocal refused
        if message["type"] == "http.response.start" and message.get("status") == 503:
            refused = True
            return
        if refused:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                if refusal:
                    await _respond(
                        send,
                        503,
                        f"No new MCP session: {refusal[0]} Try again when sessions are closed "
                        "(HTTP DELETE) or idle, or raise --max-memory.",
                    )
                    return
                await _respond(
                    send,
                    503,
                    f"Too many open MCP sessions: the server's limit is {settings.max_sessions} "
                    "(--max-sessions) and every session is serving a request or holding a "
                    "stream open, so none could be closed to make room; try again when one "
                    "is idle, close unused sessions (HTTP DELETE), or raise --max-sessions.",
                )
            return
        await send(message)

    return sending


def http_app(
    prompt: Prompt,
    settings: HttpSettings,
    *,
    name: str | None = None,
    options: ServeOptions | None = None,
) -> ASGIApp:
    """The ASGI application serving ``prompt`` over Streamable HTTP at ``settings.path``.

    Each MCP session (``Mcp-Session-Id``) gets its own Haversack session and resources,
    closed when the client deletes the session, after 30 idle minutes, or at shutdown.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    from ._mcp import _build
    from ._memory_budget import MemoryBudget

    budget = MemoryBudget(settings.max_memory_bytes)
    server = _build(prompt, name=name, options=options, budget=budget)
    host_patterns = [f"{n}:*" for n in _LOOPBACK_NAMES] + list(_LOOPBACK_NAMES)
    if not is_loopback(settings.host):
        host_patterns += [settings.host, f"{settings.host}:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=host_patterns,
        # The guard checked the Origin already; this second check agrees with it.
        allowed_origins=[
            *settings.allowed_origins,
            *(f"http://{n}" for n in _LOOPBACK_NAMES),
            *(f"http://{n}:*" for n in _LOOPBACK_NAMES),
        ],
    )
    app = server.streamable_http_app(
        streamable_http_path=settings.path,
        transport_security=security,
        host=settings.host,
        max_sessions=settings.max_sessions,
        session_idle_timeout=settings.session_idle_timeout_s,
    )
    _evict_idle_first(server, budget)
    return _guard(app, settings)


def _evict_idle_first(server: Any, budget: MemoryBudget) -> None:
    """Make the SDK's session manager close the session idle the longest when a new one
    would pass ``max_sessions``, instead of refusing the new one (it then refuses only when
    every session is busy). Without this, clients that never close their sessions lock
    everyone else out until the idle timeout (30 minutes by default).

    Also lets ``budget`` close idle sessions to make room in memory, and refuses a new
    session while the budget is used up and no idle session holding memory can be closed.
    """
    manager: Any = getattr(server, "_session_manager", None)
    admit = getattr(manager, "_admit_session", None)
    sessions = getattr(manager, "_server_instances", None)
    if admit is None or not isinstance(sessions, dict):
        return  # another SDK: its own refusal stands (named by the guard)

    def evict(session_id: str) -> bool:
        transport = sessions.get(session_id)
        if transport is None or session_id not in _idle_sessions(sessions):
            return False
        del sessions[session_id]
        manager._session_owners.pop(session_id, None)
        # As the idle timeout does: the session's task ends and closes its resources;
        # its id answers 404 from now on.
        transport.idle_scope.cancel()
        return True

    def alive(session_id: str) -> bool:
        transport = sessions.get(session_id)
        return transport is not None and not transport.is_terminated

    budget.idle_order = lambda: _idle_sessions(sessions)
    budget.alive = alive
    budget.evict = evict

    def admitting(requestor: Any) -> Any:
        refusal = _REFUSAL.get()
        full = budget.make_room(needed=1)
        if full is not None:
            if refusal is not None:
                refusal.append(full)
            return None
        limit = manager.max_sessions
        if limit is not None and len(sessions) >= limit:
            idle = _idle_sessions(sessions)
            if idle:
                evict(idle[0])
        return admit(requestor)

    manager._admit_session = admitting


def _idle_sessions(sessions: dict[str, Any]) -> list[str]:
    """The ids of the sessions serving no request (none in flight, no open stream), the
    one whose last request ended the longest ago first."""
    import math

    idle: list[tuple[float, str]] = []
    for session_id, transport in sessions.items():
        scope = getattr(transport, "idle_scope", None)
        # The transport sets the deadline to infinity while a request is in flight and to
        # (end of the last request + idle timeout) after: the smallest is the idlest.
        if scope is None or scope.cancel_called or not math.isfinite(scope.deadline):
            continue
        if getattr(transport, "_requests_in_flight", 1) != 0:
            continue
        idle.append((scope.deadline, session_id))
    return [session_id for _, session_id in sorted(idle)]


async def serve_http(
    prompt: Prompt,
    settings: HttpSettings,
    *,
    name: str | None = None,
    options: ServeOptions | None = None,
) -> None:
    """Serve ``prompt`` over Streamable HTTP until interrupted.

    Prints ``haversack: MCP over HTTP at http://HOST:PORT/mcp`` on stderr once listening
    (with the real port when ``settings.port`` is 0).
    """
    import socket

    import uvicorn

    app = http_app(prompt, settings, name=name, options=options)
    family = socket.AF_INET6 if ":" in settings.host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host.strip("[]"), settings.port))
    # Listening before the address is printed: a client that connects at once waits in the
    # backlog until uvicorn accepts, instead of being refused.
    sock.listen(2048)
    port = sock.getsockname()[1]
    from ._slow_clients import header_timeout_protocol

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        http=header_timeout_protocol(settings.header_timeout_s),
    )
    server = uvicorn.Server(config)
    host = f"[{settings.host.strip('[]')}]" if family == socket.AF_INET6 else settings.host
    print(
        f"haversack: MCP over HTTP at http://{host}:{port}{settings.path}",
        file=sys.stderr,
        flush=True,
    )
    await server.serve(sockets=[sock])
