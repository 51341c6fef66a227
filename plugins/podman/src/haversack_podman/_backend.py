"""``SandboxBackend``: what an engine provides to a sandbox (the seam under ``Container``).

``Container`` and ``Sandbox`` keep everything that is the same on every engine: when to start,
restart or recreate, the command's timeout and output caps, the retry after a failed exec, the
resident executor's protocol, the baseline bookkeeping and the ``quiesced()`` guarantee. A
backend only does what its engine does: create, start, restart, pause and remove the container,
inspect it, count its processes, open an exec channel into it, load images, say which
``Filesystem`` is the workspace, and list the sandboxes it owns.

Implementations (``Container`` picks one from ``connection_url``: ``make_backend``, unless a
backend is given): ``PodmanBackend`` (``_podman_backend``: a Podman service on this host, the
workspace a host directory bind-mounted into the container), ``RemotePodmanBackend``
(``_remote_backend``: ``tcp://`` and ``ssh://``, the workspace a volume on the engine) and
``KubernetesBackend`` (``_kube_backend``: one Pod per sandbox, reached through lightkube).

Every engine request a backend makes is bounded by the caller's deadline
(:func:`haversack_podman._service.engine_deadline` / ``request_timeout``): a backend never
waits longer than ``request_timeout()`` for one answer and raises ``SandboxUnavailableError``
naming the request when the engine does not answer in time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ._errors import SandboxError

if TYPE_CHECKING:
    from haversack import Filesystem

    from ._cgroup import ContainerCgroup
    from ._config import SandboxConfig
    from ._sandbox import Sandbox

__all__ = [
    "BackendCaps",
    "BackendGoneError",
    "ContainerState",
    "ExecChannel",
    "ExecRequest",
    "OwnedSandbox",
    "SandboxBackend",
    "SandboxSpec",
    "Sink",
]


class BackendGoneError(SandboxError):
    """The engine no longer knows the container (removed from outside): the caller forgets it
    and creates it anew, keeping the workspace."""


@dataclass(frozen=True, slots=True)
class BackendCaps:
    """What a backend can guarantee; ``Container`` picks its quiescence and checks from it.

    - ``kind``: ``"podman-local"``, ``"podman-remote"`` or ``"kubernetes"``.
    - ``host_workspace``: the workspace is a directory on this host (``Container.workspace``),
      seen by the container through a bind mount; otherwise it lives on the engine (a volume)
      and only the backend's ``filesystem`` reaches it.
    - ``kernel_freezer``: the engine may share this kernel, so ``container_cgroup`` may find
      the container's cgroup (freeze, list every task, SIGKILL); otherwise "quiet" is engine
      mode: ``kill -9 -1`` as the command user, the process count, then ``pause``.
    - ``engine_pause``: the engine can pause a container (Podman yes, Kubernetes no: there the
      sandbox is only kept unused under the lock once its processes are killed).
    - ``pids_limit``: the engine applies a per-sandbox pids limit (Kubernetes has none: the
      node's ``podPidsLimit`` applies), so ``dropped_limits`` checks it.
    """

    kind: str
    host_workspace: bool
    kernel_freezer: bool
    engine_pause: bool
    pids_limit: bool = True


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """An engine-neutral description of a sandbox container; the backend translates it (a
    libpod SpecGenerator, a Pod manifest) and must apply every field or fail.

    The container runs ``command`` (``sleep infinity``) under an init, both as
    ``baseline_user`` (``"uid:gid"``), with no network unless ``network`` says otherwise, no
    capabilities but ``cap_add``, no new privileges, a read-only root when ``read_only``, a
    tmpfs ``/tmp`` of ``tmpfs_size`` and the memory (swap = memory), CPU and pids limits. The
    workspace is mounted read-write at ``workdir``: ``workspace`` (a host directory) when the
    backend has ``host_workspace``, else the backend's own volume owned by ``workspace_owner``.
    """

    name: str
    image: str
    command: tuple[str, ...]
    labels: Mapping[str, str]
    baseline_user: str
    env: Mapping[str, str]
    read_only: bool
    tmpfs_size: str
    network: str
    memory_bytes: int
    cpu_quota: int
    cpu_period: int
    pids_limit: int
    workdir: str
    workspace: Path | None
    workspace_owner: tuple[int, int]
    hostname: str = "sandbox"
    cap_add: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContainerState:
    """What ``inspect`` tells: the container's status and its *effective* limits (as the
    engine applied them, ``None`` when it does not say; compared with the spec by
    ``dropped_limits``). ``pid`` is init's pid as the engine sees it (only meaningful with
    ``kernel_freezer``); ``raw`` is the engine's own answer, for diagnostics."""

    status: str  # "created", "running", "paused", "exited", "stopped", ...
    running: bool
    paused: bool
    pid: int = 0
    exit_code: int | None = None
    error: str = ""
    memory_limit: int | None = None
    cpu_quota: int | None = None
    pids_limit: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """One process to start in the container: ``argv`` as ``user`` (``"uid:gid"``) in ``cwd``
    with ``env`` (``KEY=value`` pairs, added to the container's). ``stdin``: whether the
    channel carries the process's stdin."""

    argv: tuple[str, ...]
    user: str
    cwd: str = "/"
    env: tuple[str, ...] = ()
    stdin: bool = False


@dataclass(frozen=True, slots=True)
class OwnedSandbox:
    """A sandbox container this backend's engine holds with the pack's labels."""

    ref: str
    name: str
    owner: str
    creator_pid: int
    status: str


