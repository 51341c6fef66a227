"""The host side of the Python kernel: one interpreter per sandbox whose state lives across calls.

``_kernel_program`` runs in its own exec as the command user: a keeper, and a chain of
*generations* (processes holding the interpreter's state). Each call runs in a fork of the
serving generation; a success makes the fork the serving generation while its parent waits,
pending, until the call commits (the host kills the parent) or is rolled back (the host kills
the fork, and the parent serves again). So the state the next call sees is always the state
after the last call that succeeded and was not rolled back.

Every process of the kernel is in the sandbox's baseline (the sweep after each command keeps
it, the freeze between commands stops it like everything else). Its host pids are found from
the pids it reports, and checked: a generation must be a child of the one before it and run
as the command user. Signals go through pidfds, so a pid reused meanwhile is never hit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._errors import SandboxError
from ._output import CappedBuffer

if TYPE_CHECKING:
    from ._backend import ExecChannel, Sink

__all__ = ["Kernel", "KernelLost", "KernelReply", "kernel_argv"]

_REQUEST: Final = struct.Struct(">II")
_FRAME: Final = struct.Struct(">BII")
_READY, _STARTED, _STDOUT, _STDERR, _DONE = 1, 2, 3, 4, 5
#: Largest frame the kernel sends; anything bigger means the channel is not speaking the
#: protocol (the code running in the kernel can write to it: it is read as untrusted).
_MAX_FRAME: Final = 1 << 20
#: The kernel's own answer (the ``DONE`` payload) is small.
_MAX_DONE: Final = 4096


def kernel_argv() -> list[str]:
    """The exec's command: the program's text on the command line (``-I``: no environment
    variables, no user site, no working directory on the import path while it starts; it
    puts the working directory first on the path itself, as ``python3 -`` does)."""
    source = Path(__file__).with_name("_kernel_program.py").read_text(encoding="utf-8")
    return ["python3", "-I", "-B", "-c", source]


class KernelLost(SandboxError):  # noqa: N818 - a condition, handled inside the pack
    """The kernel's channel ended or broke (``started``: after it had taken the call)."""

    def __init__(self, message: str, *, started: bool) -> None:
        super().__init__(message)
        self.started = started


@dataclass(frozen=True, slots=True)
class KernelReply:
    """How a call ended in the kernel: ``ok`` when the code ran to its end (its state is
    kept, pending until the call commits), the exit code, and why the process ended."""

    ok: bool
    exit_code: int
    timed_out: bool
    note: str


@dataclass(slots=True)
class _Proc:
    """One process of the kernel: its pid in the container, on the host, a pidfd, its
    threads (host tids, for the baseline) and the command mark of the call that made it."""

    pid: int
    host_pid: int
    pidfd: int
    tids: frozenset[int]
    mark: int = 0

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.pidfd)


def _status(tid: int) -> dict[str, str] | None:
    try:
        text = Path(f"/proc/{tid}/status").read_text()
    except OSError:
        return None
    return {k: v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}


def _locate(pid: int, candidates: frozenset[int], uid: int, parent: int | None) -> _Proc:
    """The process with container pid ``pid`` among the host tids ``candidates``, running as
    ``uid`` (and, if given, a child of host pid ``parent``)."""
    for tid in candidates:
        status = _status(tid)
        if status is None or status.get("Tgid") != str(tid):
            continue
        try:
            ns_pid = int(status["NSpid"].split()[-1])
            real_uid = int(status["Uid"].split()[0])
            ppid = int(status["PPid"])
        except (KeyError, ValueError, IndexError):
            continue
        if ns_pid != pid:
            continue
        if real_uid != uid or (parent is not None and ppid != parent):
            break
        pidfd = os.pidfd_open(tid)
        try:
            tids = frozenset(int(t) for t in os.listdir(f"/proc/{tid}/task"))
        except (OSError, ValueError):
            os.close(pidfd)
            break
        return _Proc(pid, tid, pidfd, tids)
    raise SandboxError(
        f"The Python kernel reported process {pid}, which is not a new process of uid {uid}"
        + ("" if parent is None else f" forked by the kernel (host pid {parent})")
        + " in the sandbox."
    )


