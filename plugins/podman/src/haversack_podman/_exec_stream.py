"""One exec session's attached stream over the REST API: stdin in, demultiplexed output out.

podman-py's ``exec_run`` can neither feed stdin nor stop at a deadline, so ``POST
/exec/{id}/start`` is sent on a raw socket with ``Upgrade: tcp`` (the hijack the Docker and
Podman CLIs use), after which the socket carries stdin one way and 8-byte framed stdout and
stderr the other. Half-closing the socket delivers EOF to the command's stdin.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlparse

from haversack import check_cancelled

from ._errors import SandboxError, SandboxUnavailableError
from ._service import request_timeout

if TYPE_CHECKING:
    from ._backend import Sink

__all__ = ["ExecStream"]

_HEADER: Final = struct.Struct(">BxxxI")
_CHUNK: Final = 65536
#: Longest a wait for output blocks before the thread checks whether its call was cancelled.
_WAKE_S: Final = 0.1


def _connect(base_url: str, timeout: float) -> socket.socket:
    parsed = urlparse(base_url)
    if parsed.scheme in ("unix", "http+unix"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(parsed.path)
        except OSError:
            sock.close()
            raise
        return sock
    if parsed.scheme in ("tcp", "http"):
        address = (parsed.hostname or "localhost", parsed.port or 80)
        return socket.create_connection(address, timeout=timeout)
    raise SandboxUnavailableError(
        f"connection_url {base_url!r} is not supported for command execution; use a "
        "unix:// or tcp:// URL (or None for a private service)."
    )


class ExecStream:
    """The attached stream of a created exec session; ``pump`` moves data until EOF or a
    deadline, so the caller can kill a late command and keep draining."""

    def __init__(
        self,
        base_url: str,
        exec_id: str,
        stdin: bytes | None,
        stdout: Sink,
        stderr: Sink,
    ) -> None:
        self._stdin = stdin
        self._stdin_sent = 0
        self._out: dict[int, Sink] = {1: stdout, 2: stderr}
        self._pending = b""
        self.eof = False
        body = json.dumps({"Detach": False, "Tty": False}).encode()
        request = (
            f"POST /v1.41/exec/{exec_id}/start HTTP/1.1\r\nHost: podman\r\n"
            "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        # Connecting and the engine's answer are bounded like any engine request (the call's
        # deadline); the command's own output is then bounded by ``pump``'s deadline.
        limit = request_timeout()
        try:
            self._sock = _connect(base_url, limit)
        except OSError as exc:
            raise SandboxUnavailableError(
                f"Cannot connect to the Podman service at {base_url}: {exc}."
            ) from exc
        try:
            self._sock.sendall(request)
            self._read_headers()
        except OSError as exc:
            self._sock.close()
            raise SandboxUnavailableError(
                f"The Podman service at {base_url} did not start the command within "
                f"{limit:.3g} s ({type(exc).__name__}); check that it runs and is reachable."
            ) from exc
        self._sock.setblocking(False)
        if stdin is None:
            self._stdin_done = True
        else:
            self._stdin_done = False
            self._send_stdin()

    def _read_headers(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self._sock.recv(_CHUNK)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or parts[1] not in ("101", "200"):
            self._sock.close()
            raise SandboxError(
                f"Podman refused to start the command ({status_line.strip() or 'no response'}): "
                f"{rest.decode('utf-8', errors='replace').strip()[:500]}"
            )
        self._pending = rest

    def _send_stdin(self) -> None:
        assert self._stdin is not None
        while self._stdin_sent < len(self._stdin):
            try:
                sent = self._sock.send(self._stdin[self._stdin_sent : self._stdin_sent + _CHUNK])
            except BlockingIOError:
                return
            except OSError:
                break  # the command exited without reading all of its input
            self._stdin_sent += sent
        self._stdin_done = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def _parse(self) -> None:
        while len(self._pending) >= _HEADER.size:
            stream, size = _HEADER.unpack_from(self._pending)
            if len(self._pending) < _HEADER.size + size:
                return
            payload = self._pending[_HEADER.size : _HEADER.size + size]
            self._pending = self._pending[_HEADER.size + size :]
            target = self._out.get(stream)
            if target is not None:
                target.write(payload)

    def pump(self, deadline: float, until: Callable[[], bool] | None = None) -> bool:
        """Move data until the stream ends or ``until()`` holds (True), or until
        ``time.monotonic()`` reaches ``deadline`` (False)."""
        self._parse()
        while not self.eof:
            if until is not None and until():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # Short waits, each followed by a check: the sandbox's exec is uninterruptible
            # (its clean-up must run whole), so a cancelled call stops here.
            check_cancelled()
            writers = [] if self._stdin_done else [self._sock]
            readable, writable, _ = select.select(
                [self._sock], writers, [], min(remaining, _WAKE_S)
            )
            if writable:
                self._send_stdin()
            if readable:
                self._receive()
        return True

    def send(self, data: bytes, deadline: float) -> bool:
        """Write ``data`` to the command's stdin (an exec attached with stdin and opened with
        ``stdin=None`` keeps it open). False when the deadline passed or the peer is gone;
        output arriving meanwhile is read, so neither side can block the other."""
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof:
                return False
            check_cancelled()
            readable, writable, _ = select.select(
                [self._sock], [self._sock], [], min(remaining, _WAKE_S)
            )
            if writable:
                try:
                    view = view[self._sock.send(view[:_CHUNK]) :]
                except BlockingIOError:
                    pass
                except OSError:
                    return False
            if readable:
                self._receive()
        return True

    def _receive(self) -> None:
        try:
            chunk = self._sock.recv(_CHUNK)
        except BlockingIOError:
            return
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
            return
        self._pending += chunk
        self._parse()

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self._sock.close()
