"""``Container``: the life of a sandbox's container: create, start, restart, freeze, remove.

:class:`~haversack_podman.Sandbox` adds running a command in it (``_sandbox``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final, NoReturn, Self

from ._backend import BackendGoneError, ContainerState, ExecRequest, SandboxBackend, SandboxSpec
from ._config import SandboxConfig
from ._errors import SandboxError
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
from ._output import CappedBuffer

if TYPE_CHECKING:
    from ._cgroup import ContainerCgroup
    from ._mirror import Mirror
    from ._service import PodmanService

# The service, stream, workspace and process helpers (subprocess, sockets, tempfile) are
# imported where they are used, so registering the pack's resources stays cheap.

__all__ = ["GONE_REASON", "SWEEP_S", "WORKDIR", "Container", "make_backend", "sandbox_spec"]

WORKDIR: Final = "/workspace"
_CPU_PERIOD: Final = 100_000
#: How long bringing the container back to its baseline (init + ``sleep infinity``) may take
#: before it is restarted instead.
SWEEP_S: Final = 1.0
#: How long the baseline may take to appear after a start.
_BASELINE_S: Final = 5.0
#: The container's own processes (init, ``sleep infinity``) run as this user, never as the
#: command user: a command can then neither signal nor ptrace them.
_BASELINE_UID: Final = 65534
#: Why a sandbox was restarted when its container had vanished (the model is told).
GONE_REASON: Final = (
    "its container had been removed from outside the sandbox (for example with 'podman rm "
    "-f') and was created anew"
)
#: Log lines of a container that stopped by itself quoted in the error.
_LOG_LINES: Final = 5
#: How often, and how far apart, a stopped container's output is looked for.
_LOG_LOOKS: Final = 10
_LOG_WAIT_S: Final = 0.2


_GoneError = BackendGoneError


def make_backend(config: SandboxConfig, service: PodmanService | None = None) -> SandboxBackend:
    """The backend for ``config.connection_url`` (no engine request: it connects on first
    use): an engine over ``tcp://`` or ``ssh://`` does not share this host's disk or kernel
    (``RemotePodmanBackend``); a unix socket or this process's private service does."""
    from ._podman_backend import PodmanBackend
    from ._remote_backend import RemotePodmanBackend, remote_url

    if remote_url(config.connection_url):
        return RemotePodmanBackend(config.connection_url, service)
    return PodmanBackend(config.connection_url, service)


def owner_labels(owner: str) -> dict[str, str]:
    """The labels of everything a sandbox makes on the engine (container, volume, the
    workspace agent), by which ``cleanup`` and ``list_owned`` find them."""
    return {SANDBOX_LABEL: "1", OWNER_LABEL: owner, PID_LABEL: str(os.getpid())}


def _baseline_uid(config: SandboxConfig) -> int:
    """The uid of init and sleep: never the command user's, so commands cannot signal them."""
    return _BASELINE_UID if config.uid != _BASELINE_UID else _BASELINE_UID - 1


def sandbox_spec(
    config: SandboxConfig, *, name: str, owner: str, workspace: Path | None
) -> SandboxSpec:
    """The ``SandboxSpec`` of a sandbox of ``config`` (also what a warm pool's Pods are)."""
    uid = _baseline_uid(config)
    return SandboxSpec(
        name=name,
        image=config.image,
        command=("sleep", "infinity"),
        labels=owner_labels(owner),
        # Commands run as config.user (each exec says so); init and sleep as another user.
        baseline_user=f"{uid}:{uid}",
        env=dict(config.env),
        read_only=config.read_only,
        tmpfs_size=config.tmpfs_size,
        network=config.network,
        memory_bytes=config.memory_bytes,
        cpu_quota=int(config.cpus * _CPU_PERIOD),
        cpu_period=_CPU_PERIOD,
        pids_limit=config.pids_limit,
        workdir=WORKDIR,
        workspace=workspace,
        workspace_owner=(config.uid, config.gid),
    )


class _State:
    """What teardown needs; kept apart from ``Container`` so the finalizer holds no reference
    to it."""

    def __init__(self, service_url: str | None, workspace: Path | None, name: str) -> None:
        self.service_url = service_url
        self.workspace = workspace
        self.mirror: Path | None = None  # the private copy of a user's directory, if any
        self.name = name
        self.container_id: str | None = None
        # Set once start() got to the end: a cancelled call (the MCP server raises into its
        # thread) may stop it anywhere between create and settle.
        self.started = False
        self.closed = False
        self.cgroup: ContainerCgroup | None = None
        # Quiet in engine mode: its command processes killed and checked, and paused through
        # the engine where the engine can pause (``BackendCaps.engine_pause``).
        self.paused = False
        # Why the container was last created anew behind the caller's back (told once).
        self.lost: str | None = None