@dataclass(slots=True)
class _Decoder:
    """The exec's stream 1: frames, dispatched to the current call's buffers."""

    pending: bytes = b""
    ready: dict[str, Any] | None = None
    broken: str = ""
    ident: int = 0
    out: CappedBuffer = field(default_factory=lambda: CappedBuffer(0))
    err: CappedBuffer = field(default_factory=lambda: CappedBuffer(0))
    started: bool = False
    done: dict[str, Any] | None = None

    def begin(self, ident: int, out: CappedBuffer, err: CappedBuffer) -> None:
        self.ident, self.out, self.err = ident, out, err
        self.started, self.done = False, None

    def finished(self) -> bool:
        return self.done is not None or bool(self.broken)

    def write(self, data: bytes) -> None:
        self.pending += data
        while len(self.pending) >= _FRAME.size and not self.broken:
            kind, ident, size = _FRAME.unpack_from(self.pending)
            if size > _MAX_FRAME:
                self.broken = f"a frame of {size} bytes"
                return
            end = _FRAME.size + size
            if len(self.pending) < end:
                return
            payload = self.pending[_FRAME.size : end]
            self.pending = self.pending[end:]
            self._frame(kind, ident, payload)

    def _frame(self, kind: int, ident: int, payload: bytes) -> None:
        if kind == _READY and self.ready is None:
            self.ready = self._json(payload, ("pid", "keeper"))
            return
        if ident != self.ident or self.done is not None:
            self.broken = f"a frame of kind {kind} for call {ident} out of turn"
            return
        if kind == _STDOUT:
            self.out.write(payload)
        elif kind == _STDERR:
            self.err.write(payload)
        elif kind == _STARTED:
            self.started = True
        elif kind == _DONE:
            self.done = self._json(payload, ("ok", "code", "timed_out", "note", "by", "pid"))
        else:
            self.broken = f"an unknown frame kind {kind}"

    def _json(self, payload: bytes, keys: tuple[str, ...]) -> dict[str, Any] | None:
        try:
            data = json.loads(payload) if len(payload) <= _MAX_DONE else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or not all(k in data for k in keys):
            self.broken = "a malformed answer"
            return None
        return data


