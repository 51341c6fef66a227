"""The stdio transport: the SDK's, with messages read in linear time and bounded in size.

The SDK joins its buffer to each chunk read (``(buffer + chunk).split("\\n")``), which is
quadratic in a message's length (a 200 MiB result took minutes), and keeps any length.
Here chunks are kept in a list and joined once per message; a message past
``max_message_bytes`` is skipped as it streams in and answered, when its request id can
be read from its start, by a JSON-RPC error that names the limit. The process is started
by the SDK's helper (private, pinned by ``mcp<3``); start and stop run to their end even
when the task is cancelled meanwhile (see :func:`_started` and :func:`_stopped`).
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["TOO_LARGE", "stdio_transport"]

#: The JSON-RPC error code of a message over the size limit (implementation-defined range).
TOO_LARGE = -32099
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def _too_large(head: bytes, size_text: str, limit: int) -> Any:
    """An error answering the request whose over-long answer began with ``head``."""
    return _refused(
        head,
        f"the server's answer is larger than max_message_bytes ({limit} bytes, got "
        f"{size_text}); it was not read. Raise max_message_bytes for this server, or ask "
        "for less at a time.",
    )


def _parsed(line: bytes) -> Any:
    """The message on ``line``; one that does not parse (bad JSON, nested past the
    parser's depth) answers its request with an error at once, instead of leaving the
    request to wait for its timeout."""
    from mcp.client import stdio as sdk

    item = sdk._parse_line(line.decode("utf-8", errors="replace"))
    if not isinstance(item, Exception):
        return item
    lines = str(item).splitlines()
    reason = (lines[1] if len(lines) > 1 else type(item).__name__).strip()[:200]
    return _refused(line[:4096], f"the server's answer is not a valid message ({reason})")


def _refused(head: bytes, message: str) -> Any:
    """A JSON-RPC error for the request whose answer began with ``head``, or an exception
    (logged by the session) when no id is found there."""
    import json

    import mcp_types as types
    from mcp.shared.message import SessionMessage

    found = _ID.search(head[:4096])
    if found is None:
        return ValueError(f"A message from the MCP server was dropped: {message}")
    request_id = json.loads(found.group(1))
    error = types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=TOO_LARGE, message=message)
    )
    return SessionMessage(error)


#: How long a server has to exit once its input is closed, then once it is sent SIGTERM
#: (its supervisor kills the tree a second after that), then once it is sent SIGKILL.
_STOP_GRACE_S = 2.0
_POLL_S = 0.01


async def _started(command: list[str], env: dict[str, str], cwd: str | None) -> Any:
    """The server's process, started to the end even if this task is cancelled meanwhile:
    a process started by a cancelled start is stopped before the cancellation goes on."""
    from mcp.client import stdio as sdk

    starting = asyncio.get_running_loop().create_task(
        sdk._create_platform_compatible_process(
            command=command[0], args=command[1:], env=env, errlog=sys.stderr, cwd=cwd
        )
    )
    cancelled: BaseException | None = None
    while not starting.done():
        try:
            await asyncio.wait([starting])
        except asyncio.CancelledError as exc:
            cancelled = exc
    # A start cancelled itself raises here, asyncio having killed and waited for the process.
    process = starting.result()
    if cancelled is not None:
        await _stopped(process)
        raise cancelled
    return process


async def _stopped(process: Any) -> None:
    """Stop ``process`` and wait for it: close its input, wait, SIGTERM its group, wait,
    SIGKILL its group, wait (each wait bounded); then close its transport.

    A cancellation meanwhile is held until then and raised after: anyio's shielded scopes do
    not hold off asyncio's own ``Task.cancel``, which ``asyncio.run`` sends every task left
    when its main coroutine ends, and a stop cut short leaves the process running and its
    transport unclosed once the loop is gone.
    """
    import contextlib
    import logging
    import os

    from mcp.client import stdio as sdk

    loop = asyncio.get_running_loop()
    cancelled: BaseException | None = None

    async def held(step: Any) -> None:
        nonlocal cancelled
        try:
            await step
        except asyncio.CancelledError as exc:
            cancelled = exc

    async def exited(within: float) -> bool:
        deadline = loop.time() + within
        while process.returncode is None and loop.time() < deadline:
            await held(asyncio.sleep(_POLL_S))
        return process.returncode is not None

    try:
        await held(sdk._close_pipe(process.stdin))
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if await exited(_STOP_GRACE_S):
                break
            # The supervisor leads the group (a session of its own): the server gets the
            # signal too, and the supervisor kills what left the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        else:
            if not await exited(_STOP_GRACE_S):
                logging.getLogger(__name__).warning(
                    "MCP server process %d is still alive after SIGKILL; abandoning it",
                    process.pid,
                )
        await held(sdk._close_pipe(process.stdout))
    finally:
        sdk._close_subprocess_transport(process)
    if cancelled is not None:
        raise cancelled


@asynccontextmanager
async def stdio_transport(
    command: list[str], env: dict[str, str], cwd: str | None, max_message_bytes: int
) -> AsyncIterator[Any]:
    """Streams of a server started as ``command`` (already wrapped by the supervisor)."""
    import anyio
    import anyio.lowlevel
    from mcp.client import stdio as sdk

    process = await _started(command, env, cwd)
    # No awaits until the task group is entered: a cancellation there would leak the process.
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    writer_done = anyio.Event()
    shutting_down = False

    async def deliver(item: Any) -> bool:
        try:
            await read_writer.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    async def reader() -> None:
        assert process.stdout is not None
        parts: list[bytes] = []
        size = 0
        head = b""  # the start of a message over the limit, for its request id
        skipping = False
        try:
            async with read_writer:
                try:
                    while True:
                        try:
                            chunk = await process.stdout.receive()
                        except anyio.EndOfStream:
                            return
                        start = 0
                        while True:
                            end = chunk.find(b"\n", start)
                            piece = chunk[start:] if end < 0 else chunk[start:end]
                            size += len(piece)
                            if skipping:
                                pass
                            elif size > max_message_bytes:
                                skipping = True
                                head = b"".join(parts)[:4096] or piece[:4096]
                                parts = []
                            else:
                                parts.append(piece)
                            if end < 0:
                                break
                            if skipping:
                                item = _too_large(head, f"{size} bytes", max_message_bytes)
                            else:
                                item = _parsed(b"".join(parts))
                            parts, size, skipping, head = [], 0, False, b""
                            if not await deliver(item):
                                return
                            start = end + 1
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                raise

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        try:
            with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
                await writer_done.wait()
        finally:
            await _stopped(process)  # also when a cancellation cut the flush short
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
