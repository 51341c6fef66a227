"""The host side of the resident executor: one long-lived exec that starts every command.

A fresh engine exec costs about 100 ms; a command started by a process already running in
the container costs about a millisecond. ``Resident`` drives ``_resident_program`` over the
exec's attached stream (``ExecStream``): one request per command, its output and exit status
back as frames, each tagged with the command's id so that what a killed command's runner
still sends is never taken for the next command's.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._errors import SandboxError
from ._output import CappedBuffer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._backend import ExecChannel, Sink

__all__ = ["Resident", "ResidentLost", "resident_argv"]

_REQUEST: Final = struct.Struct(">III")
_FRAME: Final = struct.Struct(">BII")
_CODE: Final = struct.Struct(">i")
_NO_STDIN: Final = 0xFFFFFFFF
# The frame kinds of ``_resident_program``.
_READY, _STARTED, _STDOUT, _STDERR, _EXIT, _FAILED = 1, 2, 3, 4, 5, 6
#: Largest frame the program sends (an output chunk, a message): anything bigger means the
#: channel is not speaking the protocol.
_MAX_FRAME: Final = 1 << 20


def resident_argv() -> list[str]:
    """The exec's command: the program's text on the command line, so no file in the
    container holds it (``-I``: no environment variables, no user site, no working directory
    on the import path)."""
    source = Path(__file__).with_name("_resident_program.py").read_text(encoding="utf-8")
    return ["python3", "-I", "-S", "-B", "-c", source]


class ResidentLost(SandboxError):  # noqa: N818 - a condition, handled inside the pack
    """The resident's channel ended (``started``: after it had started the command)."""

    def __init__(self, message: str, *, started: bool) -> None:
        super().__init__(message)
        self.started = started


class _Decoder:
    """Stream 1 of the exec: frames, dispatched to the current command's buffers."""

    def __init__(self) -> None:
        self._pending = b""
        self.ready_pid: int | None = None
        self.broken = False
        self.ident = 0
        self.out: Sink = CappedBuffer(0)
        self.err: Sink = CappedBuffer(0)
        self.started = False
        self.exit_code: int | None = None

    def begin(self, ident: int, out: Sink, err: Sink) -> None:
        self.ident, self.out, self.err = ident, out, err
        self.started, self.exit_code = False, None

    def done(self) -> bool:
        return self.exit_code is not None or self.broken

    def write(self, data: bytes) -> None:
        self._pending += data
        while len(self._pending) >= _FRAME.size and not self.broken:
            kind, ident, size = _FRAME.unpack_from(self._pending)
            if size > _MAX_FRAME:
                self.broken = True
                return
            end = _FRAME.size + size
            if len(self._pending) < end:
                return
            payload = self._pending[_FRAME.size : end]
            self._pending = self._pending[end:]
            self._frame(kind, ident, payload)

    def _frame(self, kind: int, ident: int, payload: bytes) -> None:
        if kind == _READY:
            self.ready_pid = _CODE.unpack(payload)[0]
            return
        if ident != self.ident or self.exit_code is not None:
            return  # a command killed at its timeout, still being wound up
        if kind == _STDOUT:
            self.out.write(payload)
        elif kind == _STDERR:
            self.err.write(payload)
        elif kind == _STARTED:
            self.started = True
        elif kind == _EXIT:
            self.exit_code = _CODE.unpack(payload)[0]
        elif kind == _FAILED:
            failure = json.loads(payload)
            self.err.write(f"{failure['message']}\n".encode())
            self.exit_code = int(failure["code"])


class Resident:
    """A running resident: ``pid`` is its pid inside the container."""

    def __init__(self, stream: ExecChannel, decoder: _Decoder, log: CappedBuffer) -> None:
        self._stream = stream
        self._decoder = decoder
        self._log = log
        self._next = 0
        #: False while a request is only partly sent (a deadline, or a cancellation raised
        #: into the call): the program would read the next one from its middle.
        self.in_step = True
        assert decoder.ready_pid is not None
        self.pid: int = decoder.ready_pid

    @classmethod
    def open(cls, attach: Callable[[Sink, Sink], ExecChannel], deadline: float) -> Resident:
        """Attach to the created exec (``attach(stdout, stderr)``: the backend's
        ``attach_exec``) and wait for the program's ready frame."""
        decoder = _Decoder()
        log = CappedBuffer(4096)
        stream = attach(decoder, log)
        stream.pump(deadline, until=lambda: decoder.ready_pid is not None or decoder.broken)
        if decoder.ready_pid is None:
            stream.close()
            raise SandboxError(
                "The resident executor did not start (is python3 in the image?): "
                f"{log.text().strip()[:300] or 'no output'}"
            )
        return cls(stream, decoder, log)

    def run(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: list[str],
        uid: int,
        gid: int,
        stdin: bytes | None,
        out: CappedBuffer,
        err: CappedBuffer,
        deadline: float,
    ) -> int | None:
        """Run one command: its exit code, or None when the deadline passed first. Raises
        ``ResidentLost`` when the channel ends before the exit code arrived."""
        self._next += 1
        decoder = self._decoder
        decoder.begin(self._next, out, err)
        body = json.dumps({"argv": argv, "env": env, "cwd": cwd, "uid": uid, "gid": gid})
        raw = body.encode()
        size = _NO_STDIN if stdin is None else len(stdin)
        request = _REQUEST.pack(self._next, len(raw), size) + raw + (stdin or b"")
        self.in_step = False
        self.in_step = self._stream.send(request, deadline)
        if self.in_step:
            self._stream.pump(deadline, until=decoder.done)
        if decoder.exit_code is not None:
            return decoder.exit_code
        # A send that failed before the deadline: the channel broke (the container died).
        gone = not self.in_step and time.monotonic() < deadline
        if self._stream.eof or decoder.broken or gone:
            raise ResidentLost(
                "The sandbox's resident executor ended"
                + (" during the command" if decoder.started else ""),
                started=decoder.started,
            )
        return None

    def close(self) -> None:
        """Close the channel: the program reads EOF and exits."""
        self._stream.close()