class Kernel:
    """A running kernel: its keeper, its serving generation and the pending one (the state
    before the last successful call, until that call commits or is rolled back)."""

    def __init__(
        self, stream: ExecChannel, decoder: _Decoder, keeper: _Proc, serving: _Proc
    ) -> None:
        self._stream = stream
        self._decoder = decoder
        self._next = 0
        self.keeper = keeper
        self.serving = serving
        self.pending: _Proc | None = None
        #: Set once a call ran to its end here: there is state to lose.
        self.used = False

    @classmethod
    def open(
        cls,
        attach: Callable[[Sink, Sink], ExecChannel],
        deadline: float,
        candidates: Callable[[], frozenset[int]],
        uid: int,
    ) -> Kernel:
        """Attach to the created exec (``attach(stdout, stderr)``: the backend's
        ``attach_exec``), wait for the ready frame, and find the processes among
        ``candidates()`` (the cgroup's tasks outside the baseline, once it runs)."""
        decoder = _Decoder()
        log = CappedBuffer(2048)
        stream = attach(decoder, log)
        try:
            stream.pump(deadline, until=lambda: decoder.ready is not None or bool(decoder.broken))
            ready = decoder.ready
            if ready is None:
                raise SandboxError(
                    "The Python kernel did not start (is python3 with ctypes in the image?): "
                    f"{log.text().strip()[-300:] or decoder.broken or 'no output'}"
                )
            tasks = candidates()
            keeper = _locate(int(ready["keeper"]), tasks, uid, None)
            try:
                serving = _locate(int(ready["pid"]), tasks, uid, keeper.host_pid)
            except BaseException:
                keeper.close()
                raise
        except BaseException:
            stream.close()
            raise
        return cls(stream, decoder, keeper, serving)

    def tids(self) -> frozenset[int]:
        """The host thread ids of every process of the kernel."""
        procs = [self.keeper, self.serving] + ([self.pending] if self.pending else [])
        return frozenset().union(*(p.tids for p in procs))

    def run(
        self,
        code: str,
        *,
        timeout: float,
        out: CappedBuffer,
        err: CappedBuffer,
        deadline: float,
    ) -> dict[str, Any] | None:
        """Send one call; its ``DONE`` answer, or None when ``deadline`` passed first.
        Raises ``KernelLost`` when the channel ends or breaks."""
        self._next += 1
        decoder = self._decoder
        decoder.begin(self._next, out, err)
        body = json.dumps({"code": code, "timeout": timeout, "cap": out.limit}).encode()
        sent = self._stream.send(_REQUEST.pack(self._next, len(body)) + body, deadline)
        if sent:
            self._stream.pump(deadline, until=decoder.finished)
        if decoder.broken or self._stream.eof or (not sent and time.monotonic() < deadline):
            raise KernelLost(
                "The Python kernel ended"
                + (f" (it sent {decoder.broken})" if decoder.broken else "")
                + (" during the call" if decoder.started else ""),
                started=decoder.started,
            )
        done = decoder.done
        if done is not None:
            # Bytes the kernel read and did not relay past the cap count as dropped.
            for buffer, key in ((out, "stdout"), (err, "stderr")):
                with contextlib.suppress(TypeError, ValueError):
                    buffer.dropped += max(0, int(done.get(key, 0)) - buffer.limit - 1)
        return done

    def adopt(self, done: dict[str, Any], candidates: frozenset[int], uid: int, mark: int) -> None:
        """After a success: the new process becomes the serving generation, the old one
        pending (its threads stay in the baseline until ``commit``)."""
        if int(done["by"]) != self.serving.pid:
            raise SandboxError("The Python kernel answered from an unexpected process.")
        new = _locate(int(done["pid"]), candidates, uid, self.serving.host_pid)
        new.mark = mark
        self.pending, self.serving = self.serving, new
        self.used = True

    def check_failed(self, done: dict[str, Any]) -> None:
        """After a failure: the serving generation must have answered."""
        if int(done["by"]) != self.serving.pid or int(done["pid"]) != self.serving.pid:
            raise SandboxError("The Python kernel answered from an unexpected process.")

    def commit(self) -> frozenset[int]:
        """The last successful call stays: end the pending generation; its threads."""
        pending, self.pending = self.pending, None
        if pending is None:
            return frozenset()
        pending.kill()
        pending.close()
        return pending.tids

    def rollback(self) -> frozenset[int]:
        """Undo the last successful call: end the serving generation (the pending one, its
        parent, then serves again); its threads. Nothing when nothing is pending."""
        pending, self.pending = self.pending, None
        if pending is None:
            return frozenset()
        gone, self.serving = self.serving, pending
        gone.kill()
        gone.close()
        return gone.tids

    def close(self) -> None:
        """End every process of the kernel and close the channel."""
        for proc in (self.serving, self.pending, self.keeper):
            if proc is not None:
                proc.kill()
                proc.close()
        self.pending = None
        self._stream.close()


def reply_of(done: dict[str, Any]) -> KernelReply:
    """The typed view of a ``DONE`` answer (values checked; bad ones are a failure)."""
    try:
        return KernelReply(
            ok=done["ok"] is True,
            exit_code=int(done["code"]),
            timed_out=done["timed_out"] is True,
            note=str(done["note"])[:500],
        )
    except (TypeError, ValueError):
        return KernelReply(False, -1, False, "the kernel's answer was malformed")
