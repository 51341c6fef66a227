"""``Sandbox``: one locked-down, long-lived container per session, and commands run in it.

The container's life (create, start, restart, freeze, remove) is ``Container``
(``_container``); this module runs one command in it and reports the outcome.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from haversack import check_cancelled, uninterruptible
from haversack.errors import PathNotFoundError, ToolValidationError
from haversack.filesystem import normalize_path

from ._backend import ExecRequest, SandboxSpec
from ._container import SWEEP_S, WORKDIR, Container
from ._errors import SandboxError
from ._output import CappedBuffer
from ._resident import Resident, ResidentLost, resident_argv

if TYPE_CHECKING:
    from ._config import SandboxConfig
    from ._mirror import Record
    from ._service import PodmanService

__all__ = ["ExecResult", "Sandbox"]

#: How long the output stream may take to end once its command was killed.
_GRACE_S: Final = 0.3
#: Empties the container's temporary directories after a failed call (as the command user,
#: who owns everything there and may first make it writable again).
_WIPE: Final = (
    # Each entry on its own: BusyBox's chmod -R gives up on /tmp itself (root's), never
    # reaching a directory a command made unreadable.
    "find /tmp /dev/shm -mindepth 1 -maxdepth 1 -exec chmod -R u+rwx {} + 2>/dev/null; "
    "find /tmp /dev/shm -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null; "
    'test -z "$(find /tmp /dev/shm -mindepth 1 | head -n 1)" && echo empty'
)
_WIPE_S: Final = 5.0
#: How long the resident executor may take to start (python's start-up in the container).
_RESIDENT_S: Final = 10.0


@dataclass(slots=True)
class _Ending:
    """How a command ended, before the sweep after it: ``quiet`` when the sweep already ran."""

    exit_code: int
    timed_out: bool = False
    quiet: bool = False
    restarted: bool = False


def _ns_pid_and_uid(tid: int) -> tuple[int, int] | None:
    """A host task's pid in its innermost pid namespace and its real uid."""
    try:
        status = Path(f"/proc/{tid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    try:
        return int(fields["NSpid"].split()[-1]), int(fields["Uid"].split()[0])
    except (KeyError, ValueError, IndexError):
        return None


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of one command: exit code (137 = killed, e.g. timeout or OOM), decoded
    output, wall time, whether it timed out or had output cut, and whether the container had
    to be restarted (``sandbox_restarted``: ``/tmp`` emptied, every process gone, the
    workspace kept) because it could not be brought back to its idle state otherwise."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandbox_restarted: bool = False
    #: Why the sandbox was restarted, when not for what the command left running (e.g. its
    #: container had been removed from outside and was created anew).
    restart_reason: str = ""
    #: With a user's workspace directory: the protected paths the command changed, with why
    #: (then none of its changes reached the directory), the paths someone else changed
    #: meanwhile (their version was kept), and changes never copied out, with why.
    refused: tuple[tuple[str, str], ...] = ()
    kept: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


def _check_env(env: Mapping[str, str]) -> list[str]:
    pairs: list[str] = []
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or not isinstance(value, str) or "\0" in value:
            raise ToolValidationError(
                f"Environment variable {key!r} has an invalid name or value (no '=', no NUL).",
                field_path="env",
            )
        pairs.append(f"{key}={value}")
    return pairs


class Sandbox(Container):
    """A session's sandbox: a host workspace directory bind-mounted at ``/workspace`` (for a
    user's own directory, a private copy of it: see ``_mirror``) and a
    container created on the first ``exec`` (or ``start``), reused, removed by ``close``.

    The container runs ``sleep infinity`` under ``--init`` (both as an unprivileged user of
    their own, so commands can neither signal nor trace them) with no network, no
    capabilities, no-new-privileges, a read-only root, a tmpfs ``/tmp`` and memory, CPU and
    pids limits. Commands run one at a time. The workspace is created at construction (so
    file tools can use it before any command) with ``config.mounts`` copied in.

    Commands start through a resident process in the container (``_resident``; one engine
    exec per command when it cannot run, see ``resident_off``).

    **No process outlives its command, and none runs between commands.** After every command
    the container's cgroup is frozen, every task other than init, ``sleep infinity`` and the
    resident is killed, and it stays frozen until the next command starts (with a remote
    service: the command user's processes are killed with ``kill -9 -1`` from a second exec
    and the container is paused through the engine). If it cannot be brought back to that baseline
    within a second, it is restarted and the result says so. :meth:`quiesced` is the
    guarantee the host-side file tools rely on.
    """

    def __init__(
        self, config: SandboxConfig | None = None, *, service: PodmanService | None = None
    ) -> None:
        super().__init__(config, service=service)
        self._commands = 0  # commands run so far: the transaction mark (snapshot)
        protected = self.config.protected_paths()

        def protect(rel: str) -> str | None:
            rule = protected.match(rel)
            return None if rule is None else f"{rel} is protected: {rule.reason}"

        self._protect = protect
        self._record: Record | None = None
        self._resident: Resident | None = None
        self._resident_tids: frozenset[int] = frozenset()
        #: Why commands go through one engine exec each instead of the resident executor
        #: (None: they go through the resident).
        self.resident_off: str | None = None

    def attach_journal(self, record: Record) -> None:
        """Write a user's directory back through ``record`` (the ``record`` method of the
        workspace filesystem's change journal), so that rolling back a failed call undoes
        exactly the command's write-back and nothing anyone else did."""
        self._record = record

    def exec(
        self,
        command: str | Sequence[str],
        *,
        cwd: str = "",
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult:
        """Run ``command`` (a shell string for ``/bin/sh -c``, or an argv) in the sandbox.

        ``cwd`` is workspace-relative; ``env`` extends the configured environment; ``stdin``
        is fed as UTF-8 then closed; ``timeout_s`` is clamped to the config's maximum. On a
        timeout the command and everything it started are killed (exit code 137,
        ``timed_out``) and the call returns within about ``timeout_s`` + 2 s. No process
        outlives its command; if the container cannot be brought back to its idle state it
        is restarted and ``sandbox_restarted`` is set.
        """
        if self._state.closed:
            raise SandboxError(f"Sandbox {self.name} is closed; create a new one.")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not argv or not all(isinstance(a, str) for a in argv) or any("\0" in a for a in argv):
            raise ToolValidationError(
                "command must be a non-empty string or list of strings without NUL characters.",
                field_path="command",
            )
        rel = normalize_path(cwd)
        merged = {**self.config.env, **(env or {})}
        env_pairs = _check_env(merged)
        timeout = self.config.clamp_timeout(timeout_s)
        # Not cut short by a cancellation (an MCP client's): the command and whatever it
        # started are always killed and the container frozen again before the call ends.
        # The waits inside check for it instead, and stop early.
        with uninterruptible(), self._lock:
            self.start()
            check_cancelled()  # a first start can take seconds: do not run the command then
            # Checked while the container is quiet: nothing can swap the directory meanwhile.
            # (A workspace on the engine: the command itself fails on a missing directory.)
            if self._workspace is not None and not (self._workspace / rel).is_dir():
                raise PathNotFoundError(
                    f"Working directory {rel or '.'!r} does not exist in the "
                    "workspace; create it first.",
                    path=rel,
                )
            mirror = self._mirror
            if mirror is not None:
                mirror.sync()
            self._commands += 1
            self._state.lost = None  # a recreation this command meets is told with its result
            try:
                try:
                    done = self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=False)
                except SandboxError:
                    # A dead container (or an exec podman refuses) makes exec fail before the
                    # command runs: reset the container once and retry.
                    reason = self._recover()
                    done = self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=True)
                    done = dataclasses.replace(done, restart_reason=reason)
            except BaseException:
                if mirror is not None:
                    # No result, so nothing is written back: the copy returns to the user's.
                    with contextlib.suppress(Exception):
                        mirror.revert()
                raise
            if mirror is None:
                return done
            # The container is quiet again: the copy holds exactly what the command left.
            back = mirror.write_back(self._protect, self._record)
            return dataclasses.replace(
                done, refused=back.refused, kept=back.kept, skipped=back.skipped
            )

    # ------------------------------------------------------------------ transactions
    def snapshot(self) -> int:
        """A cheap mark for the executor's transaction: how many commands have run."""
        return self._commands

    def restore(self, snapshot: object) -> None:
        """After a failed call that ran a command: empty ``/tmp`` and ``/dev/shm`` in the
        container (restarting it if that fails), so a failed call leaves nothing behind for
        the next one. The workspace is the filesystem's to roll back. Never raises."""
        if snapshot == self._commands or self._state.closed:
            return
        with contextlib.suppress(Exception), uninterruptible(), self._lock:
            if self._state.container_id is None or not self._state.started:
                return
            try:
                self._resume()
                out = self._wipe(time.monotonic() + _WIPE_S)
            except Exception:  # noqa: BLE001 - restarted below
                out = CappedBuffer(256)
            quiet = self._quiesce(time.monotonic() + SWEEP_S)
            if not quiet or out.text().strip() != "empty":
                self.restart()

    def _wipe(self, deadline: float) -> CappedBuffer:
        """Run ``_WIPE`` as the command user: through the resident (a failed call then costs
        no extra engine exec), else, or if it is lost, through an exec of its own."""
        argv = ["/bin/sh", "-c", _WIPE]
        out = CappedBuffer(256)
        resident = self._resident_ready()
        if resident is not None:
            try:
                resident.run(
                    argv,
                    cwd="/",
                    env=[],
                    uid=self.config.uid,
                    gid=self.config.gid,
                    stdin=None,
                    out=out,
                    err=out,
                    deadline=deadline,
                )
            except ResidentLost:
                self._drop_resident()
            else:
                if not resident.in_step:
                    self._drop_resident()
                return out  # not "empty" after a timeout: the caller restarts
            out = CappedBuffer(256)
        self._run_quietly(argv, deadline, out)
        return out

    def _exec_once(
        self,
        argv: list[str],
        rel: str,
        env_pairs: list[str],
        stdin: str | None,
        timeout: float,
        *,
        restarted: bool,
    ) -> ExecResult:
        cwd = f"{WORKDIR}/{rel}" if rel else WORKDIR
        data = None if stdin is None else stdin.encode("utf-8")
        out = CappedBuffer(self.config.output_limit_bytes)
        err = CappedBuffer(self.config.output_limit_bytes)
        started = time.monotonic()
        ending: _Ending | None = None
        try:
            self._resume()
            for _attempt in range(2):
                resident = self._resident_ready()
                if resident is None:
                    break
                started = time.monotonic()  # a first start of the resident is not the command's
                try:
                    ending = self._run_resident(
                        resident, argv, cwd, env_pairs, data, out, err, started + timeout
                    )
                    break
                except ResidentLost:
                    continue  # it ended before starting the command: a new one runs it
            if ending is None:
                started = time.monotonic()
                ending = self._run_exec(argv, cwd, env_pairs, data, out, err, started + timeout)
        finally:
            # Whatever happened above, nothing the command started may keep running.
            if (ending is None or not ending.quiet) and not self._quiesce(
                time.monotonic() + SWEEP_S
            ):
                self.restart()
                restarted = True
        return ExecResult(
            exit_code=ending.exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - started,
            timed_out=ending.timed_out,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            sandbox_restarted=restarted or ending.restarted,
        )

    def _after_timeout(self) -> bool:
        """Kill what the timed-out command left; True when the container had to be restarted."""
        if self._quiesce(time.monotonic() + SWEEP_S):
            return False
        self.restart()
        return True

    # ------------------------------------------------------------------ resident executor
    def _spec(self) -> SandboxSpec:
        spec = super()._spec()
        if self._resident_wanted():
            # Only for the resident (container root, which no command is: see
            # _resident_wanted) to switch to the command user; a non-root exec holds none.
            spec = dataclasses.replace(spec, cap_add=("SETUID", "SETGID"))
        return spec

    def _resident_wanted(self) -> bool:
        # As uid 0 a command would share the resident's uid and could signal or trace it.
        return self.config.resident and self.config.uid != 0

    def _settle(self) -> None:
        # A (re)start ended the resident with every other process: the next command starts
        # one, also after one that failed to start (the container may have been the cause).
        self._forget_resident()
        self.resident_off = None
        super()._settle()

    def close(self) -> None:
        """Remove the container and the workspace directory (idempotent)."""
        with self._lock:
            self._forget_resident()
            super().close()

    def _forget_resident(self) -> None:
        resident, self._resident = self._resident, None
        self._resident_tids = frozenset()
        if resident is not None:
            resident.close()

    def _drop_resident(self) -> None:
        """Close a resident that is out of step or gone, and take it out of the baseline so
        the next sweep kills it if it still runs."""
        if self._resident is None:
            return
        if self._state.cgroup is not None:
            self._baseline = self._baseline - self._resident_tids
        else:
            self._baseline_count -= 1
        self._forget_resident()

    def _resident_ready(self) -> Resident | None:
        """The running resident, started (and added to the baseline) if there is none; None
        when commands go through one engine exec each (see ``resident_off``)."""
        if self._resident is not None and not self._resident.in_step:
            self._drop_resident()  # a cancelled call left half a request in its channel
        if self._resident is not None:
            return self._resident
        if self.resident_off is not None:
            return None
        if not self._resident_wanted():
            self.resident_off = (
                "off in the config" if not self.config.resident else "commands run as uid 0"
            )
            return None
        # An exec the engine refuses (a dead container) is raised: ``exec`` recovers the
        # container and retries, and the restart lets a resident be tried again.
        exec_id = self._create_exec(ExecRequest(tuple(resident_argv()), "0:0", stdin=True))
        try:
            self._resident = self._start_resident(exec_id)
        except SandboxError as exc:
            self.resident_off = str(exc)
            return None
        return self._resident

    def _start_resident(self, exec_id: str) -> Resident:
        resident = Resident.open(
            lambda out, err: self._backend.attach_exec(exec_id, None, out, err),
            time.monotonic() + _RESIDENT_S,
        )
        cgroup = self._state.cgroup
        if cgroup is None:
            self._baseline_count += 1
            return resident
        # Its task is the new one with its pid in the container's namespace and uid 0 (a
        # resident killed just before may still be exiting; the sweep removes it).
        new = cgroup.tasks() - self._baseline
        tids = frozenset(t for t in new if _ns_pid_and_uid(t) == (resident.pid, 0))
        if len(tids) != 1:
            resident.close()
            raise SandboxError(f"The resident executor was not among the new tasks {new}.")
        self._resident_tids = frozenset(tids)
        self._baseline = self._baseline | tids
        return resident

    def _run_resident(
        self,
        resident: Resident,
        argv: list[str],
        cwd: str,
        env_pairs: list[str],
        stdin: bytes | None,
        out: CappedBuffer,
        err: CappedBuffer,
        deadline: float,
    ) -> _Ending:
        try:
            exit_code = resident.run(
                argv,
                cwd=cwd,
                env=env_pairs,
                uid=self.config.uid,
                gid=self.config.gid,
                stdin=stdin,
                out=out,
                err=err,
                deadline=deadline,
            )
        except ResidentLost as lost:
            self._drop_resident()
            if not lost.started:
                raise
            err.write(b"\n[sandbox: the command runner ended during the command]\n")
            return _Ending(-1)
        if exit_code is not None:
            return _Ending(exit_code)
        if not resident.in_step:
            self._drop_resident()  # it holds half a request: the sweep below ends it
        # Killed at its timeout; the resident (in the baseline) survives the sweep and
        # reports the kill to nobody: its late frames carry the old command's id.
        return _Ending(137, timed_out=True, quiet=True, restarted=self._after_timeout())

    # ------------------------------------------------------------------ per-command exec
    def _run_exec(
        self,
        argv: list[str],
        cwd: str,
        env_pairs: list[str],
        stdin: bytes | None,
        out: CappedBuffer,
        err: CappedBuffer,
        deadline: float,
    ) -> _Ending:
        request = ExecRequest(
            tuple(argv), self.config.user, cwd, tuple(env_pairs), stdin=stdin is not None
        )
        exec_id = self._create_exec(request)
        stream = self._backend.attach_exec(exec_id, stdin, out, err)
        ending = _Ending(-1)
        try:
            if not stream.pump(deadline):
                ending.timed_out = ending.quiet = True
                ending.restarted = self._after_timeout()
                stream.pump(time.monotonic() + _GRACE_S)
        finally:
            stream.close()
        # Asked before the sweep after the command, which may restart the container (and
        # end the exec session with it).
        ending.exit_code = stream.exit_code(killed=ending.timed_out)
        return ending
