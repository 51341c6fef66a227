"""``RemotePodmanBackend``: a Podman service that does not share this host's disk or kernel.

Chosen for ``tcp://`` and ``ssh://`` connection URLs. What differs from the local backend:

- the workspace is a named volume on the engine (``o=uid=<uid>,gid=<gid>``: owned by the
  command user without a chown), never a bind mount of a path on this host;
- images missing on the engine are exported from this host's store (``podman save``) and
  loaded through the API (``POST /images/load``): the engine never pulls;
- no cgroup of this host is ever touched: quiescence is engine mode (``kill -9 -1`` as the
  command user from an exec, the engine's process list, then ``pause``);
- the file tools, snapshots and rollback reach the volume through the workspace agent
  (``RemoteWorkspace``, over ``_agent.AgentFilesystem``).

The memory, CPU and pids limits are read back after every create and the sandbox refused
when the engine dropped them (``Container._create_and_start``), as on every backend.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._backend import BackendCaps, SandboxSpec
from ._container import WORKDIR
from ._errors import SandboxError, SandboxImageMissingError, SandboxUnavailableError
from ._podman_backend import PodmanBackend

if TYPE_CHECKING:
    from haversack import Filesystem
    from haversack.filesystem import (
        FileStat,
        GrepResult,
        ReadWindow,
        RollbackReport,
        WorkspaceUsage,
        WriteMode,
    )

    from ._agent import AgentFilesystem
    from ._backend import ContainerState
    from ._cgroup import ContainerCgroup
    from ._config import SandboxConfig
    from ._sandbox import Sandbox

__all__ = [
    "RemotePodmanBackend",
    "RemoteWorkspace",
    "remote_url",
    "volume_name",
]


class _Empty:
    """The snapshot of a workspace volume that does not exist yet: nothing has run in the
    sandbox and no file tool touched it, so it is empty (a remote sandbox takes no mounts)."""

    def __repr__(self) -> str:
        return "<empty workspace>"


_EMPTY: Final = _Empty()


class RemoteWorkspace:
    """The ``Filesystem`` of a remote sandbox: its workspace volume through the workspace
    agent (``AgentFilesystem``), started on first use.

    Nothing is started while the executor opens its resources (they are opened eagerly,
    before any engine is reached). A snapshot taken before the sandbox's first start is
    ``_EMPTY`` (no engine request, so a call's snapshot never waits on an engine the call's
    deadline does not bound yet); restoring it empties the workspace.
    """

    mount_point: Final = WORKDIR

    def __init__(self, backend: RemotePodmanBackend, sandbox: Sandbox) -> None:
        self._backend = backend
        self._sandbox = sandbox
        self._agent: AgentFilesystem | None = None
        self._lock = threading.Lock()

    def agent(self) -> AgentFilesystem:
        """The running agent: the image and the workspace volume made on the engine first."""
        with self._lock:
            if self._agent is None or self._agent.closed:
                from ._agent import AgentFilesystem
                from ._config import PYTHON_IMAGE

                sandbox, backend = self._sandbox, self._backend
                uid, gid = sandbox.config.uid, sandbox.config.gid
                backend.ensure_image(PYTHON_IMAGE)
                backend.ensure_volume(sandbox.name, sandbox.labels(), (uid, gid))
                self._agent = AgentFilesystem(
                    backend.service,
                    volume_name(sandbox.name),
                    uid=uid,
                    gid=gid,
                    image=PYTHON_IMAGE,
                    name=f"{sandbox.name}-agent",
                    labels=sandbox.labels(),
                    guard=sandbox.quiesced,
                )
            return self._agent

    def normalize(self, path: str) -> str:
        """The path as every other method sees it (no agent needed)."""
        from haversack.filesystem import normalize_path

        return normalize_path(path, mount_point=WORKDIR)

    def snapshot(self) -> object:
        """The agent's snapshot, or ``_EMPTY`` before the sandbox first started."""
        if self._agent is None and not self._sandbox.ever_started:
            return _EMPTY
        return self.agent().snapshot()

    def restore(self, snapshot: object) -> RollbackReport | None:
        """Put the workspace back (``_EMPTY``: remove everything in it)."""
        if snapshot is not _EMPTY:
            return self.agent().restore(snapshot)
        if self._agent is None and not self._sandbox.ever_started:
            return None  # still nothing on the engine
        agent = self.agent()
        for entry in agent.list(""):
            agent.delete(entry.path, recursive=True)
        return None

    def discard(self, snapshot: object) -> None:
        """Release a snapshot's storage."""
        if snapshot is not _EMPTY and self._agent is not None:
            self._agent.discard(snapshot)

    def close(self) -> None:
        """Stop the agent (its container and snapshot volume; the workspace volume is the
        sandbox's to remove)."""
        with self._lock:
            agent, self._agent = self._agent, None
        if agent is not None:
            agent.close()

    # The file operations: the agent's, started when first needed.
    def exists(self, path: str) -> bool:
        """See ``Filesystem.exists``."""
        return self.agent().exists(path)

    def stat(self, path: str) -> FileStat:
        """See ``Filesystem.stat``."""
        return self.agent().stat(path)

    def list(self, path: str = "") -> tuple[FileStat, ...]:
        """See ``Filesystem.list``."""
        return self.agent().list(path)

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> ReadWindow:
        """See ``Filesystem.read``."""
        return self.agent().read(path, offset=offset, limit=limit)

    def read_text(self, path: str) -> str:
        """See ``Filesystem.read_text``."""
        return self.agent().read_text(path)

    def write(
        self, path: str, content: str, *, mode: WriteMode = "create", parents: bool = True
    ) -> int:
        """See ``Filesystem.write``."""
        return self.agent().write(path, content, mode=mode, parents=parents)

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        """See ``Filesystem.edit``."""
        return self.agent().edit(path, old, new, replace_all=replace_all)

    def glob(self, pattern: str, *, path: str = "") -> tuple[str, ...]:
        """See ``Filesystem.glob``."""
        return self.agent().glob(pattern, path=path)

    def grep(
        self, pattern: str, *, path: str = "", glob: str | None = None, max_matches: int = 100
    ) -> GrepResult:
        """See ``Filesystem.grep``."""
        return self.agent().grep(pattern, path=path, glob=glob, max_matches=max_matches)

    def delete(self, path: str, *, recursive: bool = False) -> tuple[str, ...]:
        """See ``Filesystem.delete``."""
        return self.agent().delete(path, recursive=recursive)

    def mkdir(self, path: str, *, parents: bool = True, exist_ok: bool = True) -> None:
        """See ``Filesystem.mkdir``."""
        self.agent().mkdir(path, parents=parents, exist_ok=exist_ok)

    def usage(self) -> WorkspaceUsage:
        """See ``AgentFilesystem.usage``."""
        return self.agent().usage()

    def check_quota(self) -> WorkspaceUsage:
        """See ``AgentFilesystem.check_quota``."""
        return self.agent().check_quota()


