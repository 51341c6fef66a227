"""``ContainerCgroup``: a running container's cgroup seen from the host: freeze, thaw, list, kill.

Killing by process group or session misses what a hostile command can make: a process whose
main thread exited (a zombie leader) while another thread runs, hundreds of ``setsid``
sessions, a fork flood. The container's cgroup holds every one of them. Frozen, none can run
or fork, so its task list is complete and stays valid (a frozen task cannot exit, so its pid
cannot be reused) until the kill is sent. cgroup v1 uses the ``freezer`` hierarchy
(``freezer.state``, ``tasks``); cgroup v2 uses ``cgroup.freeze``, ``cgroup.events`` and
``cgroup.threads``. Both are found from the init pid's ``/proc/<pid>/cgroup`` and the mount
table, so nothing is tied to one host layout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = ["ContainerCgroup", "children_of"]

_POLL_S: Final = 0.0005
_MOUNTINFO: Final = Path("/proc/self/mountinfo")


def _mounts() -> tuple[dict[str, tuple[str, str]], tuple[str, str] | None]:
    """v1 controller -> (mount point, mount root), and the v2 (mount point, mount root)."""
    v1: dict[str, tuple[str, str]] = {}
    v2: tuple[str, str] | None = None
    try:
        lines = _MOUNTINFO.read_text().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point, fstype = fields[3], fields[4], tail[0]
        if fstype == "cgroup2" and v2 is None:
            v2 = (point, root)
        elif fstype == "cgroup":
            for option in tail[2].split(","):
                v1.setdefault(option, (point, root))
    return v1, v2


def _under(mount: tuple[str, str], path: str) -> Path | None:
    point, root = mount
    if root == "/":
        rel = path
    elif path == root or path.startswith(root + "/"):
        rel = path[len(root) :]
    else:
        return None  # the cgroup is outside what this mount shows
    return Path(point) / rel.lstrip("/")


def _run_state(tid: int) -> str | None:
    try:
        stat = Path(f"/proc/{tid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat.rsplit(")", 1)[1].split()[0]


def children_of(parent: int, tids: Iterable[int], uid: int) -> frozenset[int]:
    """The tasks among ``tids`` whose parent is ``parent`` and that run as ``uid``."""
    found = set()
    for tid in tids:
        try:
            status = Path(f"/proc/{tid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        ppid = int(fields.get("PPid", "0").strip() or 0)
        uids = fields.get("Uid", "").split()
        if ppid == parent and uids[:1] == [str(uid)]:
            found.add(tid)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class ContainerCgroup:
    """The freezable cgroup directory of one container (``version`` 1: freezer hierarchy)."""

    path: Path
    version: Literal[1, 2]

    @classmethod
    def locate(
        cls, init_pid: int, *, version: Literal[1, 2] | None = None
    ) -> ContainerCgroup | None:
        """The cgroup of the process ``init_pid`` (host pid), or None when it is gone or the
        host has no usable freezer. ``version`` forces one hierarchy (tests; hybrid hosts
        have both)."""
        try:
            lines = Path(f"/proc/{init_pid}/cgroup").read_text().splitlines()
        except OSError:
            return None
        v1, v2 = _mounts()
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if version in (None, 1) and "freezer" in controllers.split(","):
                mount = v1.get("freezer")
                found = None if mount is None else _under(mount, path)
                if found is not None and (found / "freezer.state").exists():
                    return cls(found, 1)
        if version in (None, 2) and v2 is not None:
            for line in lines:
                if line.startswith("0::"):
                    found = _under(v2, line[3:])
                    # The root cgroup cannot be frozen: a container must have its own.
                    if found is not None and (found / "cgroup.freeze").exists():
                        return cls(found, 2)
        return None

    # ------------------------------------------------------------------ state
    def tasks(self) -> frozenset[int]:
        """Every thread id in the cgroup (threads, not processes: a zombie leader's live
        threads are listed though the leader is not). Empty when the cgroup is gone."""
        name = "tasks" if self.version == 1 else "cgroup.threads"
        try:
            return frozenset(int(x) for x in (self.path / name).read_text().split())
        except (OSError, ValueError):
            return frozenset()

    def frozen(self) -> bool:
        """Whether every task in the cgroup is frozen now."""
        try:
            if self.version == 1:
                return (self.path / "freezer.state").read_text().strip() == "FROZEN"
            return "frozen 1" in (self.path / "cgroup.events").read_text().splitlines()
        except OSError:
            return False

    def exists(self) -> bool:
        """Whether the cgroup directory still exists (the container runs)."""
        return self.path.is_dir()

    def describe(self) -> str:
        """The freezer state and the run states of the tasks, for error messages."""
        name = "freezer.state" if self.version == 1 else "cgroup.events"
        try:
            state = " ".join((self.path / name).read_text().split())
        except OSError:
            state = "gone"
        counts: dict[str, int] = {}
        for tid in self.tasks():
            run_state = _run_state(tid) or "gone"
            counts[run_state] = counts.get(run_state, 0) + 1
        tasks = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
        return f"{state}; tasks: {tasks}"

    # ------------------------------------------------------------------ changes
    def _write(self, value_v1: str, value_v2: str) -> bool:
        name, value = (
            ("freezer.state", value_v1) if self.version == 1 else ("cgroup.freeze", value_v2)
        )
        try:
            (self.path / name).write_text(value)
        except OSError:
            return False
        return True

    def freeze(self, deadline: float) -> bool:
        """Freeze every task and wait (until ``time.monotonic()`` reaches ``deadline``) until
        the kernel reports them all frozen. True when frozen."""
        if not self._write("FROZEN", "1"):
            return False
        while not self.frozen():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
            if self.version == 1:
                # v1 can stay FREEZING when a task was busy at the first attempt: ask again.
                self._write("FROZEN", "1")
        return True

    def thaw(self) -> bool:
        """Let the tasks run again. False when the cgroup is gone."""
        return self._write("THAWED", "0")

    def kill(self, tids: Iterable[int]) -> int:
        """SIGKILL each thread's process; the caller froze the cgroup first, so no tid can have
        been reused. Returns how many signals were sent."""
        sent = 0
        for tid in tids:
            # kill() on a thread id signals its whole thread group: that is what kills a
            # process whose leader is already a zombie.
            with contextlib.suppress(ProcessLookupError):
                os.kill(tid, signal.SIGKILL)
                sent += 1
        return sent

    def sweep(self, keep: frozenset[int], deadline: float) -> bool:
        """Kill every task except ``keep`` and leave the cgroup frozen.

        Frozen, the cgroup's task list is complete and nothing in it can fork; the kill is
        sent, the cgroup is thawed so the killed tasks exit, and it is frozen again to check.
        Rounds repeat until only ``keep`` remains or ``deadline`` passes. True when exactly
        ``keep`` is left (the baseline alive, nothing else) and the cgroup is frozen.
        """
        while True:
            if not self.exists():
                return False  # the container stopped: its baseline is gone too
            frozen = self.freeze(deadline)
            tasks = self.tasks()
            extra = tasks - keep
            if frozen and not extra:
                return tasks == keep
            self.kill(extra)
            self.thaw()
            self._wait_gone(extra, deadline)
            if time.monotonic() >= deadline:
                self.freeze(time.monotonic() + 0.05)
                return False

    def _wait_gone(self, tids: frozenset[int], deadline: float) -> None:
        while tids & self.tasks() and time.monotonic() < deadline:
            time.sleep(_POLL_S)
