"""``RemotePodmanBackend``: a Podman service that does not share this host's disk or kernel.

Chosen for ``tcp://`` and ``ssh://`` connection URLs. What differs from the local backend:

- the workspace is a named volume on the engine (``o=uid=<uid>,gid=<gid>``: owned by the
  command user without a chown), never a bind mount of a path on this host;
- images missing on the engine are exported from this host's store (``podman save``) and
  loaded through the API (``POST /images/load``): the engine never pulls;
- no cgroup of this host is ever touched: quiescence is engine mode (``kill -9 -1`` as the
  command user from an exec, the engine's process list, then ``pause``);
- the file tools reach the volume through the workspace agent (``filesystem``).

The memory, CPU and pids limits are read back after every create and the sandbox refused
when the engine dropped them (``Container._create_and_start``), as on every backend.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from ._backend import BackendCaps, SandboxSpec
from ._container import WORKDIR
from ._errors import SandboxError, SandboxImageMissingError, SandboxUnavailableError
from ._podman_backend import PodmanBackend

if TYPE_CHECKING:
    from haversack import Filesystem

    from ._backend import ContainerState
    from ._cgroup import ContainerCgroup
    from ._config import SandboxConfig
    from ._sandbox import Sandbox

__all__ = [
    "NoAgentFilesystem",
    "RemotePodmanBackend",
    "SandboxWorkspaceAgentError",
    "remote_url",
    "volume_name",
]


class SandboxWorkspaceAgentError(SandboxUnavailableError):
    """The file tools of a sandbox whose workspace lives on a remote engine need the
    workspace agent, which this installation does not provide."""


class NoAgentFilesystem:
    """The workspace of a remote sandbox without the workspace agent: every file operation
    raises ``SandboxWorkspaceAgentError`` naming the fix. Its snapshot is empty and its
    restore does nothing: a failed call's changes to the remote /workspace are not undone."""

    mount_point: Final = WORKDIR

    def __init__(self, url: str) -> None:
        self._url = url

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise SandboxWorkspaceAgentError(
            f"The file tools of a sandbox on the remote Podman engine at {self._url} need "
            "the workspace agent (the workspace is a volume on that engine, not a directory "
            "on this host), which this version does not have. Use shell_execute to read "
            "and write files in /workspace."
        )

    def normalize(self, path: str) -> str:
        """The path as every other method would see it."""
        from haversack.filesystem import normalize_path

        return normalize_path(path, mount_point=WORKDIR)

    def snapshot(self) -> object:
        """Nothing: the workspace is not reachable from here."""
        return None

    def restore(self, snapshot: object) -> None:
        """Nothing to restore (see the class docstring)."""

    exists = stat = list = read = read_text = write = edit = _refuse
    glob = grep = delete = mkdir = _refuse


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
                f"engine at {self.connection_url} cannot see; they need the workspace agent."
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
        """Until the workspace agent (``_agent*``) is plugged in here: a ``Filesystem``
        whose every file operation raises ``SandboxWorkspaceAgentError`` (the executor opens
        its bindings eagerly, so the binding itself must not fail: ``shell_execute`` works)."""
        return NoAgentFilesystem(str(self.connection_url))

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
        uid, gid = spec.workspace_owner
        body = {
            "Name": volume_name(spec.name),
            "Label": dict(spec.labels),
            "Options": {"o": f"uid={uid},gid={gid}"},
        }
        response = self._api().post("/volumes/create", data=json.dumps(body))
        # An interrupted start may have made it already: it is this sandbox's own name.
        if response.status_code >= 400 and "already exists" not in response.text:
            raise SandboxError(
                f"Creating the workspace volume of sandbox {spec.name} failed: "
                f"{response.text.strip()}"
            )
        return super().create(spec)

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
