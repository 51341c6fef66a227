"""Host-side killing of an exec's process group, restricted to the container's own processes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

__all__ = ["container_procs", "kill_group", "live_pgrp"]


def _cgroup_procs_file(init_pid: int) -> Path | None:
    try:
        lines = Path(f"/proc/{init_pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return Path("/sys/fs/cgroup/pids") / path.lstrip("/") / "cgroup.procs"
    for line in lines:
        if line.startswith("0::"):
            return Path("/sys/fs/cgroup") / line[3:].lstrip("/") / "cgroup.procs"
    return None


def container_procs(init_pid: int) -> list[int]:
    """Host pids of every process in the container whose init has host pid ``init_pid``."""
    procs = _cgroup_procs_file(init_pid)
    if procs is None:
        return []
    try:
        return [int(x) for x in procs.read_text().split()]
    except OSError:
        return []


def live_pgrp(pid: int) -> int | None:
    """The process group of ``pid``, or None when it is gone or already a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: fields start after the last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else int(fields[2])


def kill_group(init_pid: int, pgid: int, *, rounds: int = 20) -> int:
    """SIGKILL process group ``pgid`` if (and while) it has members inside the container.

    The check keeps a recycled pid from ever aiming the kill at a host process. ``killpg`` is
    atomic with respect to ``fork``, so a fork bomb in the group cannot outrun it. Returns the
    number of ``killpg`` calls made.
    """
    calls = 0
    for _ in range(rounds):
        members = [p for p in container_procs(init_pid) if p != init_pid and live_pgrp(p) == pgid]
        if not members:
            break
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            break
        calls += 1
    return calls
