"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, malformed frames answered."""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from ._frames import MAX_FRAME_BYTES, decode_frame, frame_error

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["stdio_streams"]


#: What the reader hands over for a frame over the size limit (its bytes were skipped).
_TOO_LARGE: Final = b"<too large>"


class _WireIn:
    """The client's pipe, read by a daemon thread of its own, one frame at a time.

    A thread blocked on the pipe cannot be interrupted: it returns when the client writes
    or closes its end. A worker of the event loop's pool blocked there kept a server
    stopped with SIGTERM from exiting (the interpreter joins those threads), and closing
    the buffered reader under it blocked on the reader's lock. So the blocking read runs
    in a daemon thread that nothing waits for, and the loop waits on a short queue that
    :meth:`close` can always wake.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._frames: queue.Queue[bytes] = queue.Queue(maxsize=4)  # back-pressure
        self._closed = threading.Event()
        threading.Thread(target=self._pump, name="haversack stdio reader", daemon=True).start()

    def _pump(self) -> None:
        try:
            while not self._closed.is_set():
                # One byte past the limit tells an oversized frame from one that fits.
                line = self._stream.readline(MAX_FRAME_BYTES + 2)
                if not line.endswith(b"\n") and len(line) > MAX_FRAME_BYTES:
                    # Skip the rest of the oversized frame without holding it in memory.
                    while line and not line.endswith(b"\n"):
                        line = self._stream.readline(65536)
                    self._hand_over(_TOO_LARGE)
                    continue
                self._hand_over(line)
                if not line:
                    break
        except (OSError, ValueError):
            self._hand_over(b"")  # the pipe broke: as if the client had closed it
        finally:
            self._stream.close()  # only this thread reads it

    def _hand_over(self, frame: bytes) -> None:
        while not self._closed.is_set():
            try:
                self._frames.put(frame, timeout=0.5)
                return
            except queue.Full:
                continue

    async def next_frame(self) -> bytes:
        """The next line (with its newline), :data:`_TOO_LARGE`, or ``b""`` at the end."""
        import anyio

        return await anyio.to_thread.run_sync(self._frames.get, abandon_on_cancel=True)

    def close(self) -> None:
        """Stop reading; wakes a waiting :meth:`next_frame` (the reader thread ends at the
        client's next write or EOF, and closes the pipe)."""
        self._closed.set()
        with contextlib.suppress(queue.Full):
            self._frames.put_nowait(b"")


@asynccontextmanager
async def _claimed_stdio() -> AsyncIterator[tuple[_WireIn, BinaryIO]]:
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
    # The reader gets a descriptor of its own: it closes it when it ends, which may be
    # before or after this block does.
    stdin = _WireIn(os.fdopen(os.dup(wire_in), "rb", buffering=65536))
    stdout = os.fdopen(wire_out, "wb", buffering=0)
    try:
        yield stdin, stdout
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        stdout.close()
        stdin.close()


async def _read_frames(
    stdin: _WireIn,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    to_client: MemoryObjectSendStream[SessionMessage],
) -> None:
    from mcp.shared.message import SessionMessage

    async with to_server, to_client:
        while True:
            line = await stdin.next_frame()
            if not line:
                return
            if line is _TOO_LARGE:
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
