"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, malformed frames answered."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

from ._frames import MAX_FRAME_BYTES, decode_frame, frame_error

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["stdio_streams"]


@asynccontextmanager
async def _claimed_stdio() -> AsyncIterator[tuple[BinaryIO, BinaryIO]]:
    """The wire as private descriptors; fd 0 reads /dev/null and fd 1 goes to stderr meanwhile.

    Tools start processes that inherit fd 0 and 1: one that reads stdin would eat client
    messages and one that prints would corrupt the protocol stream.
    """
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    stdin = os.fdopen(wire_in, "rb", buffering=65536)
    stdout = os.fdopen(wire_out, "wb", buffering=0)
    try:
        yield stdin, stdout
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        stdout.close()
        stdin.close()


async def _read_frames(
    stdin: BinaryIO,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    to_client: MemoryObjectSendStream[SessionMessage],
) -> None:
    import anyio
    from mcp.shared.message import SessionMessage

    async def readline(limit: int) -> bytes:
        # Abandoned on cancellation: a thread blocked on the client's pipe must not hold
        # up shutdown; it ends at EOF.
        return await anyio.to_thread.run_sync(stdin.readline, limit, abandon_on_cancel=True)

    async with to_server, to_client:
        while True:
            # One byte past the limit tells an oversized frame from one that fits exactly.
            line: bytes = await readline(MAX_FRAME_BYTES + 2)
            if not line:
                return
            if not line.endswith(b"\n") and len(line) > MAX_FRAME_BYTES:
                # Skip the rest of the oversized frame without holding it in memory.
                while line and not line.endswith(b"\n"):
                    line = await readline(65536)
                await to_client.send(SessionMessage(_too_large()))
                continue
            if not line.strip():
                continue
            decoded = decode_frame(line)
            if isinstance(decoded, SessionMessage):
                await to_server.send(decoded)
            else:
                await to_client.send(SessionMessage(decoded))


def _too_large() -> Any:
    from ._frames import INVALID_REQUEST

    return frame_error(
        INVALID_REQUEST, f"Invalid request: the message exceeds {MAX_FRAME_BYTES} bytes."
    )


async def _write_frames(
    stdout: BinaryIO, from_server: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    import anyio

    async with from_server:
        async for item in from_server:
            data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
            await anyio.to_thread.run_sync(stdout.write, data.encode() + b"\n")


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The read and write streams a server loop runs on, over this process's stdin/stdout.

    Unlike the SDK's stdio transport, which drops what it cannot parse, every malformed
    frame gets the JSON-RPC error response it is owed (see
    :func:`haversack.server._frames.decode_frame`), written through the same writer as
    the server's responses so frames never interleave.
    """
    import anyio
    from mcp.shared.message import SessionMessage

    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    async with _claimed_stdio() as (stdin, stdout), anyio.create_task_group() as tg:
        tg.start_soon(_read_frames, stdin, to_server, to_client.clone())
        tg.start_soon(_write_frames, stdout, from_server)
        try:
            yield from_client, to_client
        finally:
            tg.cancel_scope.cancel()
