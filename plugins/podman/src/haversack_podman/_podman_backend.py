"""``PodmanBackend``: the sandbox backend of a Podman service sharing this host's disk."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._backend import (
    BackendCaps,
    BackendGoneError,
    ContainerState,
    ExecChannel,
    ExecRequest,
    OwnedSandbox,
    SandboxSpec,
    Sink,
)
from ._errors import SandboxError
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL

if TYPE_CHECKING:
    from haversack import Filesystem

    from ._cgroup import ContainerCgroup
    from ._config import SandboxConfig
    from ._exec_stream import ExecStream
    from ._sandbox import Sandbox
    from ._service import PodmanService

__all__ = ["PodmanBackend", "PodmanExec", "podman_spec"]

#: How long an exit code may take to appear once the process ended by itself, and once it was
#: killed at its timeout (short: the call must return within timeout + 2 s).
_EXIT_CODE_S: Final = 5.0
_EXIT_CODE_KILLED_S: Final = 0.3


def podman_spec(spec: SandboxSpec, workspace: dict[str, Any]) -> dict[str, Any]:
    """The libpod SpecGenerator of ``spec``, with ``workspace`` at ``workdir``: a mount (a
    bind of a host directory), or a named volume (``{"Name", "Dest", "Options"}``)."""
    volume = "Name" in workspace
    return {
        "name": spec.name,
        "image": spec.image,
        "command": list(spec.command),
        "init": True,  # podman 4.3.1 ignores init=true in containers.conf
        "labels": dict(spec.labels),
        # Commands run as the user each exec names; init and sleep as the baseline user.
        "user": spec.baseline_user,
        "work_dir": "/",
        "env": dict(spec.env),
        "hostname": spec.hostname,
        "read_only_filesystem": spec.read_only,
        "read_write_tmpfs": False,
        **({"volumes": [workspace]} if volume else {}),
        "mounts": [
            *([] if volume else [workspace]),
            {
                "destination": "/tmp",  # noqa: S108 - the container's own tmpfs
                "source": "tmpfs",
                "type": "tmpfs",
                "options": ["rw", "nosuid", "nodev", f"size={spec.tmpfs_size}", "mode=1777"],
            },
        ],
        "netns": {"nsmode": spec.network},
        "cap_drop": ["ALL"],
        **({"cap_add": list(spec.cap_add)} if spec.cap_add else {}),
        "no_new_privileges": True,
        "resource_limits": {
            "memory": {"limit": spec.memory_bytes, "swap": spec.memory_bytes},
            "cpu": {"quota": spec.cpu_quota, "period": spec.cpu_period},
            "pids": {"limit": spec.pids_limit},
        },
    }


def _state_of(data: dict[str, Any]) -> ContainerState:
    state = data.get("State") or {}
    host = data.get("HostConfig") or {}
    return ContainerState(
        status=str(state.get("Status") or ""),
        running=bool(state.get("Running")),
        paused=bool(state.get("Paused")),
        pid=int(state.get("Pid") or 0),
        exit_code=state.get("ExitCode"),
        error=str(state.get("Error") or "").strip(),
        memory_limit=host.get("Memory"),
        cpu_quota=host.get("CpuQuota"),
        pids_limit=host.get("PidsLimit"),
        raw=data,
    )


def _raise_for(response: Any, what: str) -> None:
    if response.status_code >= 400:
        error = BackendGoneError if response.status_code == 404 else SandboxError
        raise error(f"{what}: {response.text.strip()}")


class PodmanExec:
    """An exec session's ``ExecChannel``: the pack's ``ExecStream`` plus the exit code the
    engine records for the session."""

    def __init__(self, service: PodmanService, exec_id: str, stream: ExecStream) -> None:
        self._service = service
        self._stream = stream
        self.exec_id = exec_id

    @property
    def eof(self) -> bool:
        """Whether the stream ended."""
        return self._stream.eof

    def pump(self, deadline: float, until: Any = None) -> bool:
        """See ``ExecChannel.pump``."""
        return self._stream.pump(deadline, until)

    def send(self, data: bytes, deadline: float) -> bool:
        """See ``ExecChannel.send``."""
        return self._stream.send(data, deadline)

    def exit_code(self, *, killed: bool) -> int:
        """See ``ExecChannel.exit_code``."""
        api = self._service.client.api
        deadline = time.monotonic() + (_EXIT_CODE_KILLED_S if killed else _EXIT_CODE_S)
        while True:
            response = api.get(f"/exec/{self.exec_id}/json")
            if response.status_code >= 400:
                break
            data = response.json()
            if not data.get("Running") and data.get("ExitCode") is not None:
                return int(data["ExitCode"])
            if time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        return 137 if killed else -1

    def close(self) -> None:
        """See ``ExecChannel.close``."""
        self._stream.close()


class PodmanBackend:
    """A Podman service (``connection_url``, or this process's private one, started on first
    use) whose containers bind-mount the workspace from this host's disk: the local backend.
    Its engine shares this kernel when ``service.local`` and each container's cgroup proves it
    (``container_cgroup``); then quiescence is the kernel freezer, otherwise engine mode."""

    def __init__(self, connection_url: str | None, service: PodmanService | None = None) -> None:
        self.connection_url = connection_url
        self._service = service

    # The service is reached on first use (a sandbox's file tools need no engine).
    @property
    def service(self) -> PodmanService:
        """The Podman service, started or connected on first use."""
        if self._service is None:
            from ._service import get_service

            self._service = get_service(self.connection_url)
        return self._service

    @service.setter
    def service(self, service: PodmanService) -> None:
        self._service = service

    @property
    def has_service(self) -> bool:
        """Whether the service was reached already (teardown contacts no new engine)."""
        return self._service is not None

    @property
    def caps(self) -> BackendCaps:
        """Local Podman: host workspace, kernel freezer when the service may be local."""
        local = self.service.local
        return BackendCaps("podman-local", True, local, True)

    def _api(self) -> Any:
        return self.service.client.api

    # ---------------------------------------------------------------- the workspace
    def open_workspace(self, config: SandboxConfig, key: str) -> Path | None:
        """A new host directory with the mounts copied in, or the user's own directory."""
        from ._workspace import open_workspace

        return open_workspace(config, key)

    def workspace_mount(self, spec: SandboxSpec) -> dict[str, Any]:
        """The bind mount of the host workspace directory."""
        if spec.workspace is None:
            raise SandboxError(f"Sandbox {spec.name} has no host workspace directory to mount.")
        return {
            "destination": spec.workdir,
            "source": str(spec.workspace),
            "type": "bind",
            "options": ["rbind", "rw"],
        }

    def remove_workspace(self, name: str, workspace: Path | None) -> None:
        """Remove the directory ``open_workspace`` created (never a user's)."""
        from ._workspace import remove_workspace

        if workspace is not None:
            remove_workspace(workspace)

    def filesystem(self, container: Sandbox) -> Filesystem:
        """The host workspace as a ``DirectoryFilesystem`` guarded by ``quiesced``."""
        # Imported here: registering the bindings must not load the filesystem.
        from haversack.filesystem import DirectoryFilesystem

        from ._runtime_dir import snapshots_dir

        user = container.config.workspace is not None
        # Every host-side touch of the workspace (file tools, snapshot, restore, close) waits
        # for the sandbox to be quiet (no command running, its container frozen), so no
        # sandbox process can swap a path underneath; every path is also resolved beneath
        # the root. A user's directory is shared (their editor, other sessions): a failed
        # call undoes only its own changes, the commands' write-backs included, through the
        # one change journal.
        fs = DirectoryFilesystem(
            container.workspace,
            owner=(container.config.uid, container.config.gid),
            storage_parent=snapshots_dir(),
            guard=container.quiesced,
            shared=user,
            protected=container.config.protected_paths() if user else None,
        )
        if fs.journal is not None:
            container.attach_journal(fs.journal.record)
        return fs

    # ---------------------------------------------------------------- images
    def ensure_image(self, image: str) -> None:
        """Raise ``SandboxImageMissingError`` with the fix when ``image`` is not stored."""
        from ._service import ensure_image

        ensure_image(self.service, image)

    # ---------------------------------------------------------------- lifecycle
    def create(self, spec: SandboxSpec) -> str:
        """``POST /containers/create``; a leftover of the same name is removed first."""
        api = self._api()
        body = json.dumps(podman_spec(spec, self.workspace_mount(spec)))
        response = api.post("/containers/create", data=body)
        if response.status_code >= 400 and "already in use" in response.text:
            # Created by an interrupted start before its id was recorded; the name is the
            # sandbox's own (unique per sandbox), so the container is ours to remove.
            self.remove(spec.name)
            response = api.post("/containers/create", data=body)
        if response.status_code >= 400:
            self.ensure_image(spec.image)
            raise SandboxError(
                f"Creating sandbox container {spec.name} failed: {response.text.strip()}"
            )
        return str(response.json()["Id"])

    def _post(self, ref: str, what: str, **params: Any) -> None:
        response = self._api().post(f"/containers/{ref}/{what}", params=params or None)
        _raise_for(response, f"Could not {what} sandbox container {ref}")

    def start(self, ref: str) -> None:
        """``POST /start``."""
        self._post(ref, "start")

    def restart(self, ref: str) -> None:
        """``POST /restart?t=0``."""
        self._post(ref, "restart", t=0)

    def pause(self, ref: str) -> None:
        """``POST /pause``."""
        self._post(ref, "pause")

    def unpause(self, ref: str) -> None:
        """``POST /unpause``."""
        self._post(ref, "unpause")

    def remove(self, ref: str, *, last_resort: bool = False) -> bool:
        """``DELETE ?force&timeout=0``; as a last resort the local CLI (``rm -f``)."""
        if self._service is not None or not last_resort:
            try:
                response = self._api().delete(
                    f"/containers/{ref}", params={"force": True, "timeout": 0}
                )
            except Exception:  # noqa: BLE001 - the engine would not say
                response = None
            if response is not None and (response.status_code < 400 or response.status_code == 404):
                return True
        if not last_resort:
            return False
        import subprocess

        from ._containers_conf import podman_env
        from ._service import ENGINE_CAP_S, podman_binary

        # At interpreter exit the private service may already be gone.
        with contextlib.suppress(Exception):
            subprocess.run(
                [podman_binary(), "rm", "-f", "-t", "0", ref],
                capture_output=True,
                env=podman_env(),
                check=False,
                timeout=ENGINE_CAP_S,
            )
        return False

    def inspect(self, ref: str) -> ContainerState:
        """``GET /containers/{ref}/json``."""
        response = self._api().get(f"/containers/{ref}/json")
        _raise_for(response, f"Could not inspect sandbox container {ref}")
        return _state_of(response.json())

    def logs(self, ref: str, tail: int) -> str:
        """``GET /logs`` of stdout and stderr, demultiplexed."""
        response = self._api().get(
            f"/containers/{ref}/logs", params={"stdout": True, "stderr": True, "tail": tail}
        )
        return _demux(response.content) if response.status_code < 400 else ""

    def processes(self, ref: str, timeout: float) -> int | None:
        """``GET /top`` (a flood of processes makes it slow: hence the timeout)."""
        try:
            response = self._api().get(
                f"/containers/{ref}/top", params={"stream": "false"}, timeout=max(timeout, 0.05)
            )
        except Exception:  # noqa: BLE001 - podman-py wraps timeouts in its APIError
            return None
        if response.status_code >= 400:
            return None
        try:
            return len(response.json().get("Processes") or [])
        except ValueError:  # not JSON (e.g. the container is paused)
            return None

    def container_cgroup(self, ref: str, state: ContainerState) -> ContainerCgroup | None:
        """The cgroup of init's pid, only when its path carries the container's own id."""
        from ._cgroup import ContainerCgroup

        if not self.service.local:
            return None
        if state.pid <= 0:
            raise SandboxError(f"Sandbox container {ref} is not running.")
        cgroup = ContainerCgroup.locate(state.pid)
        # A unix socket as root does not prove that the engine runs on this kernel (a socket
        # forwarded from another host looks the same): its pid may name an unrelated local
        # process. Only a cgroup whose path carries this container's own (random, 64-hex) id
        # is this container's; otherwise stay in engine mode.
        if cgroup is not None and not _names_container(cgroup.path, ref):
            return None
        return cgroup

    # ---------------------------------------------------------------- commands
    def create_exec(self, ref: str, request: ExecRequest) -> str:
        """``POST /containers/{ref}/exec``."""
        body: dict[str, Any] = {
            "Cmd": list(request.argv),
            "AttachStdin": request.stdin,
            "AttachStdout": True,
            "AttachStderr": True,
            "Tty": False,
            "Env": list(request.env),
            "User": request.user,
            "WorkingDir": request.cwd,
        }
        response = self._api().post(f"/containers/{ref}/exec", data=json.dumps(body))
        _raise_for(response, f"Podman could not create the exec session in {ref}")
        return str(response.json()["Id"])

    def attach_exec(
        self, exec_id: str, stdin: bytes | None, stdout: Sink, stderr: Sink
    ) -> ExecChannel:
        """The hijacked ``POST /exec/{id}/start`` stream (``ExecStream``)."""
        from ._exec_stream import ExecStream

        service = self.service
        stream = ExecStream(service.base_url, exec_id, stdin, stdout, stderr)
        return PodmanExec(service, exec_id, stream)

    # ---------------------------------------------------------------- housekeeping
    def list_owned(self) -> list[OwnedSandbox]:
        """``GET /containers/json?all`` filtered by the sandbox label."""
        response = self._api().get(
            "/containers/json",
            params={"all": True, "filters": json.dumps({"label": [f"{SANDBOX_LABEL}=1"]})},
        )
        _raise_for(response, "Could not list the sandbox containers")
        owned: list[OwnedSandbox] = []
        for item in response.json() or []:
            labels = item.get("Labels") or {}
            names = item.get("Names") or [""]
            try:
                pid = int(labels.get(PID_LABEL) or 0)
            except ValueError:
                pid = 0
            owned.append(
                OwnedSandbox(
                    ref=str(item.get("Id") or ""),
                    name=str(names[0]),
                    owner=str(labels.get(OWNER_LABEL) or ""),
                    creator_pid=pid,
                    status=str(item.get("State") or ""),
                )
            )
        return owned


def _demux(data: bytes) -> str:
    """The text of a non-TTY log stream (8-byte frame headers: stream, size)."""
    parts: list[bytes] = []
    while len(data) >= 8 and data[0] in (0, 1, 2) and data[1:4] == b"\0\0\0":
        size = int.from_bytes(data[4:8], "big")
        parts.append(data[8 : 8 + size])
        data = data[8 + size :]
    parts.append(data)
    return b"".join(parts).decode("utf-8", "replace")


def _names_container(path: Path, container_id: str | None) -> bool:
    """Whether the cgroup directory ``path`` is the container's: a component carries its
    full id (``libpod-<id>``, ``libpod-<id>.scope``, or the id itself)."""
    if not container_id or len(container_id) < 64:
        return False
    return any(container_id in part for part in path.parts)