def _release(state: _State, backend: SandboxBackend) -> None:
    """Let the container run again, so the engine never waits on a frozen container."""
    if state.cgroup is not None:
        state.cgroup.thaw()
    if state.paused and state.container_id is not None:
        with contextlib.suppress(Exception):
            if backend.caps.engine_pause:
                backend.unpause(state.container_id)
    state.paused = False


def _teardown(state: _State, backend: SandboxBackend) -> None:
    if state.closed:
        return
    state.closed = True
    if state.container_id is not None:
        _release(state, backend)
        backend.remove(state.container_id, last_resort=True)
    backend.remove_workspace(state.name, state.workspace)
    if state.mirror is not None:
        from haversack.filesystem import remove_tree

        with contextlib.suppress(OSError):
            remove_tree(state.mirror)


def _make_mirror(workspace: Path, name: str) -> Mirror:
    """An empty private copy of ``workspace`` under the mirrors directory, with the same mode
    and (as root) owner as the user's directory."""
    from ._mirror import Mirror
    from ._runtime_dir import mirrors_dir

    parent = mirrors_dir()
    real, inside = os.path.realpath(workspace), os.path.realpath(parent)
    if inside == real or inside.startswith(real.rstrip("/") + "/"):
        raise SandboxError(
            f"The workspace {workspace} holds the sandbox's runtime directory {parent}, where "
            "its private copy of the workspace would go (a copy inside what it copies); use a "
            "project directory, or set TMPDIR to a directory outside it."
        )
    path = parent / name
    st = workspace.stat()
    path.mkdir(mode=0o700)
    os.chmod(path, st.st_mode & 0o7777)
    if os.geteuid() == 0:
        os.chown(path, st.st_uid, st.st_gid)
    return Mirror(workspace, path)


