"""Connections to external MCP servers.

A tool handler may run on any loop (a fresh one per call for ``execute``, the caller's for
``aexecute``), but an MCP client session lives on the loop that opened it. A call on that
loop uses the session directly; a call from anywhere else is handed to that loop, which is
a thread of the connection's own unless a long-lived caller's loop started the session
(see :class:`ServerConnection`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ._config import DEFAULT_MAX_LIVE
from ._errors import McpServerError
from ._live import LIVE

if TYPE_CHECKING:
    from haversack import Binding, ResourceResolver

    from ._config import McpServer

__all__ = [
    "Listing",
    "McpConnections",
    "ServerConnection",
    "connections_binding",
    "list_server",
    "claim",
    "list_servers",
    "root_cause",
]

#: The SDK's progress callback: (progress, total, message).
Progress = Callable[[float, "float | None", "str | None"], Awaitable[None]]


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of nested exception groups (anyio task groups wrap what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """``Type: message`` of ``exc``'s root cause, for error messages."""
    cause = root_cause(exc)
    text = str(cause) or type(cause).__name__
    return f"{type(cause).__name__}: {text}"


def supervised(server: McpServer, env: Mapping[str, str]) -> list[str]:
    """The command line starting ``server`` under the supervisor (``_reaper.py``), which
    kills the server's whole tree, daemons included, when it stops.

    Raises ``FileNotFoundError`` when the program is not found (as spawning it would).
    """
    import os
    import shutil
    from pathlib import Path

    program = server.command[0]
    if os.sep in program:
        where_ = Path(server.cwd or ".") / program
        found = str(where_) if os.access(where_, os.X_OK) and where_.is_file() else None
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", program)
    reaper = str(Path(__file__).with_name("_reaper.py"))
    return [sys.executable, "-I", "-S", reaper, found, *server.command[1:]]


@asynccontextmanager
async def open_client(server: McpServer) -> AsyncIterator[Any]:
    """An initialized ``mcp.Client`` for ``server`` (stdio process or HTTP session)."""
    from mcp import Client

    if server.command:
        from mcp.client.stdio import get_default_environment

        from ._stdio import stdio_transport

        env = {**get_default_environment(), **server.env}
        transport = stdio_transport(
            supervised(server, env), env, server.cwd or None, server.max_message_bytes
        )
        async with Client(transport) as client:
            _no_sdk_output_check(client)
            yield client
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=dict(server.headers)) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        _no_sdk_output_check(client)
        yield client


def _no_sdk_output_check(client: Any) -> None:
    """Turn off the SDK's check of ``structuredContent`` against ``outputSchema`` for this
    session: it runs a schema ``pattern`` with Python's backtracking ``re``, so a server
    could stall the process with ``^(a|aa)+$`` and a long string. The pack checks results
    itself, in linear time (RE2), and words the error (see ``_tools``)."""

    async def unchecked(name: str, result: Any) -> None:
        return None

    client.session.validate_tool_result = unchecked


class Listing:
    """What a server offers: its instructions and its tools (SDK ``Tool`` objects)."""

    def __init__(self, instructions: str, tools: list[Any]) -> None:
        self.instructions = instructions
        self.tools = tools


_MAX_PAGES = 100
#: Tools read from one server at most, whatever its pages hold (max_tools applies after).
_MAX_LISTED = 10_000


async def _list_tools(client: Any) -> Listing:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor or len(tools) >= _MAX_LISTED:
            break
    return Listing(client.instructions or "", tools)


def _changed(listed: Listing, fresh: Listing) -> frozenset[str]:
    """Names of ``listed``'s tools that ``fresh`` lacks or describes with another schema."""
    now = {tool.name: tool.input_schema for tool in fresh.tools}
    return frozenset(
        tool.name
        for tool in listed.tools
        if tool.name not in now or now[tool.name] != tool.input_schema
    )


def where(name: str, server: McpServer) -> str:
    """How messages name a server: ``'time' (mcp-server-time --local-timezone UTC)``."""
    spec = " ".join(server.command) if server.command else server.url
    return f"MCP server {name!r} ({spec})"