def volume_name(sandbox_name: str) -> str:
    """The engine volume that holds sandbox ``sandbox_name``'s workspace."""
    return f"{sandbox_name}-workspace"


class RemotePodmanBackend(PodmanBackend):
    """A Podman service reached over ``tcp://`` or ``ssh://`` (the ssh client forwards the
    remote socket to a private local one: ``_service._forward_ssh``)."""

    @property
    def caps(self) -> BackendCaps:
        """Remote Podman: workspace on the engine, no kernel freezer, engine pause."""
        return BackendCaps("podman-remote", False, False, True)

    # ---------------------------------------------------------------- the workspace
    def open_workspace(self, config: SandboxConfig, key: str) -> Path | None:
        """None: the workspace is a volume the engine creates with the container."""
        if config.workspace is not None:
            raise SandboxError(
                f"SandboxConfig.workspace ({config.workspace}) is a directory on this host; "
                f"the Podman engine at {self.connection_url} cannot see it. Leave workspace "
                "unset with a remote engine (the session's workspace is a volume there)."
            )
        if config.mounts:
            raise SandboxError(
                f"SandboxConfig.mounts are copied from this host's disk, which the Podman "
                f"engine at {self.connection_url} cannot see; seed them through the workspace "
                "agent instead (AgentFilesystem.seed)."
            )
        return None

    def workspace_mount(self, spec: SandboxSpec) -> dict[str, Any]:
        """The sandbox's named volume at the working directory."""
        return {"Name": volume_name(spec.name), "Dest": spec.workdir, "Options": ["rw"]}

    def remove_workspace(self, name: str, workspace: Path | None) -> None:
        """Remove the sandbox's volume (only through the API: never a local CLI)."""
        if not self.has_service:
            return  # nothing was ever created on the engine
        with contextlib.suppress(Exception):
            self._api().delete(f"/volumes/{volume_name(name)}", params={"force": True})

    def filesystem(self, container: Sandbox) -> Filesystem:
        """The workspace volume through the workspace agent (started on first use)."""
        return RemoteWorkspace(self, container)

    # ---------------------------------------------------------------- images
    def ensure_image(self, image: str) -> None:
        """Load ``image`` onto the engine from this host's store when the engine lacks it."""
        if self.service.client.images.exists(image):
            return
        from ._images import image_exists
        from ._runtime_dir import runtime_dir

        try:
            local = image_exists(image)
        except SandboxUnavailableError:
            local = False
        if not local:
            raise SandboxImageMissingError(
                f"The sandbox image {image!r} is neither on the Podman engine at "
                f"{self.connection_url} nor in this host's store to load it from (images "
                "are never pulled); build it here (python -m haversack_podman build-images) "
                "or load it on the engine."
            )
        with tempfile.TemporaryDirectory(dir=runtime_dir()) as tmp:
            archive = Path(tmp) / "image.tar"
            self._save(image, archive)
            with archive.open("rb") as data:
                response = self._api().post(
                    "/images/load", data=data, headers={"Content-Type": "application/x-tar"}
                )
        if response.status_code >= 400 or not self.service.client.images.exists(image):
            raise SandboxImageMissingError(
                f"Loading the sandbox image {image!r} onto the Podman engine at "
                f"{self.connection_url} failed: {response.text.strip()[:500]}"
            )

    @staticmethod
    def _save(image: str, archive: Path) -> None:
        from ._containers_conf import podman_env
        from ._service import ENGINE_CAP_S, podman_binary, request_timeout

        limit = min(request_timeout(), ENGINE_CAP_S)
        try:
            proc = subprocess.run(
                [podman_binary(), "save", "--format", "docker-archive", "-o", str(archive), image],
                capture_output=True,
                text=True,
                env=podman_env(),
                check=False,
                timeout=limit,
            )
        except subprocess.TimeoutExpired as exc:
            raise SandboxUnavailableError(
                f"Exporting the sandbox image {image!r} from this host's store took longer "
                f"than {limit:.3g} s."
            ) from exc
        if proc.returncode != 0:
            raise SandboxImageMissingError(
                f"Exporting the sandbox image {image!r} from this host's store failed: "
                f"{proc.stderr.strip()[:500]}"
            )

    # ---------------------------------------------------------------- lifecycle
    def create(self, spec: SandboxSpec) -> str:
        """Load the image if needed, create the workspace volume, then the container."""
        self.ensure_image(spec.image)
        self.ensure_volume(spec.name, spec.labels, spec.workspace_owner)
        return super().create(spec)

    def ensure_volume(
        self, sandbox_name: str, labels: Mapping[str, str], owner: tuple[int, int]
    ) -> str:
        """Create sandbox ``sandbox_name``'s workspace volume, owned by ``owner`` (uid, gid),
        unless it exists (idempotent: the sandbox and its agent both need it first)."""
        name = volume_name(sandbox_name)
        body = {
            "Name": name,
            "Label": dict(labels),
            "Options": {"o": f"uid={owner[0]},gid={owner[1]}"},
        }
        response = self._api().post("/volumes/create", data=json.dumps(body))
        if response.status_code >= 400 and "already exists" not in response.text:
            raise SandboxError(
                f"Creating the workspace volume of sandbox {sandbox_name} failed: "
                f"{response.text.strip()}"
            )
        return name

    def remove(self, ref: str, *, last_resort: bool = False) -> bool:
        """Remove through the API only: the local CLI would act on another engine."""
        if not self.has_service:
            return False
        return super().remove(ref)

    def container_cgroup(self, ref: str, state: ContainerState) -> ContainerCgroup | None:
        """None: a remote container's pid means nothing on this host."""
        return None


def remote_url(connection_url: str | None) -> bool:
    """Whether ``connection_url`` names an engine that does not share this host's disk."""
    if connection_url is None:
        return False
    return connection_url.partition("://")[0].lower() in ("tcp", "http", "ssh")