class Container:
    """A sandbox's host workspace directory and its container: created on the first
    ``start``, restarted on demand, frozen between commands, removed by ``close``.

    The workspace is created at construction (so file tools can use it before any command),
    the container when first needed. See :class:`~haversack_podman.Sandbox` for the
    guarantees.
    """

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        service: PodmanService | None = None,
        backend: SandboxBackend | None = None,
    ) -> None:
        # What the finalizer's teardown needs is imported now, not at interpreter exit.
        import subprocess  # noqa: F401
        import uuid  # uuid imports platform: not worth it before a sandbox is made

        from . import _containers_conf, _service  # noqa: F401

        self.config = config or SandboxConfig()
        self.id = uuid.uuid4().hex
        self.name = f"haversack-{self.id[:16]}"
        # ``backend``: another engine than config.connection_url's Podman (Kubernetes).
        self._backend = backend if backend is not None else make_backend(self.config, service)
        # A new directory with the mounts copied in, or the user's own directory as it is
        # (which teardown never removes: remove_workspace only removes what it created);
        # None when the workspace lives on the engine (a volume).
        self._workspace = self._backend.open_workspace(self.config, f"{os.getpid()}-{self.id[:16]}")
        self._state = _State(self.config.connection_url, self._workspace, self.name)
        # With a user's directory the container mounts a private copy of it instead, synced
        # before each command and written back after it (see ``_mirror``).
        self._mirror: Mirror | None = None
        if self.config.workspace is not None and self._workspace is not None:
            self._mirror = _make_mirror(self._workspace, f"{os.getpid()}-{self.id[:16]}")
            self._state.mirror = self._mirror.path
        self._lock = threading.RLock()
        # Host thread ids of init and ``sleep infinity`` (cgroup mode), or their count as the
        # engine lists them (engine mode: remote services, or no usable freezer).
        self._baseline: frozenset[int] = frozenset()
        self._baseline_count = 0
        self._ever_started = False
        # Holds the state and the backend, never the container itself.
        self._finalizer = weakref.finalize(self, _teardown, self._state, self._backend)

    # ------------------------------------------------------------------ lifecycle
    @property
    def container_id(self) -> str | None:
        """The container's id once started, else None."""
        return self._state.container_id

    @property
    def backend(self) -> SandboxBackend:
        """The engine this sandbox runs on (``_backend``)."""
        return self._backend

    @property
    def workspace(self) -> Path:
        """The workspace's host directory (the user's own, or one made for the session);
        a ``SandboxError`` when the workspace lives on the engine (a remote backend)."""
        if self._workspace is None:
            raise SandboxError(
                f"Sandbox {self.name} keeps its workspace on the engine "
                f"({self._backend.caps.kind}), not in a directory on this host."
            )
        return self._workspace

    @property
    def mounted(self) -> Path | None:
        """The host directory the container sees at ``/workspace``: the workspace, or for a
        user's directory the session's private copy of it (None: a volume on the engine)."""
        return self._mirror.path if self._mirror is not None else self._workspace

    @property
    def closed(self) -> bool:
        """Whether ``close`` ran."""
        return self._state.closed

    def labels(self) -> dict[str, str]:
        """The labels of everything this sandbox makes on the engine (``owner_labels``)."""
        return owner_labels(self.id)

    @property
    def ever_started(self) -> bool:
        """Whether the container was ever created (so a command may have run in it)."""
        return self._ever_started

    def _baseline_user(self) -> str:
        uid = _baseline_uid(self.config)
        return f"{uid}:{uid}"

    def _spec(self) -> SandboxSpec:
        return sandbox_spec(self.config, name=self.name, owner=self.id, workspace=self.mounted)

    def start(self) -> None:
        """Create and start the container if it is not running yet (idempotent). It is left
        quiescent (frozen or paused) until a command runs."""
        with self._lock:
            if self._state.closed:
                raise SandboxError(f"Sandbox {self.name} is closed; create a new one.")
            if self._state.container_id is not None and self._state.started:
                return
            if self._state.container_id is not None:
                # An earlier start was interrupted half-way: begin again from nothing.
                self._remove_container(self._state.container_id)
                self._state.container_id = None
            try:
                self._create_and_start()
            except Exception as exc:  # noqa: BLE001 - re-raised by _failed_start
                self._failed_start(exc)
            self._state.started = True

    def _create_and_start(self) -> None:
        self._state.container_id = self._backend.create(self._spec())
        self._ever_started = True  # it exists: from here on something may run in it
        caps = self._backend.caps
        dropped = dropped_limits(self.config, self._inspect(), pids=caps.pids_limit)
        if dropped and caps.kind == "kubernetes":
            raise SandboxError(
                f"The cluster did not keep the sandbox's limits ({'; '.join(dropped)}): an "
                "admission policy or LimitRange rewrote them, or the CPU limit is finer than "
                "a millicore. The sandbox is refused rather than run with other limits."
            )
        if dropped:
            raise SandboxError(
                f"The Podman engine did not apply the sandbox's limits ({'; '.join(dropped)}); "
                "a rootless engine on cgroup v1 drops them without a word. The sandbox is "
                "refused rather than run without them: use a rootful engine, or cgroup v2 with "
                "the memory, cpu and pids controllers delegated to the engine's user."
            )
        self._post("start")
        self._settle()

    def _failed_start(self, exc: Exception) -> NoReturn:
        """A (re)start failed: remove the container, so nothing of it can run and the next
        command creates a fresh one (the workspace is a host directory and is kept), and
        raise with the cause when the container stopped by itself."""
        cause = self._stopped_cause()
        self._discard()
        if cause is None:
            raise exc
        raise SandboxError(
            f"{cause}. The sandbox is not running; /workspace is kept and the next command "
            "tries to start it again."
        ) from exc

    def _stopped_cause(self) -> str | None:
        """Why the container stopped by itself (exit code, error, its last log lines), or
        None when it runs or the engine cannot say."""
        ref = self._state.container_id
        if ref is None:
            return None
        try:
            state = self._backend.inspect(ref)
        except Exception:  # noqa: BLE001 - no cause to tell
            return None
        # Only one that ran and ended has a cause to tell (not one still only created).
        if state.status not in ("exited", "stopped"):
            return None
        cause = (
            f"The sandbox container {self.name} (image {self.config.image}) stopped right "
            f"after it started (exit code {state.exit_code}"
            + (f", {state.error}" if state.error else "")
            + ")"
        )
        lines: list[str] = []
        # The engine may say "exited" before the container's monitor has written its last
        # output (seen under load): a few short looks, then the exit code alone.
        for _ in range(_LOG_LOOKS):
            try:
                logs = self._backend.logs(ref, _LOG_LINES)
            except Exception:  # noqa: BLE001 - the exit code is still worth telling
                logs = ""
            lines = [line.strip() for line in logs.splitlines() if line.strip()][-_LOG_LINES:]
            if lines:
                break
            time.sleep(_LOG_WAIT_S)
        return cause + (f"; its output: {' | '.join(lines)}" if lines else "")

    def _discard(self) -> None:
        """Remove the container (after a failed start or restart). The id is forgotten only
        once the engine confirms it is gone; ``started`` is cleared either way, so the next
        quiescence or start tries again."""
        state = self._state
        _release(state, self._backend)
        state.started = False
        state.cgroup = None
        # Not removed: the id is kept, quiesced() tries again.
        if self._backend.remove(state.container_id or self.name):
            state.container_id = None

    def _forget(self, reason: str) -> None:
        """The engine lost the container: drop what described it, remember why."""
        state = self._state
        state.container_id = None
        state.started = False
        state.cgroup = None
        state.paused = False
        state.lost = reason

    def _remove_container(self, ref: str) -> None:
        self._backend.remove(ref)

    def _post(self, what: str) -> None:
        """``start``, ``restart``, ``pause`` or ``unpause`` the container."""
        ref = self._state.container_id
        assert ref is not None
        getattr(self._backend, what)(ref)

    def _inspect(self) -> ContainerState:
        ref = self._state.container_id
        assert ref is not None
        return self._backend.inspect(ref)

    def _settle(self) -> None:
        """After a (re)start: find the cgroup, record the baseline, make the container quiet."""
        from ._cgroup import children_of

        state = self._state
        state.cgroup = None
        deadline = time.monotonic() + _BASELINE_S
        init_pid = 0
        ref = state.container_id
        assert ref is not None
        if self._backend.caps.kernel_freezer:
            info = self._inspect()
            init_pid = info.pid
            # The backend proves the cgroup is this container's (None: engine mode).
            state.cgroup = self._backend.container_cgroup(ref, info)
        cgroup = state.cgroup
        if cgroup is not None:
            # The baseline is init and the ``sleep infinity`` it forks, both as the baseline
            # user; anything else (a task of the previous run still exiting) is swept.
            uid = int(self._baseline_user().partition(":")[0])
            sleeper = children_of(init_pid, cgroup.tasks(), uid)
            while not sleeper and time.monotonic() < deadline:
                time.sleep(0.002)
                sleeper = children_of(init_pid, cgroup.tasks(), uid)
            self._baseline = frozenset({init_pid, *sleeper})
            if len(sleeper) != 1 or not cgroup.sweep(self._baseline, deadline):
                raise SandboxError(
                    f"Could not bring sandbox container {self.name} to its idle state "
                    f"(init and sleep, frozen) within {_BASELINE_S:g} s; its cgroup "
                    f"{cgroup.path} is {cgroup.describe()}. Check that the host's cgroup "
                    "freezer works (see docs/packs/podman.md)."
                )
            return
        count = self._top() or 0
        while count < 2 and time.monotonic() < deadline:
            if not count and not self._inspect().running:
                raise SandboxError(f"Sandbox container {self.name} is not running.")
            time.sleep(0.01)
            count = self._top() or 0
        self._baseline_count = count
        self._pause()

    def restart(self) -> None:
        """Restart the container at once (``restart -t 0``): every command process dies, the
        workspace is kept, ``/tmp`` is emptied. Recovers from an exhausted pids limit."""
        with self._lock:
            if self._state.container_id is None or not self._state.started:
                self.start()
                return
            _release(self._state, self._backend)
            self._relaunch("restart")

    def _relaunch(self, what: str) -> None:
        """(Re)start the existing container and settle it; a vanished one is created anew, a
        failed one is removed (the next command creates it anew) and the error raised."""
        try:
            self._post(what)
            self._settle()
        except _GoneError:
            self._forget(GONE_REASON)
            self.start()
        except Exception as exc:  # noqa: BLE001 - re-raised by _failed_start
            self._failed_start(exc)

    def close(self) -> None:
        """Remove the container and the workspace directory (idempotent)."""
        with self._lock:
            self._finalizer()
            if self._mirror is not None:
                self._mirror.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ quiescence
    @contextlib.contextmanager
    def quiesced(self) -> Iterator[None]:
        """Hold the sandbox (no command can start) and guarantee that no sandbox process runs
        inside the block: the container is not started, stopped, or frozen (paused through the
        engine for a remote service). Host code that touches the workspace runs in here, so
        nothing in the sandbox can swap a path under it."""
        with self._lock:
            if not self._state.closed and self._state.container_id is not None:
                self._ensure_quiet()
            yield

    def _ensure_quiet(self) -> None:
        if not self._state.started:
            # Its start failed or was cut short, so no command ever ran in it: removing it is
            # the surest way to have nothing run (the next command creates it anew).
            self._discard()
            if self._state.container_id is not None:
                raise SandboxError(
                    f"Sandbox container {self.name} did not finish starting and cannot be "
                    "removed; the Podman service does not answer as it should."
                )
            return
        cgroup = self._state.cgroup
        if cgroup is not None:
            if cgroup.frozen() or not cgroup.exists():
                return
        elif self._state.paused:
            return
        if not self._quiesce(time.monotonic() + SWEEP_S):
            self.restart()

    def _resume(self) -> None:
        """Let the container run for a command."""
        cgroup = self._state.cgroup
        if cgroup is not None:
            cgroup.thaw()
        elif self._state.paused:
            if self._backend.caps.engine_pause:
                self._post("unpause")
            self._state.paused = False

    def _pause(self) -> None:
        # Without an engine pause (Kubernetes) the sandbox is only held quiet: its command
        # processes were killed and checked, and no command starts without the lock.
        if self._backend.caps.engine_pause:
            self._post("pause")
        self._state.paused = True

    def _quiesce(self, deadline: float) -> bool:
        """Kill everything but the baseline and leave the container frozen (paused). True when
        the baseline alone is left; False when the container must be restarted."""
        cgroup = self._state.cgroup
        if cgroup is not None:
            return cgroup.sweep(self._baseline, deadline)
        return self._engine_quiesce(deadline)

    # ------------------------------------------------------------------ engine mode
    def _top(self, timeout: float = 5.0) -> int | None:
        """How many processes the engine lists in the container (None: it could not say in
        ``timeout`` seconds; a flood of processes makes Podman's ``top`` slow)."""
        ref = self._state.container_id
        assert ref is not None
        return self._backend.processes(ref, timeout)

    def _engine_quiesce(self, deadline: float) -> bool:
        """Without the host's cgroup: kill every process of the command user from a second
        exec (``kill -9 -1`` is atomic against fork and cannot reach init and sleep, which run
        as another user), check with the engine's process list, then pause."""
        if self._state.paused:
            return True
        if self._top(deadline - time.monotonic()) != self._baseline_count:
            try:
                self._run_quietly(["/bin/sh", "-c", "kill -9 -1"], deadline)
            except SandboxError:
                return False  # not even an exec starts (pids limit): restart
            while self._top(deadline - time.monotonic()) != self._baseline_count:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)
        try:
            self._pause()
        except SandboxError:
            return False
        return True

    def _run_quietly(
        self, argv: list[str], deadline: float, sink: CappedBuffer | None = None
    ) -> None:
        from ._service import engine_deadline

        # Its engine requests are bounded by its own deadline too (it also runs outside any
        # call: the wipe of a rollback).
        with engine_deadline(deadline - time.monotonic()):
            exec_id = self._create_exec(ExecRequest(tuple(argv), self.config.user))
            sink = sink if sink is not None else CappedBuffer(1024)
            stream = self._backend.attach_exec(exec_id, None, sink, sink)
        try:
            stream.pump(deadline)
        finally:
            stream.close()

    def _recover(self) -> str:
        """Bring a dead, stuck or vanished container back (restart, start a stopped one,
        create a removed one anew); returns why the sandbox was recreated behind the caller's
        back, if it was, for the model (``""`` otherwise)."""
        if self._state.container_id is None or not self._state.started:
            self.start()
        else:
            try:
                state = self._inspect()
            except _GoneError:
                self._forget(GONE_REASON)
                self.start()
            else:
                if state.running or state.paused:
                    self.restart()
                else:
                    _release(self._state, self._backend)
                    self._relaunch("start")
        lost, self._state.lost = self._state.lost, None
        return lost or ""

    def _create_exec(self, request: ExecRequest) -> str:
        ref = self._state.container_id
        assert ref is not None
        return self._backend.create_exec(ref, request)


def dropped_limits(config: SandboxConfig, state: ContainerState, *, pids: bool = True) -> list[str]:
    """The limits of ``config`` that the engine did not apply, read back from the container's
    inspect data (empty when all are in force). ``pids`` False: the engine has no
    per-sandbox pids limit (Kubernetes: the node's ``podPidsLimit`` applies instead)."""
    # Not the swap limit: an engine on a host without swap accounting drops it with a
    # warning, and the memory limit still holds there.
    wanted = [
        ("memory", config.memory_bytes, state.memory_limit),
        ("CPU quota", int(config.cpus * _CPU_PERIOD), state.cpu_quota),
    ]
    if pids:
        wanted.append(("pids limit", config.pids_limit, state.pids_limit))
    return [
        f"{name}: asked {asked}, the engine reports {got!r}"
        for name, asked, got in wanted
        if got != asked
    ]
