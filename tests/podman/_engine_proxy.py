"""A misbehaving engine in front of the real one: a unix-socket proxy to a real Podman service
that can rewrite the JSON of chosen responses or stall chosen requests forever.

It stands in for what this machine cannot run for real: an engine on another kernel whose
container pids mean something else here, a rootless cgroup-v1 engine that drops the limits,
an engine that stops answering half-way. Everything else is the real engine's answer.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EngineProxy"]

#: ``(method, path, json body) -> json body``: rewrites a response (the body is parsed JSON).
Rewrite = Callable[[str, str, Any], Any]
#: ``(method, path) -> bool``: whether to hold this request forever without forwarding it.
Stall = Callable[[str, str], bool]


def _read_head(sock: socket.socket, buffer: bytearray) -> bytes | None:
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer.extend(chunk)
    end = buffer.index(b"\r\n\r\n") + 4
    head = bytes(buffer[:end])
    del buffer[:end]
    return head


def _read_exact(sock: socket.socket, buffer: bytearray, size: int) -> bytes:
    while len(buffer) < size:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer.extend(chunk)
    data = bytes(buffer[:size])
    del buffer[:size]
    return data


def _read_line(sock: socket.socket, buffer: bytearray) -> bytes:
    while b"\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer.extend(chunk)
    end = buffer.index(b"\r\n") + 2 if b"\r\n" in buffer else len(buffer)
    line = bytes(buffer[:end])
    del buffer[:end]
    return line


def _headers(head: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            found[name.strip().lower().decode()] = value.strip().decode()
    return found


def _body(sock: socket.socket, buffer: bytearray, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", ""):
        parts: list[bytes] = []
        while True:
            size = int(_read_line(sock, buffer).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                _read_line(sock, buffer)
                return b"".join(parts)
            parts.append(_read_exact(sock, buffer, size))
            _read_line(sock, buffer)
    return _read_exact(sock, buffer, int(headers.get("content-length", "0")))


def _pipe(src: socket.socket, dst: socket.socket, buffer: bytearray) -> None:
    with contextlib.suppress(OSError):
        if buffer:
            dst.sendall(bytes(buffer))
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


class EngineProxy:
    """Listens on ``path``; forwards to the real service's unix socket ``upstream``."""

    def __init__(
        self,
        path: Path,
        upstream: str,
        *,
        rewrite: Rewrite | None = None,
        stall: Stall | None = None,
    ) -> None:
        self.path = path
        self.url = f"unix://{path}"
        self._upstream = upstream
        self._rewrite = rewrite
        self._stall = stall
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        self._open: list[socket.socket] = []
        self.stalled: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        """Stop listening and drop every connection."""
        for sock in [self._server, *self._open]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self._upstream)
            self._open += [client, upstream]
            requests: queue.Queue[tuple[str, str, bool]] = queue.Queue()
            threading.Thread(
                target=self._requests, args=(client, upstream, requests), daemon=True
            ).start()
            threading.Thread(
                target=self._responses, args=(upstream, client, requests), daemon=True
            ).start()

    def _requests(
        self,
        client: socket.socket,
        upstream: socket.socket,
        requests: queue.Queue[tuple[str, str, bool]],
    ) -> None:
        buffer = bytearray()
        with contextlib.suppress(OSError, ValueError):
            while (head := _read_head(client, buffer)) is not None:
                method, path = head.split(b" ", 2)[:2]
                headers = _headers(head)
                upgrade = "upgrade" in headers.get("connection", "").lower()
                body = b"" if upgrade else _body(client, buffer, headers)
                if self._stall is not None and self._stall(method.decode(), path.decode()):
                    self.stalled.append(f"{method.decode()} {path.decode()}")
                    return  # held: never forwarded, never answered
                requests.put((method.decode(), path.decode(), upgrade))
                upstream.sendall(head + body)
                if upgrade:
                    _pipe(client, upstream, buffer)
                    return
        with contextlib.suppress(OSError):
            upstream.shutdown(socket.SHUT_WR)

    def _responses(
        self,
        upstream: socket.socket,
        client: socket.socket,
        requests: queue.Queue[tuple[str, str, bool]],
    ) -> None:
        buffer = bytearray()
        with contextlib.suppress(OSError, ValueError):
            while (head := _read_head(upstream, buffer)) is not None:
                method, path, upgrade = requests.get()
                if upgrade:
                    client.sendall(head)
                    _pipe(upstream, client, buffer)
                    return
                headers = _headers(head)
                body = _body(upstream, buffer, headers)
                if self._rewrite is not None and "json" in headers.get("content-type", ""):
                    with contextlib.suppress(ValueError):
                        body = json.dumps(self._rewrite(method, path, json.loads(body))).encode()
                lines = [
                    line
                    for line in head[:-4].split(b"\r\n")
                    if not line.lower().startswith((b"content-length:", b"transfer-encoding:"))
                ]
                lines.append(f"Content-Length: {len(body)}".encode())
                client.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)
