"""``Sandbox``: one locked-down, long-lived container per session, and commands run in it."""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
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
    from ._service import PodmanService

# The service, stream, workspace and process helpers (subprocess, sockets, tempfile) are
# imported where they are used, so registering the pack's resources stays cheap.

__all__ = ["ExecResult", "Sandbox"]

WORKDIR: Final = "/workspace"
_KILL_GRACE_S: Final = 5.0
_CPU_PERIOD: Final = 100_000


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of one command: exit code (137 = killed, e.g. timeout or OOM), decoded
    output, wall time, and whether it timed out or had output cut."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False


class _State:
    """What teardown needs; kept apart from ``Sandbox`` so the finalizer holds no reference
    to it."""

    def __init__(self, service_url: str | None, workspace: Path, name: str) -> None:
        self.service_url = service_url
        self.workspace = workspace
        self.name = name
        self.container_id: str | None = None
        self.closed = False


def _teardown(state: _State, service: PodmanService | None) -> None:
    if state.closed:
        return
    state.closed = True
    if state.container_id is not None:
        removed = False
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

    The container runs ``sleep infinity`` under ``--init`` with no network, no capabilities,
    no-new-privileges, a read-only root, a tmpfs ``/tmp`` and memory, CPU and pids limits.
    Commands run one at a time. The workspace is created at construction (so file tools
    can use it before any command) with ``config.mounts`` copied in.
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
        self._baseline: frozenset[int] = frozenset()
        self._init_pid = 0
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

    def _spec(self) -> dict[str, Any]:
        cfg = self.config
        memory = cfg.memory_bytes
        return {
            "name": self.name,
            "image": cfg.image,
            "command": ["sleep", "infinity"],
            "init": True,  # podman 4.3.1 ignores init=true in containers.conf
            "labels": {SANDBOX_LABEL: "1", OWNER_LABEL: self.id, PID_LABEL: str(os.getpid())},
            "user": cfg.user,
            "work_dir": WORKDIR,
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
        """Create and start the container if it is not running yet (idempotent)."""
        with self._lock:
            if self._state.closed:
                raise SandboxError(f"Sandbox {self.name} is closed; create a new one.")
            if self._state.container_id is not None:
                return
            service = self._svc()
            api = service.client.api
            response = api.post("/containers/create", data=json.dumps(self._spec()))
            if response.status_code >= 400:
                from ._service import ensure_image

                ensure_image(service, self.config.image)
                raise SandboxError(
                    f"Creating sandbox container {self.name} failed: {response.text.strip()}"
                )
            self._state.container_id = str(response.json()["Id"])
            self._post(f"/containers/{self._state.container_id}/start", "start")
            self._record_baseline()

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

    def _record_baseline(self) -> None:
        # The container's own processes (init and `sleep infinity`) survive every sweep.
        if not self._svc().local:
            return
        from ._kill import container_procs

        self._init_pid = int(self._inspect()["State"]["Pid"])
        deadline = time.monotonic() + 2.0
        procs = container_procs(self._init_pid)
        while len(procs) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
            procs = container_procs(self._init_pid)
        self._baseline = frozenset(procs)

    def restart(self) -> None:
        """Restart the container at once (``restart -t 0``): every command process dies, the
        workspace is kept, ``/tmp`` is emptied. Recovers from an exhausted pids limit."""
        with self._lock:
            if self._state.container_id is None:
                self.start()
                return
            self._post(f"/containers/{self._state.container_id}/restart", "restart", t=0)
            self._record_baseline()

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

    # ------------------------------------------------------------------ processes
    def _sweep(self) -> None:
        """Kill every process the commands left in the container (local service only)."""
        from ._kill import container_procs, kill_group, live_pgrp

        for _ in range(20):
            leftovers = [p for p in container_procs(self._init_pid) if p not in self._baseline]
            groups = {g for g in map(live_pgrp, leftovers) if g is not None}
            if not groups:
                return
            for group in groups:
                kill_group(self._init_pid, group, rounds=1)

    def _remote_kill(self, token: str) -> bool:
        """Kill a timed-out command's process group from a second exec (remote services)."""
        code, _ = (
            self._svc()
            .client.containers.get(self._state.container_id)
            .exec_run(
                ["/bin/sh", "-c", f"kill -9 -$(cat /tmp/.haversack-{token}.pgid)"],
                user=self.config.user,
                demux=True,
            )
        )
        return bool(code == 0)

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
        ``timed_out``). Background processes never outlive their command.
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
        if not (self.workspace / rel).is_dir():
            raise PathNotFoundError(
                f"Working directory {rel or '.'!r} does not exist in the "
                "workspace; create it first.",
                path=rel,
            )
        merged = {**self.config.env, **(env or {})}
        env_pairs = _check_env(merged)
        timeout = self.config.clamp_timeout(timeout_s)
        with self._lock:
            self.start()
            try:
                return self._exec_once(argv, rel, env_pairs, stdin, timeout)
            except SandboxError:
                # A pids limit exhausted by leftovers (or a dead container) makes exec fail
                # before the command runs: reset the container once and retry.
                self._recover()
                return self._exec_once(argv, rel, env_pairs, stdin, timeout)

    def _recover(self) -> None:
        state = self._inspect()["State"]
        if state.get("Running"):
            self.restart()
        else:
            self._post(f"/containers/{self._state.container_id}/start", "start")
            self._record_baseline()

    def _exec_once(
        self, argv: list[str], rel: str, env_pairs: list[str], stdin: str | None, timeout: float
    ) -> ExecResult:
        service = self._svc()
        import uuid

        token = uuid.uuid4().hex
        if not service.local:
            # Remote: record the process group so a second exec can kill it on timeout.
            argv = [
                "/bin/sh",
                "-c",
                f'echo $$ > /tmp/.haversack-{token}.pgid; exec "$@"',
                "sh",
                *argv,
            ]
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
        started = time.monotonic()
        response = service.client.api.post(
            f"/containers/{self._state.container_id}/exec", data=json.dumps(body)
        )
        if response.status_code >= 400:
            raise SandboxError(
                f"Podman could not create the exec session in {self.name}: {response.text.strip()}"
            )
        exec_id = str(response.json()["Id"])
        from ._exec_stream import ExecStream

        out = CappedBuffer(self.config.output_limit_bytes)
        err = CappedBuffer(self.config.output_limit_bytes)
        stream = ExecStream(
            service.base_url, exec_id, None if stdin is None else stdin.encode("utf-8"), out, err
        )
        timed_out = False
        try:
            if not stream.pump(started + timeout):
                timed_out = True
                if service.local:
                    self._sweep()
                elif not self._remote_kill(token):
                    self.restart()
                if not stream.pump(time.monotonic() + _KILL_GRACE_S):
                    self.restart()
        finally:
            stream.close()
        if service.local:
            self._sweep()
        exit_code = self._exit_code(exec_id, killed=timed_out)
        return ExecResult(
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
        )

    def _exit_code(self, exec_id: str, *, killed: bool) -> int:
        api = self._svc().client.api
        for _ in range(200):
            response = api.get(f"/exec/{exec_id}/json")
            if response.status_code >= 400:
                break
            data = response.json()
            if not data.get("Running") and data.get("ExitCode") is not None:
                return int(data["ExitCode"])
            time.sleep(0.005)
        return 137 if killed else -1
