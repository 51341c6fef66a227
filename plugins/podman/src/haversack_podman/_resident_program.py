"""The resident executor's program: runs in the sandbox, starts each command, streams it back.

Never imported by the host: ``_resident`` reads this file's text and starts it with
``python3 -I -S -B -c`` in one long-lived exec as container root holding only CAP_SETUID and
CAP_SETGID (and no-new-privileges), so the program is in no file a command could replace.
Each command runs as the configured uid:gid with no supplementary groups, in a new session,
with its own pipes (``close_fds``): it holds no capability, cannot signal or ptrace this
process (another uid) and never sees its channel. Everything a command prints reaches the
host inside this program's frames, so a command cannot forge one. Standard library only.

Host to resident, on stdin: ``>III`` (command id, JSON length, stdin length or ``NO_STDIN``),
the JSON ``{"argv", "env", "cwd", "uid", "gid"}``, then the stdin bytes. Resident to host, on
stdout: ``>BII`` (kind, command id, payload length) and the payload.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pwd
import select
import struct
import subprocess
import sys

REQUEST = struct.Struct(">III")
FRAME = struct.Struct(">BII")
NO_STDIN = 0xFFFFFFFF
READY, STARTED, STDOUT, STDERR, EXIT, FAILED = 1, 2, 3, 4, 5, 6
_CHUNK = 65536
#: Reads per stream after the command exited: what it wrote before it ended is in the pipe;
#: a descendant that keeps writing must not hold the result back (the sweep kills it).
_DRAIN_READS = 64


def _send(kind: int, ident: int, payload: bytes = b"") -> None:
    view = memoryview(FRAME.pack(kind, ident, len(payload)) + payload)
    while view:
        view = view[os.write(1, view) :]


def _read_exact(size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        chunk = os.read(0, min(size - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _home(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return "/"


def _environment(pairs: list[str], uid: int) -> dict[str, str]:
    # What an engine exec as that user sees: the container's environment, the user's HOME,
    # then the call's variables.
    env = dict(os.environ)
    env["HOME"] = _home(uid)
    for pair in pairs:
        key, _, value = pair.partition("=")
        env[key] = value
    return env


def _drain(fd: int, kind: int, ident: int) -> None:
    for _ in range(_DRAIN_READS):
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if not data:
            return
        _send(kind, ident, data)


def _run(ident: int, request: dict[str, object], stdin: bytes | None) -> None:
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    uid, gid = int(request["uid"]), int(request["gid"])  # type: ignore[call-overload]
    # Before the fork: once the host has this, a lost channel may have run the command, and
    # the host must not run it again.
    _send(STARTED, ident)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=str(request["cwd"]),
            env=_environment([str(p) for p in request["env"]], uid),  # type: ignore[attr-defined]
            user=uid,
            group=gid,
            extra_groups=[],
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            start_new_session=True,
        )
    except OSError as exc:
        code = 127 if exc.errno == errno.ENOENT else 126
        message = f"{argv[0]}: {exc.strerror or exc}"
        _send(FAILED, ident, json.dumps({"code": code, "message": message}).encode())
        return
    assert proc.stdout is not None
    assert proc.stderr is not None
    streams = {proc.stdout.fileno(): STDOUT, proc.stderr.fileno(): STDERR}
    for fd in streams:
        os.set_blocking(fd, False)
    writer = None if proc.stdin is None else proc.stdin.fileno()
    pending = memoryview(stdin or b"")
    if writer is not None:
        os.set_blocking(writer, False)
        if not pending:
            proc.stdin.close()  # type: ignore[union-attr]
            writer = None
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None  # polled instead
    exited = False
    while not exited:
        readers = list(streams) + ([pidfd] if pidfd is not None else [])
        writers = [writer] if writer is not None else []
        ready, writable, _ = select.select(
            readers, writers, [], None if pidfd is not None else 0.005
        )
        if writable and writer is not None:
            try:
                pending = pending[os.write(writer, pending[:_CHUNK]) :]
            except BlockingIOError:
                pass
            except OSError:
                pending = memoryview(b"")  # the command stopped reading
            if not pending:
                proc.stdin.close()  # type: ignore[union-attr]
                writer = None
        for fd in ready:
            if fd == pidfd:
                exited = True
                continue
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if data:
                _send(streams[fd], ident, data)
            else:
                del streams[fd]
        if pidfd is None and proc.poll() is not None:
            exited = True
    for fd, kind in streams.items():
        _drain(fd, kind, ident)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    if pidfd is not None:
        os.close(pidfd)
    code = proc.wait()
    _send(EXIT, ident, struct.pack(">i", 128 - code if code < 0 else code))


def main() -> None:
    """Serve commands until the host closes the channel."""
    os.chdir("/")
    _send(READY, 0, struct.pack(">i", os.getpid()))
    while True:
        header = _read_exact(REQUEST.size)
        if header is None:
            return
        ident, size, stdin_size = REQUEST.unpack(header)
        body = _read_exact(size)
        stdin = None if stdin_size == NO_STDIN else _read_exact(stdin_size)
        if body is None or (stdin_size != NO_STDIN and stdin is None):
            return
        try:
            _run(ident, json.loads(body), stdin)
        except Exception as exc:  # noqa: BLE001 - reported, and the next command still runs
            _send(FAILED, ident, json.dumps({"code": -1, "message": repr(exc)}).encode())
        sys.stdout.flush()


if __name__ == "__main__":
    main()
