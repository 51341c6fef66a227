"""``Sandbox``: one locked-down, long-lived container per session, and commands run in it."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from haversack.errors import PathNotFoundError, ToolValidationError
from haversack.filesystem import normalize_path

from ._config import SandboxConfig
from ._errors import SandboxError
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
from ._output import CappedBuffer

if TYPE_CHECKING:
    from ._cgroup import ContainerCgroup
    from ._service import PodmanService

# The service, stream, workspace and process helpers (subprocess, sockets, tempfile) are
# imported where they are used, so registering the pack's resources stays cheap.

__all__ = ["ExecResult", "Sandbox"]

WORKDIR: Final = "/workspace"
_CPU_PERIOD: Final = 100_000
#: How long bringing the container back to its baseline (init + ``sleep infinity``) may take
#: before it is restarted instead.
_SWEEP_S: Final = 1.0
#: How long the output stream may take to end once its command was killed.
_GRACE_S: Final = 0.3
#: How long the exit code may take to appear once the command ended by itself, and once it
#: was killed at its timeout (short: the call must return within timeout + 2 s).
_EXIT_CODE_S: Final = 5.0
_EXIT_CODE_KILLED_S: Final = 0.3
#: How long the baseline may take to appear after a start.
_BASELINE_S: Final = 5.0
#: The container's own processes (init, ``sleep infinity``) run as this user, never as the
#: command user: a command can then neither signal nor ptrace them.
_BASELINE_UID: Final = 65534


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


class _State:
    """What teardown needs; kept apart from ``Sandbox`` so the finalizer holds no reference
    to it."""

    def __init__(self, service_url: str | None, workspace: Path, name: str) -> None:
        self.service_url = service_url
        self.workspace = workspace
        self.name = name
        self.container_id: str | None = None
        # Set once start() got to the end: a cancelled call (the MCP server raises into its
        # thread) may stop it anywhere between create and settle.
        self.started = False
        self.closed = False
        self.cgroup: ContainerCgroup | None = None
        self.paused = False  # paused through the engine (remote services)


def _release(state: _State, service: PodmanService | None) -> None:
    """Let the container run again, so podman never waits on a frozen container."""
    if state.cgroup is not None:
        state.cgroup.thaw()
    if state.paused and service is not None and state.container_id is not None:
        with contextlib.suppress(Exception):
            service.client.api.post(f"/containers/{state.container_id}/unpause")
    state.paused = False


def _teardown(state: _State, service: PodmanService | None) -> None:
    if state.closed:
        return
    state.closed = True
    if state.container_id is not None:
        removed = False
        _release(state, service)
        if service is not None:
            try:
                service.client.api.delete(
                    f"/containers/{state.container_id}", params={"force": True, "timeout": 0}
                ).raise_for_status()
                removed = True
            except Exception:  # noqa: BLE001 - fall back to the CLI below
                removed = False
        if not removed:
            import subprocess

            from ._containers_conf import podman_env
            from ._service import podman_binary

            # At interpreter exit the private service may already be gone.
            subprocess.run(
                [podman_binary(), "rm", "-f", "-t", "0", state.name],
                capture_output=True,
                env=podman_env(),
                check=False,
            )
    from ._workspace import remove_workspace

    remove_workspace(state.workspace)


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


class Sandbox:
    """A session's sandbox: a host workspace directory bind-mounted at ``/workspace`` and a
    container created on the first ``exec`` (or ``start``), reused, removed by ``close``.

    The container runs ``sleep infinity`` under ``--init`` (both as an unprivileged user of
    their own, so commands can neither signal nor trace them) with no network, no
    capabilities, no-new-privileges, a read-only root, a tmpfs ``/tmp`` and memory, CPU and
    pids limits. Commands run one at a time. The workspace is created at construction (so
    file tools can use it before any command) with ``config.mounts`` copied in.

    **No process outlives its command, and none runs between commands.** After every command
    the container's cgroup is frozen, every task other than init and ``sleep infinity`` is
    killed, and it stays frozen until the next command starts (with a remote service: the
    command user's processes are killed with ``kill -9 -1`` from a second exec and the
    container is paused through the engine). If it cannot be brought back to that baseline
    within a second, it is restarted and the result says so. :meth:`quiesced` is the
    guarantee the host-side file tools rely on.
    """

    def __init__(
        self, config: SandboxConfig | None = None, *, service: PodmanService | None = None
    ) -> None:
        # What the finalizer's teardown needs is imported now, not at interpreter exit.
        import subprocess  # noqa: F401
        import uuid  # uuid imports platform: not worth it before a sandbox is made

        from . import _containers_conf, _service  # noqa: F401
        from ._workspace import open_workspace

        self.config = config or SandboxConfig()
        self.id = uuid.uuid4().hex
        self.name = f"haversack-{self.id[:16]}"
        # A new directory with the mounts copied in, or the user's own directory as it is
        # (which teardown never removes: remove_workspace only removes what it created).
        self.workspace = open_workspace(self.config, f"{os.getpid()}-{self.id[:16]}")
        self._state = _State(self.config.connection_url, self.workspace, self.name)
        self._service = service
        self._lock = threading.RLock()
        # Host thread ids of init and ``sleep infinity`` (cgroup mode), or their count as the
        # engine lists them (engine mode: remote services, or no usable freezer).
        self._baseline: frozenset[int] = frozenset()
        self._baseline_count = 0
        self._finalizer = weakref.finalize(self, _teardown, self._state, None)

    # ------------------------------------------------------------------ lifecycle
    @property
    def container_id(self) -> str | None:
        """The container's id once started, else None."""
        return self._state.container_id

    @property
    def closed(self) -> bool:
        """Whether ``close`` ran."""
        return self._state.closed

    def _svc(self) -> PodmanService:
        if self._service is None:
            from ._service import get_service

            self._service = get_service(self.config.connection_url)
            # Re-arm the finalizer with the service so teardown can use the API.
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _teardown, self._state, self._service)
        return self._service

    def _baseline_user(self) -> str:
        uid = _BASELINE_UID if self.config.uid != _BASELINE_UID else _BASELINE_UID - 1
        return f"{uid}:{uid}"

    def _spec(self) -> dict[str, Any]:
        cfg = self.config
        memory = cfg.memory_bytes
        return {
            "name": self.name,
            "image": cfg.image,
            "command": ["sleep", "infinity"],
            "init": True,  # podman 4.3.1 ignores init=true in containers.conf
            "labels": {SANDBOX_LABEL: "1", OWNER_LABEL: self.id, PID_LABEL: str(os.getpid())},
            # Commands run as cfg.user (each exec says so); init and sleep as another user.
            "user": self._baseline_user(),
            "work_dir": "/",
            "env": dict(cfg.env),
            "hostname": "sandbox",
            "read_only_filesystem": cfg.read_only,
            "read_write_tmpfs": False,
            "mounts": [
                {
                    "destination": WORKDIR,
                    "source": str(self.workspace),
                    "type": "bind",
                    "options": ["rbind", "rw"],
                },
                {
                    "destination": "/tmp",  # noqa: S108 - the container's own tmpfs
                    "source": "tmpfs",
                    "type": "tmpfs",
                    "options": ["rw", "nosuid", "nodev", f"size={cfg.tmpfs_size}", "mode=1777"],
                },
            ],
            "netns": {"nsmode": cfg.network},
            "cap_drop": ["ALL"],
            "no_new_privileges": True,
            "resource_limits": {
                "memory": {"limit": memory, "swap": memory},
                "cpu": {"quota": int(cfg.cpus * _CPU_PERIOD), "period": _CPU_PERIOD},
                "pids": {"limit": cfg.pids_limit},
            },
        }

    def start(self) -> None:
        """Create and start the container if it is not running yet (idempotent). It is left
        quiescent (frozen or paused) until a command runs."""
        with self._lock:
            if self._state.closed:
                raise SandboxError(f"Sandbox {self.name} is closed; create a new one.")
            if self._state.container_id is not None and self._state.started:
                return
            service = self._svc()
            api = service.client.api
            if self._state.container_id is not None:
                # An earlier start was interrupted half-way: begin again from nothing.
                self._remove_container(self._state.container_id)
                self._state.container_id = None
            spec = json.dumps(self._spec())
            response = api.post("/containers/create", data=spec)
            if response.status_code >= 400 and "already in use" in response.text:
                # Created by an interrupted start before its id was recorded; the name is
                # this sandbox's own (unique per sandbox), so the container is ours to remove.
                self._remove_container(self.name)
                response = api.post("/containers/create", data=spec)
            if response.status_code >= 400:
                from ._service import ensure_image

                ensure_image(service, self.config.image)
                raise SandboxError(
                    f"Creating sandbox container {self.name} failed: {response.text.strip()}"
                )
            self._state.container_id = str(response.json()["Id"])
            self._post(f"/containers/{self._state.container_id}/start", "start")
            self._settle()
            self._state.started = True

    def _remove_container(self, ref: str) -> None:
        self._svc().client.api.delete(f"/containers/{ref}", params={"force": True, "timeout": 0})

    def _post(self, path: str, what: str, **params: Any) -> None:
        response = self._svc().client.api.post(path, params=params or None)
        if response.status_code >= 400:
            raise SandboxError(
                f"Could not {what} sandbox container {self.name}: {response.text.strip()}"
            )

    def _inspect(self) -> dict[str, Any]:
        response = self._svc().client.api.get(f"/containers/{self._state.container_id}/json")
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def _settle(self) -> None:
        """After a (re)start: find the cgroup, record the baseline, make the container quiet."""
        from ._cgroup import ContainerCgroup, children_of

        state = self._state
        state.cgroup = None
        deadline = time.monotonic() + _BASELINE_S
        init_pid = 0
        if self._svc().local:
            init_pid = int(self._inspect()["State"]["Pid"])
            state.cgroup = ContainerCgroup.locate(init_pid)
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
            time.sleep(0.01)
            count = self._top() or 0
        self._baseline_count = count
        self._pause()

    def restart(self) -> None:
        """Restart the container at once (``restart -t 0``): every command process dies, the
        workspace is kept, ``/tmp`` is emptied. Recovers from an exhausted pids limit."""
        with self._lock:
            if self._state.container_id is None:
                self.start()
                return
            _release(self._state, self._service)
            self._post(f"/containers/{self._state.container_id}/restart", "restart", t=0)
            self._settle()

    def close(self) -> None:
        """Remove the container and the workspace directory (idempotent)."""
        with self._lock:
            self._finalizer()

    def __enter__(self) -> Sandbox:
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
        cgroup = self._state.cgroup
        if cgroup is not None:
            if cgroup.frozen() or not cgroup.exists():
                return
        elif self._state.paused:
            return
        if not self._quiesce(time.monotonic() + _SWEEP_S):
            self.restart()

    def _resume(self) -> None:
        """Let the container run for a command."""
        cgroup = self._state.cgroup
        if cgroup is not None:
            cgroup.thaw()
        elif self._state.paused:
            self._post(f"/containers/{self._state.container_id}/unpause", "unpause")
            self._state.paused = False

    def _pause(self) -> None:
        self._post(f"/containers/{self._state.container_id}/pause", "pause")
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
        try:
            response = self._svc().client.api.get(
                f"/containers/{self._state.container_id}/top",
                params={"stream": "false"},
                timeout=max(timeout, 0.05),
            )
        except Exception:  # noqa: BLE001 - podman-py wraps timeouts in its APIError
            return None
        if response.status_code >= 400:
            return None
        try:
            return len(response.json().get("Processes") or [])
        except ValueError:  # not JSON (e.g. the container is paused)
            return None

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

    def _run_quietly(self, argv: list[str], deadline: float) -> None:
        from ._exec_stream import ExecStream

        exec_id = self._create_exec({"Cmd": argv, "User": self.config.user, "AttachStdout": True})
        sink = CappedBuffer(1024)
        stream = ExecStream(self._svc().base_url, exec_id, None, sink, sink)
        try:
            stream.pump(deadline)
        finally:
            stream.close()

    # ------------------------------------------------------------------ exec
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
        with self._lock:
            self.start()
            # Checked while the container is quiet: nothing can swap the directory meanwhile.
            if not (self.workspace / rel).is_dir():
                raise PathNotFoundError(
                    f"Working directory {rel or '.'!r} does not exist in the "
                    "workspace; create it first.",
                    path=rel,
                )
            try:
                return self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=False)
            except SandboxError:
                # A dead container (or an exec podman refuses) makes exec fail before the
                # command runs: reset the container once and retry.
                self._recover()
                return self._exec_once(argv, rel, env_pairs, stdin, timeout, restarted=True)

    def _recover(self) -> None:
        state = self._inspect()["State"]
        if state.get("Running") or state.get("Paused"):
            self.restart()
        else:
            _release(self._state, self._service)
            self._post(f"/containers/{self._state.container_id}/start", "start")
            self._settle()

    def _create_exec(self, body: dict[str, Any]) -> str:
        response = self._svc().client.api.post(
            f"/containers/{self._state.container_id}/exec", data=json.dumps(body)
        )
        if response.status_code >= 400:
            raise SandboxError(
                f"Podman could not create the exec session in {self.name}: {response.text.strip()}"
            )
        return str(response.json()["Id"])

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
        from ._exec_stream import ExecStream

        body = {
            "Cmd": argv,
            "AttachStdin": stdin is not None,
            "AttachStdout": True,
            "AttachStderr": True,
            "Tty": False,
            "Env": env_pairs,
            "User": self.config.user,
            "WorkingDir": f"{WORKDIR}/{rel}" if rel else WORKDIR,
        }
        out = CappedBuffer(self.config.output_limit_bytes)
        err = CappedBuffer(self.config.output_limit_bytes)
        started = time.monotonic()
        timed_out = False
        quiet = False
        exit_code = -1
        try:
            self._resume()
            exec_id = self._create_exec(body)
            stream = ExecStream(
                self._svc().base_url,
                exec_id,
                None if stdin is None else stdin.encode("utf-8"),
                out,
                err,
            )
            try:
                if not stream.pump(started + timeout):
                    timed_out = True
                    quiet = self._quiesce(time.monotonic() + _SWEEP_S)
                    if not quiet:
                        self.restart()
                        restarted = quiet = True
                    stream.pump(time.monotonic() + _GRACE_S)
            finally:
                stream.close()
            # Asked before the sweep below, which may restart the container (and end the
            # exec session with it).
            exit_code = self._exit_code(exec_id, killed=timed_out)
        finally:
            # Whatever happened above, nothing the command started may keep running.
            if not quiet and not self._quiesce(time.monotonic() + _SWEEP_S):
                self.restart()
                restarted = True
        return ExecResult(
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            sandbox_restarted=restarted,
        )

    def _exit_code(self, exec_id: str, *, killed: bool) -> int:
        api = self._svc().client.api
        deadline = time.monotonic() + (_EXIT_CODE_KILLED_S if killed else _EXIT_CODE_S)
        while True:
            response = api.get(f"/exec/{exec_id}/json")
            if response.status_code >= 400:
                break
            data = response.json()
            if not data.get("Running") and data.get("ExitCode") is not None:
                return int(data["ExitCode"])
            if time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        return 137 if killed else -1