class Sink(Protocol):
    """Where one output stream's bytes go (a ``CappedBuffer``, or a frame decoder)."""

    def write(self, data: bytes, /) -> None: ...


class ExecChannel(Protocol):
    """The attached stream of one started process: stdin in, stdout and stderr out to the
    sinks given to ``attach_exec``. Every wait stops at its deadline and checks for
    cancellation at least every 0.1 s (``haversack.check_cancelled``)."""

    @property
    def eof(self) -> bool:
        """Whether the stream ended (the process closed its output, or the engine the
        connection)."""
        ...

    def pump(self, deadline: float, until: Callable[[], bool] | None = None) -> bool:
        """Move data until the stream ends or ``until()`` holds (True), or until
        ``time.monotonic()`` reaches ``deadline`` (False)."""
        ...

    def send(self, data: bytes, deadline: float) -> bool:
        """Write ``data`` to stdin (kept open); False when the deadline passed or the peer is
        gone. Output arriving meanwhile is read, so neither side blocks the other."""
        ...

    def exit_code(self, *, killed: bool) -> int:
        """The process's exit status once it ended (waits a little for the engine to record
        it: briefly when ``killed``); 137 when killed and none is known, -1 otherwise."""
        ...

    def close(self) -> None:
        """Close the stream (idempotent); the process reads EOF on its stdin."""
        ...


class SandboxBackend(Protocol):
    """An engine that runs sandbox containers. ``ref`` is the engine's id of a container (or
    its name before the id is known). Raises ``BackendGoneError`` when the engine no longer
    knows ``ref``, ``SandboxUnavailableError`` when it does not answer in time (see the module
    docstring), ``SandboxError`` for anything else it refuses."""

    @property
    def caps(self) -> BackendCaps:
        """What this backend guarantees (may contact the engine the first time)."""
        ...

    # ---------------------------------------------------------------- the workspace
    def open_workspace(self, config: SandboxConfig, key: str) -> Path | None:
        """Make the session's workspace before any container exists (``key`` is unique per
        sandbox): the host directory for ``host_workspace`` backends (with
        ``config.mounts`` copied in), else None (the backend creates its volume in
        ``create``). No engine request."""
        ...

    def filesystem(self, sandbox: Sandbox) -> Filesystem:
        """The ``Filesystem`` of the sandbox's workspace, bound by ``_resources``: every
        operation runs under ``sandbox.quiesced()``, so no sandbox process runs meanwhile,
        and snapshots/restores are the workspace's (the executor's per-call rollback)."""
        ...

    # ---------------------------------------------------------------- images
    def ensure_image(self, image: str) -> None:
        """Make ``image`` available to the engine (check it exists locally; load it onto a
        remote engine through its API) or raise ``SandboxImageMissingError`` with the fix."""
        ...

    # ---------------------------------------------------------------- lifecycle
    def create(self, spec: SandboxSpec) -> str:
        """Create (not start) the container and what it needs (its workspace volume); returns
        its id. A leftover of the same name (an interrupted start) is removed first: names
        are unique per sandbox. A missing image raises ``SandboxImageMissingError``."""
        ...

    def start(self, ref: str) -> None:
        """Start a created or stopped container."""
        ...

    def restart(self, ref: str) -> None:
        """Restart at once: every process dies, ``/tmp`` is emptied, the workspace is kept."""
        ...

    def pause(self, ref: str) -> None:
        """Freeze every process of the container through the engine (``engine_pause``)."""
        ...

    def unpause(self, ref: str) -> None:
        """Undo ``pause``."""
        ...

    def remove(self, ref: str, *, last_resort: bool = False) -> bool:
        """Remove the container by force (not its workspace); True when it is gone (also when
        it was already), False when the engine would not say. ``last_resort`` (teardown,
        also at interpreter exit): try every way there is, the engine may already be gone.
        Never raises."""
        ...

    def remove_workspace(self, name: str, workspace: Path | None) -> None:
        """Remove the session's workspace: the host directory ``open_workspace`` made (never
        a user's own directory), or the engine volume of sandbox ``name``. Never raises."""
        ...

    def inspect(self, ref: str) -> ContainerState:
        """The container's state and effective limits."""
        ...

    def logs(self, ref: str, tail: int) -> str:
        """The last ``tail`` lines of the container's own output (for an error message)."""
        ...

    def processes(self, ref: str, timeout: float) -> int | None:
        """How many processes the engine lists in the container, or None when it could not say
        within ``timeout`` seconds."""
        ...

    def container_cgroup(self, ref: str, state: ContainerState) -> ContainerCgroup | None:
        """The container's cgroup on this host, only when the engine proves it shares this
        kernel (``kernel_freezer``); None means engine-mode quiescence."""
        ...

    # ---------------------------------------------------------------- commands
    def create_exec(self, ref: str, request: ExecRequest) -> str:
        """Prepare a process in the running container; returns the exec's id. The engine
        refusing (a dead container) raises here, before anything ran."""
        ...

    def attach_exec(
        self, exec_id: str, stdin: bytes | None, stdout: Sink, stderr: Sink
    ) -> ExecChannel:
        """Start the prepared process and attach to it. ``stdin`` is sent then closed; with
        None and ``ExecRequest.stdin`` the channel's ``send`` feeds it instead."""
        ...

    # ---------------------------------------------------------------- housekeeping
    def list_owned(self) -> list[OwnedSandbox]:
        """Every sandbox container of the pack's labels on this engine (for cleanup)."""
        ...
