"""The supervisor each stdio server runs under: its whole process tree dies with it.

Run as ``python -I -S _reaper.py COMMAND [ARGS...]`` (standard library only, nothing of
Haversack imported). It becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every
process the server starts, a double-forked ``setsid`` daemon included, is reparented to it
rather than to init, and stays its descendant. It runs the server on the pipes it was
given and keeps none of them itself. When the server exits, when it is sent SIGTERM,
SIGINT or SIGHUP (the SDK's shutdown signals the process group), or when its parent dies,
it kills every descendant with SIGKILL, reaps them, and exits with the server's status.
The process group alone misses daemons, which leave it with ``setsid``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36
_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
#: How long the server has to exit by itself once this supervisor is asked to stop.
_GRACE_S = 1.0


def _children_of(parent: int) -> list[int]:
    """Pids whose parent is ``parent`` (from /proc; needs no kernel option)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name, in parentheses, may hold spaces: fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry))
    return found


def _descendants() -> list[int]:
    me = os.getpid()
    out: list[int] = []
    todo = [me]
    while todo:
        pid = todo.pop()
        kids = _children_of(pid)
        out.extend(kids)
        todo.extend(kids)
    return out


def _kill_all() -> None:
    """SIGKILL every descendant until none is left (orphans keep coming back to us)."""
    for _ in range(1000):
        pids = _descendants()
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap(block=True)
    _reap(block=False)


def _reap(*, block: bool) -> list[tuple[int, int]]:
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, 0 if block and not done else os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        done.append((pid, status))
    return done


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        sys.stderr.write("usage: _reaper.py COMMAND [ARGS...]\n")
        return 2
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    parent = os.getppid()
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        server = os.fork()
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[0]}: {exc}\n")
        return 127
    if server == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
        try:
            os.execvp(argv[0], argv)  # noqa: S606 - the configured server, as the SDK runs it
        except OSError as exc:
            sys.stderr.write(f"cannot start {argv[0]}: {exc}\n")
        os._exit(127)
    # Keep no copy of the pipes: the server's EOF and the client's EOF are theirs alone.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    code: int | None = None
    stop_at: float | None = None
    import time

    while True:
        info = signal.sigtimedwait(_SIGNALS, 0.5)
        for pid, status in _reap(block=False):
            if pid == server:
                code = os.waitstatus_to_exitcode(status)
        if code is not None:
            break
        if info is not None and info.si_signo != signal.SIGCHLD and stop_at is None:
            stop_at = time.monotonic() + _GRACE_S
            with contextlib.suppress(ProcessLookupError):
                os.kill(server, signal.SIGTERM)
        if os.getppid() != parent:
            break  # the client died without stopping us
        if stop_at is not None and time.monotonic() >= stop_at:
            break
    _kill_all()
    if code is None:
        code = -signal.SIGTERM
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
