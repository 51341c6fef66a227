"""The Python kernel's program: runs in the sandbox, keeps one interpreter's state across calls.

Never imported by the host: ``_kernel`` reads this file's text and starts it with ``python3
-I -B -c`` in one long-lived exec as the command user. The exec's process is the *keeper*: it
forks the first *generation* and then only reaps (it is the subreaper of every generation, and
exits once none is left, which ends the exec). A generation serves requests on the exec's
stdin and stdout. For each call it forks a child that runs the code in a copy of its state,
with stdout and stderr on pipes the generation relays (capped), and kills it at the timeout.
When the code ran to its end, the child becomes the serving generation and its parent stays
blocked in ``waitpid`` until the host either kills it (the call committed) or kills the child
(the call was rolled back), when it serves again with the state from before the call. Every
process is non-dumpable: a shell command (same uid, no capability) can signal it but cannot
trace it or read its memory or file descriptors. Standard library only.

Host to kernel: ``>II`` (call id, JSON length), the JSON ``{"code", "timeout", "cap"}``.
Kernel to host: ``>BII`` (kind, call id, payload length) and the payload.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import linecache
import os
import select
import signal
import struct
import sys
import threading
import time
import traceback
import types

REQUEST = struct.Struct(">II")
FRAME = struct.Struct(">BII")
READY, STARTED, STDOUT, STDERR, DONE = 1, 2, 3, 4, 5
MAX_REQUEST = 8 << 20
_CHUNK = 65536
_DRAIN_READS = 64
_STATUS_MAX = 4096
_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
#: The kernel's own code: frames with this file name are left out of tracebacks.
_OWN = "<string>"


def _prctl(option: int, value: int) -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _read_exact(fd: int, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        chunk = os.read(fd, min(size - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class Generation:
    """One process holding the interpreter's state, serving calls."""

    def __init__(self, chan_in: int, chan_out: int, devnull: int) -> None:
        self.chan_in, self.chan_out, self.devnull = chan_in, chan_out, devnull
        self.cell = 0
        self.main = types.ModuleType("__main__")
        self.main.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = self.main
        # What ``python3 -`` puts first on the path (``-I`` left them out while the kernel's
        # own modules were imported): the working directory (/workspace), then PYTHONPATH.
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[0:0] = ["", *extra]
        sys.argv = ["-"]

    def send(self, kind: int, ident: int, payload: bytes = b"") -> None:
        view = memoryview(FRAME.pack(kind, ident, len(payload)) + payload)
        while view:
            view = view[os.write(self.chan_out, view) :]

    def serve(self) -> None:
        """Serve calls until the host closes the channel (then exit)."""
        while True:
            header = _read_exact(self.chan_in, REQUEST.size)
            if header is None:
                return
            ident, size = REQUEST.unpack(header)
            body = _read_exact(self.chan_in, size) if size <= MAX_REQUEST else None
            if body is None:
                return  # out of step: the host treats the kernel as lost
            request = json.loads(body)
            self.send(STARTED, ident)
            self.call(ident, str(request["code"]), float(request["timeout"]), int(request["cap"]))

    # ------------------------------------------------------------------ one call
    def call(self, ident: int, code: str, timeout: float, cap: int) -> None:
        """Run ``code`` in a forked child; returns in the child too when the code succeeded
        (it is then the serving generation)."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        deadline = time.monotonic() + timeout
        pid = os.fork()
        if pid == 0:
            for fd in (out_r, err_r, status_r):
                os.close(fd)
            if self.execute(code, out_w, err_w, status_w):
                return  # this process now holds the state after the call
            os._exit(1)
        for fd in (out_w, err_w, status_w):
            os.close(fd)
        self.supervise(ident, pid, deadline, cap, {out_r: STDOUT, err_r: STDERR}, status_r)

    def execute(self, code: str, out_w: int, err_w: int, status_w: int) -> bool:
        """In the child: run the code with fds 1 and 2 on the pipes; report; True on success."""
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")  # a memory bomb's process is the one the OOM killer picks
        os.dup2(self.devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
        self.cell += 1
        name = f"<python-{self.cell}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        exit_code = 0
        try:
            exec(compile(code, name, "exec"), self.main.__dict__)  # noqa: S102 - the point
        except SystemExit as exc:
            if isinstance(exc.code, int):
                # As an exit status: the low byte, but never 0 for a non-zero code (which
                # would pass for a success whose state the kernel keeps).
                exit_code = (exc.code & 0xFF or 1) if exc.code else 0
            elif exc.code is not None:
                print(exc.code, file=sys.stderr)
                exit_code = 1
        except BaseException as exc:  # noqa: BLE001 - reported like python3 does
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename == _OWN:
                tb = tb.tb_next
            traceback.print_exception(type(exc), exc, tb)
            exit_code = 1
        threads = threading.active_count() - 1
        if exit_code == 0 and threads:
            # A thread left running would change the state between calls (and after a later
            # call failed): the call fails instead.
            print(
                f"[python kernel: the code left {threads} thread(s) running; stop (join) them "
                "before the call ends. The call failed and its state was discarded.]",
                file=sys.stderr,
            )
            exit_code = 1
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()  # type: ignore[union-attr]
        os.dup2(self.devnull, 1)
        os.dup2(self.devnull, 2)
        status = json.dumps({"code": exit_code}).encode() + b"\n"
        with contextlib.suppress(OSError):
            os.write(status_w, status)
        os.close(status_w)
        return exit_code == 0

    def supervise(
        self,
        ident: int,
        pid: int,
        deadline: float,
        cap: int,
        streams: dict[int, int],
        status_r: int,
    ) -> None:
        """Relay the child's output (at most ``cap`` + 1 bytes a stream), enforce the
        timeout, report; after a success wait until the child is gone (rolled back)."""
        sizes = {STDOUT: 0, STDERR: 0}
        status = b""
        reported: int | None = None
        waited: int | None = None
        timed_out = False
        pidfd = os.pidfd_open(pid)
        for fd in streams:
            os.set_blocking(fd, False)

        def relay(fd: int) -> bool:
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                return True
            if not data:
                return False
            kind = streams[fd]
            room = cap + 1 - sizes[kind]
            if room > 0:
                self.send(kind, ident, data[:room])
            sizes[kind] += len(data)
            return True

        while reported is None and waited is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            readers = [*streams, pidfd] + ([status_r] if status_r >= 0 else [])
            ready, _, _ = select.select(readers, [], [], remaining)
            for fd in ready:
                if fd == pidfd:
                    waited = os.waitpid(pid, 0)[1]
                elif fd == status_r:
                    data = os.read(status_r, _STATUS_MAX)
                    status += data
                    if not data or b"\n" in status or len(status) > _STATUS_MAX:
                        os.close(status_r)
                        status_r = -1
                        with contextlib.suppress(ValueError, TypeError, KeyError):
                            reported = int(json.loads(status)["code"])
                        if reported is None:
                            reported = -1  # the code closed or garbled the status pipe
                elif not relay(fd):
                    del streams[fd]
        ok = reported == 0 and waited is None and not timed_out
        if not ok and waited is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            waited = os.waitpid(pid, 0)[1]
        for fd in list(streams):
            for _ in range(_DRAIN_READS):
                if not relay(fd):
                    break
            os.close(fd)
        if status_r >= 0:
            os.close(status_r)
        os.close(pidfd)
        note = ""
        if ok:
            code = 0
        elif timed_out:
            code = 137
        elif reported not in (None, -1, 0):
            code = reported  # an exception (1) or sys.exit(n)
        elif waited is not None and os.WIFSIGNALED(waited):
            sig = os.WTERMSIG(waited)
            code = 128 + sig
            note = f"the call's process was killed by signal {sig}" + (
                " (out of memory, or killed from outside)" if sig == signal.SIGKILL else ""
            )
        else:
            status_code = os.WEXITSTATUS(waited) if waited is not None else 1
            code = status_code or 1
            note = f"the code ended the call's process (exit status {status_code})"
        done = {
            "ok": ok,
            "code": code,
            "timed_out": timed_out,
            "note": note,
            "by": os.getpid(),
            "pid": pid if ok else os.getpid(),
            "stdout": sizes[STDOUT],
            "stderr": sizes[STDERR],
        }
        self.send(DONE, ident, json.dumps(done).encode())
        if ok:
            # Pending: the host kills this process when the call commits, or the child when
            # it is rolled back; then this process serves again with the state before it.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def main() -> None:
    """The keeper: fork the first generation, then reap until no generation is left."""
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    chan_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 10)
    chan_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 10)
    devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    # Once here rather than in every failing call's child, whose imports are thrown away:
    # formatting a traceback imports ast (~0.1 s) for its carets.
    linecache.cache["<warm-up>"] = (6, None, ["1 / 0\n"], "<warm-up>")
    try:
        exec(compile("1 / 0", "<warm-up>", "exec"), {})  # noqa: S102 - a constant
    except ZeroDivisionError as exc:
        traceback.format_exception(exc)
    del linecache.cache["<warm-up>"]
    keeper = os.getpid()
    pid = os.fork()
    if pid == 0:
        generation = Generation(chan_in, chan_out, devnull)
        generation.send(READY, 0, json.dumps({"pid": os.getpid(), "keeper": keeper}).encode())
        generation.serve()
        os._exit(0)
    os.close(chan_in)
    os.close(chan_out)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


if __name__ == "__main__":
    main()