def list_server(name: str, server: McpServer) -> Listing:
    """Start ``server`` and read its tools; raises :class:`McpServerError`.

    The started session is not stopped: it is kept for the first :class:`McpConnections`
    of this process that needs the server (``call`` and ``check`` then start it once, not
    twice), and stopped after :data:`PARK_S` seconds, or at exit, if none claims it.
    """
    connection = ServerConnection(name, server)
    try:
        listing = connection.start_and_list()
    except BaseException:
        connection.close()
        raise
    _park(_key(name, server), connection)
    return listing


def _key(name: str, server: McpServer) -> str:
    """What a listing and a started session are kept by: the server's whole configuration
    (command, arguments, environment, working directory, URL, headers, limits)."""
    return f"{name}\0{server!r}"


_LISTED: dict[str, Listing] = {}
_LISTED_LOCK = threading.Lock()

#: How long a session started to list a server's tools waits for an executor to claim it.
PARK_S = 30.0
_PARKED: dict[str, tuple[ServerConnection, threading.Timer]] = {}
_AT_EXIT: list[bool] = []


def _park(key: str, connection: ServerConnection) -> None:
    """Keep ``connection`` (open, just listed) for :func:`claim`, for at most ``PARK_S``."""
    timer = threading.Timer(PARK_S, _expire, (key, connection))
    timer.daemon = True
    with _LISTED_LOCK:
        old = _PARKED.pop(key, None)
        _PARKED[key] = (connection, timer)
        if not _AT_EXIT:
            import atexit

            atexit.register(_close_parked)
            _AT_EXIT.append(True)
    timer.start()
    if old is not None:
        old[1].cancel()
        old[0].close()


def _expire(key: str, connection: ServerConnection) -> None:
    with _LISTED_LOCK:
        entry = _PARKED.get(key)
        if entry is None or entry[0] is not connection:
            return  # claimed meanwhile
        del _PARKED[key]
    connection.close()


def claim(name: str, server: McpServer) -> ServerConnection | None:
    """The session started to list ``server``'s tools, if one is waiting (once)."""
    with _LISTED_LOCK:
        entry = _PARKED.pop(_key(name, server), None)
    if entry is None:
        return None
    entry[1].cancel()
    return entry[0]


def _close_parked() -> None:
    """Stop the sessions nobody claimed (at exit: a compose-only command such as ``tools``)."""
    with _LISTED_LOCK:
        entries = list(_PARKED.values())
        _PARKED.clear()
    import contextlib

    for connection, timer in entries:
        timer.cancel()
        # At exit: a server that will not stop is killed by its supervisor anyway.
        with contextlib.suppress(Exception):
            connection.close()


def list_servers(servers: Mapping[str, McpServer]) -> dict[str, Listing]:
    """Each server's listing, the servers started in parallel; raises the first failure
    (in configuration order) as :class:`McpServerError`.

    A listing is kept for the life of the process, keyed by the server's whole
    configuration: composing again (``check``, ``call``, each session of ``serve``) starts
    no server to list it again. A server that changed its tools is seen after a restart.
    """
    import concurrent.futures

    keys = {name: _key(name, server) for name, server in servers.items()}
    with _LISTED_LOCK:
        found = {name: _LISTED[key] for name, key in keys.items() if key in _LISTED}
    missing = [name for name in servers if name not in found]
    if len(missing) == 1:
        found[missing[0]] = list_server(missing[0], servers[missing[0]])
    elif missing:
        with concurrent.futures.ThreadPoolExecutor(
            len(missing), thread_name_prefix="haversack-mcp-list"
        ) as pool:
            futures = {name: pool.submit(list_server, name, servers[name]) for name in missing}
        for name in missing:
            found[name] = futures[name].result()  # the first failure, in config order
    with _LISTED_LOCK:
        for name in missing:
            _LISTED[keys[name]] = found[name]
    return found


class _Home:
    """An open client session: the task that owns it and the event loop that task runs on.

    anyio task groups must be left by the task that entered them, so one task enters the
    client's context, parks until asked to stop, and leaves it; ``client`` is used from
    that loop only.
    """

    __slots__ = (
        "changed",
        "client",
        "loop",
        "ready",
        "stop_requested",
        "stopped",
        "task",
        "thread",
        "wake",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread | None) -> None:
        self.loop = loop
        self.thread = thread  # the connection's own loop thread, or None on a caller's loop
        self.client: Any = None
        # Thread-safe: callers on other threads (and loops) wait for the same start.
        self.ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.stopped = threading.Event()
        self.stop_requested = False
        self.task: asyncio.Task[None] | None = None
        self.wake: asyncio.Event | None = None
        # Tools whose definition the server changed since the listing the prompt was made of.
        self.changed: frozenset[str] = frozenset()

    def request_stop(self) -> None:
        """Ask the owning task to leave the client's context (on ``loop``'s thread only)."""
        self.stop_requested = True
        if self.wake is not None:
            self.wake.set()
        elif self.task is not None:
            self.task.cancel()  # still starting: stop the start


_TOOLS_MODULE = __name__.rpartition(".")[0] + "._tools"


def _short_lived(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the running loop exists for this one call only.

    ``ToolExecutor.execute`` runs an async handler on a fresh loop per call, as does a
    caller's ``asyncio.run(executor.aexecute(...))``: the loop's only task is then the
    executor's own coroutine (or the handler). A session homed there would die with the
    call, so such callers get a thread of the connection's own.
    """
    from haversack import ToolExecutor

    task = asyncio.current_task(loop)
    if task is None:
        return True
    frame = getattr(task.get_coro(), "cr_frame", None)
    if frame is None or asyncio.all_tasks(loop) != {task}:
        return False
    # The executor is known by its public class (the file its methods' code comes from), not
    # by its private module's name: public names keep __module__ == "haversack".
    executor_file = ToolExecutor.aexecute.__code__.co_filename
    return bool(
        frame.f_code.co_filename == executor_file
        or frame.f_globals.get("__name__") == _TOOLS_MODULE
    )


_STOP_WAIT_S = 60.0


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


class ServerConnection:
    """A lazily opened client session to one server, reopened after the server dies.

    The session lives on one event loop, its *home*. A call made on the home loop awaits
    the client directly; any other caller hands the call to the home loop and waits for
    it, which costs two thread wake-ups more per call. The call that starts the session
    picks the home: ``aexecute`` on a long-lived loop makes that loop the home, so its
    calls take no hop; ``execute`` (a fresh loop per call), a loop made for one call, or
    any call after a caller's loop ended under a session, starts a thread running a loop
    of the connection's own, which then serves every loop.
    """

    def __init__(self, name: str, server: McpServer) -> None:
        self.name = name
        self.server = server
        self._lock = threading.Lock()
        self._home: _Home | None = None
        self._retired: list[_Home] = []  # thread homes whose session ended by itself
        self._closed = False
        # Cleared when a caller's loop ends under a session: later sessions get a thread of
        # their own, so a caller making a loop per call does not restart the server per call.
        self._caller_loops = True
        self.owner: McpConnections | None = None  # the set it belongs to (the cap counts sets)

    # ------------------------------------------------------------------ homes
    def _claim(self, loop: asyncio.AbstractEventLoop | None) -> tuple[_Home, bool]:
        """The current home, or a new one (``True``: the caller must start it); with no
        ``loop`` (a caller running none), a new home is a thread of the connection's own."""
        with self._lock:
            if self._closed:
                raise McpServerError(f"{where(self.name, self.server)}: the connection is closed.")
            retired, self._retired = self._retired, []
            home = self._home
            if home is not None and home.loop.is_closed():
                home = None  # a caller's loop closed without cancelling its tasks
            if home is None:
                if loop is not None and self._caller_loops and not _short_lived(loop):
                    home = _Home(loop, None)
                else:
                    home = _Home(asyncio.new_event_loop(), None)
                    home.thread = threading.Thread(
                        target=_run_loop,
                        args=(home.loop,),
                        name=f"haversack-mcp {self.name}",
                        daemon=True,
                    )
                    home.thread.start()
                self._home = home
                new = True
            else:
                new = False
        for old in retired:
            self._stop(old)
        return home, new

    async def _own(self, home: _Home) -> None:
        """The home's owning task: open the client, park until asked to stop, close it."""
        home.task = asyncio.current_task()
        ended_by_loop = False
        try:
            async with open_client(self.server) as client:
                with _LISTED_LOCK:
                    listed = _LISTED.get(_key(self.name, self.server))
                if listed is not None:
                    # The prompt's tools come from a listing kept for the process: a server
                    # started since is listed again, so a tool it changed is not called
                    # with arguments checked against its old schema.
                    home.changed = _changed(listed, await _list_tools(client))
                home.client = client
                home.wake = asyncio.Event()
                home.ready.set_result(client)
                if not home.stop_requested:
                    await home.wake.wait()
        except asyncio.CancelledError:
            # Not asked for: the loop is shutting down (asyncio.run cancels what is left).
            ended_by_loop = not home.stop_requested
            if not home.ready.done():
                home.ready.set_exception(
                    McpServerError(f"{where(self.name, self.server)}: its start was cancelled.")
                )
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the calls waiting for it
            if not home.ready.done():
                home.ready.set_exception(exc)
        finally:
            with self._lock:
                if self._home is home:
                    self._home = None
                    if home.thread is not None:
                        self._retired.append(home)
                if ended_by_loop and home.thread is None:
                    self._caller_loops = False
            home.stopped.set()

    async def _client(self, loop: asyncio.AbstractEventLoop) -> tuple[_Home, Any]:
        home, new = self._claim(loop)
        if new:
            if home.thread is None:
                loop.create_task(self._own(home))
            else:
                asyncio.run_coroutine_threadsafe(self._own(home), home.loop)
        if not home.ready.done():
            # Shielded: one waiter's cancellation must not cancel the start others wait for.
            await asyncio.shield(asyncio.wrap_future(home.ready))
        return home, home.ready.result()

    def _stop(self, home: _Home) -> None:
        """Stop ``home``'s session and thread (idempotent).

        Called on the home loop itself it cannot wait: the session then closes when the
        loop next runs, and at the latest before that loop's ``asyncio.run`` returns.
        """
        with self._lock:
            if self._home is home:
                self._home = None
        loop = home.loop
        if not loop.is_closed() and not home.stopped.is_set():
            try:
                running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                home.request_stop()
            elif loop.is_running():
                loop.call_soon_threadsafe(home.request_stop)
                if not home.stopped.wait(_STOP_WAIT_S):
                    # That loop is blocked (say, waiting for this very thread): say so, do
                    # not hang; its session closes when it runs again.
                    raise McpServerError(
                        f"{where(self.name, self.server)} did not stop within "
                        f"{_STOP_WAIT_S:g} s: the event loop holding its session is not "
                        "running its tasks."
                    )
            elif home.task is not None and running is None:
                # A caller's loop that is not running now (run_until_complete between calls):
                # this thread runs no loop, so it may run that one until the session closes.
                home.request_stop()
                loop.run_until_complete(asyncio.wait([home.task]))
        if home.thread is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
            home.thread.join()
            loop.close()

    def start_and_list(self) -> Listing:
        """Start the server on a thread of the connection's own and read its tools, within
        ``startup_timeout_s``; the session stays open for calls. Raises
        :class:`McpServerError` (the caller closes the connection)."""
        home, new = self._claim(None)
        if new:
            asyncio.run_coroutine_threadsafe(self._own(home), home.loop)

        async def listed() -> Listing:
            async with asyncio.timeout(self.server.startup_timeout_s):
                client = await asyncio.shield(asyncio.wrap_future(home.ready))
                return await _list_tools(client)

        try:
            return asyncio.run_coroutine_threadsafe(listed(), home.loop).result()
        except TimeoutError:
            raise McpServerError(
                f"{where(self.name, self.server)} did not start and list its tools within "
                f"{self.server.startup_timeout_s:g} s; check the command, or raise "
                "startup_timeout_s.",
                pack="mcp",
            ) from None
        except McpServerError:
            raise
        except Exception as exc:
            cause = root_cause(exc)
            hint = (
                " The command was not found: install the server or give its full path."
                if isinstance(cause, FileNotFoundError)
                else ""
            )
            raise McpServerError(
                f"{where(self.name, self.server)} could not be started and listed: "
                f"{describe(exc)}.{hint}",
                pack="mcp",
            ) from exc

    def close(self) -> None:
        """Stop the server (its process exits, or the HTTP session is deleted)."""
        with self._lock:
            self._closed = True
        for home in self._take_homes():
            self._stop(home)

    def _take_homes(self) -> list[_Home]:
        with self._lock:
            homes = [*self._retired, *([self._home] if self._home is not None else [])]
            self._retired = []
        return homes

    async def suspend(self) -> None:
        """Stop the server to make room for another session's; its next call starts it again.

        Stops that would block (a session on another loop or thread) run on a worker
        thread, so the caller's loop keeps serving meanwhile.
        """
        loop = asyncio.get_running_loop()
        for home in self._take_homes():
            if home.loop is loop:
                self._stop(home)  # cannot wait here: it closes when this loop runs again
            else:
                await asyncio.to_thread(self._stop, home)

    # ------------------------------------------------------------------ calls
    async def _request(
        self, client: Any, tool: str, arguments: Mapping[str, Any], progress: Progress | None
    ) -> Any:
        # asyncio.timeout, not anyio.fail_after: a third of the pack's own cost per call, and
        # the SDK's anyio scopes inside see a plain cancellation either way.
        async with asyncio.timeout(self.server.timeout_s):
            return await client.call_tool(tool, dict(arguments), progress_callback=progress)

    async def call(
        self, tool: str, arguments: Mapping[str, Any], progress: Progress | None = None
    ) -> Any:
        """Call ``tool`` on the server; the SDK's ``CallToolResult``.

        ``progress`` (the SDK's progress callback) asks the server for progress and gets
        each ``notifications/progress`` it sends for the call. Cancelling the awaiting
        task cancels the call on the server's loop, which sends the server
        ``notifications/cancelled``. Raises ``TimeoutError`` after ``timeout_s``.
        """
        loop = asyncio.get_running_loop()
        owner = self.owner
        if owner is None:
            return await self._call(loop, tool, arguments, progress)
        owner.enter()
        try:
            if self._home is None:
                await owner.make_room()
            return await self._call(loop, tool, arguments, progress)
        finally:
            owner.leave()

    async def _call(
        self,
        loop: asyncio.AbstractEventLoop,
        tool: str,
        arguments: Mapping[str, Any],
        progress: Progress | None,
    ) -> Any:
        home = self._home
        if home is not None and home.loop is loop and home.client is not None:
            client = home.client  # the fast path: this loop's own open session
        else:
            home, client = await self._client(loop)
        if tool in home.changed:
            raise McpServerError(
                f"{where(self.name, self.server)} changed its tool {tool!r} since its tools "
                "were listed (its input schema differs, or it is gone), so it was not called; "
                "start Haversack again (or open a new session of serve) to use the server's "
                "tools as they are now."
            )
        try:
            if home.loop is loop:
                return await self._request(client, tool, arguments, progress)
            if home.thread is None and not home.loop.is_running():
                raise McpServerError(
                    f"{where(self.name, self.server)}: its session lives on another event "
                    "loop, which is not running; call it from that loop."
                )
            future = asyncio.run_coroutine_threadsafe(
                self._request(client, tool, arguments, progress), home.loop
            )
            return await asyncio.wrap_future(future)
        except (TimeoutError, asyncio.CancelledError, McpServerError):
            raise
        except Exception as exc:
            from mcp.shared.exceptions import MCPError
            from mcp_types import CONNECTION_CLOSED

            cause = root_cause(exc)
            if isinstance(cause, MCPError) and cause.code != CONNECTION_CLOSED:
                raise
            # The server went away (crashed, or closed the stream): forget this session so
            # the next call starts a fresh one.
            if home.loop is loop:
                self._stop(home)
            else:
                await asyncio.to_thread(self._stop, home)
            raise McpServerError(
                f"{where(self.name, self.server)} closed the connection during {tool!r} "
                f"({describe(exc)}); it is started again on the next call."
            ) from exc


class McpConnections:
    """The pack's resource: one lazily started connection per configured server, all
    stopped when the executor's resources close.

    At most ``max_live_sessions`` sets of connections (one per executor: per session of
    ``haversack serve``) have servers running in the process at once: starting a server in
    one more stops the servers of the least recently used set with no call in flight, which
    start again on that set's next call.
    """

    def __init__(
        self, servers: Mapping[str, McpServer], *, max_live_sessions: int = DEFAULT_MAX_LIVE
    ) -> None:
        self.max_live_sessions = max_live_sessions
        self._calls = 0  # calls in flight: a busy set is not stopped to make room
        self._calls_lock = threading.Lock()
        # A server just started to list its tools (composing, moments ago) is taken over
        # rather than started a second time.
        self._connections: dict[str, ServerConnection] = {}
        taken = False
        for name, server in servers.items():
            connection = claim(name, server)
            taken = taken or connection is not None
            self._connections[name] = connection or ServerConnection(name, server)
            self._connections[name].owner = self
        if taken:
            for victim in LIVE.admit(self, max_live_sessions):
                victim.close_servers()

    @property
    def busy(self) -> bool:
        """Whether a call is in flight."""
        return self._calls > 0

    def enter(self) -> None:
        """A call begins (from any thread)."""
        with self._calls_lock:
            self._calls += 1

    def leave(self) -> None:
        """A call ended: this set is now the most recently used."""
        with self._calls_lock:
            self._calls -= 1
        LIVE.touch(self)

    async def make_room(self) -> None:
        """Count this set as running, first stopping the least recently used idle sets
        past ``max_live_sessions``; :class:`McpServerError` when all of them are busy."""
        for victim in LIVE.admit(self, self.max_live_sessions):
            for connection in victim._connections.values():
                await connection.suspend()

    def close_servers(self) -> None:
        """Stop the running servers (blocking); the next call starts them again."""
        LIVE.forget(self)
        for connection in self._connections.values():
            for home in connection._take_homes():
                connection._stop(home)

    def get(self, name: str) -> ServerConnection:
        """The connection to the server configured as ``name``."""
        return self._connections[name]

    def close(self) -> None:
        """Stop every started server; reports the first failure after trying them all."""
        LIVE.forget(self)
        failures: list[BaseException] = []
        for connection in self._connections.values():
            try:
                connection.close()
            except BaseException as exc:  # noqa: BLE001 - every server gets stopped
                failures.append(exc)
        if failures:
            raise failures[0]


def connections_binding(
    servers: Mapping[str, McpServer], max_live_sessions: int = DEFAULT_MAX_LIVE
) -> Binding[McpConnections]:
    """The binding of the pack's resource: servers start on their first call and stop when
    the executor's resources close."""
    from haversack import Binding

    return Binding(McpConnections, _Factory(dict(servers), max_live_sessions))


class _Factory:
    """Builds the connections; its repr names the servers in resource listings."""

    __slots__ = ("max_live_sessions", "servers")

    def __init__(self, servers: dict[str, McpServer], max_live_sessions: int) -> None:
        self.servers = servers
        self.max_live_sessions = max_live_sessions

    def __call__(self, resolver: ResourceResolver) -> McpConnections:
        return McpConnections(self.servers, max_live_sessions=self.max_live_sessions)

    def __repr__(self) -> str:
        return f"haversack_mcp connections ({', '.join(self.servers) or 'no servers'})"
