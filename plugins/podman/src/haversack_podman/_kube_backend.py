"""``KubernetesBackend``: the sandbox backend of a Kubernetes cluster, one Pod per sandbox.

What differs from local Podman (docs/packs/podman.md, "Kubernetes", says it for users):
Kubernetes exec cannot pick a user, so the Pod runs as the command user (PID 1 included);
there is no pause and no kernel freezer, so "quiet" is ``kill -9 -1`` by exec plus a count
of /proc; there is no per-Pod pids limit; a container cannot be restarted through the API,
so ``restart`` kills every process and empties /tmp by exec instead; the workspace is an
``emptyDir`` inside the Pod (the file tools would need the workspace agent in a second
container, driven over an exec whose stdin stays open: not built for Kubernetes yet).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from haversack import check_cancelled

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
from ._kube import KubeApi, create_pod
from ._kube_manifest import COUNT_SCRIPT, SANDBOX_CONTAINER, parse_quantity, pod_manifest
from ._labels import OWNER_LABEL, PID_LABEL, SANDBOX_LABEL
from ._output import CappedBuffer
from ._service import request_timeout

if TYPE_CHECKING:
    from haversack import Filesystem

    from ._cgroup import ContainerCgroup
    from ._config import SandboxConfig
    from ._kube_config import KubernetesConfig
    from ._kube_pool import WarmPool
    from ._sandbox import Sandbox

__all__ = ["KubeExec", "KubernetesBackend"]

_CPU_PERIOD: Final = 100_000
_WAKE_S: Final = 0.1
#: How long an exit code may take to arrive once the stream ended (the status frame
#: follows the output on the same WebSocket, so this is short).
_EXIT_CODE_S: Final = 5.0
#: Kubernetes exec has no working directory or environment: ``sh -c _WRAPPER sh CWD N
#: K=V... ARGV`` enters CWD, exports the N pairs and execs ARGV.
_WRAPPER: Final = (
    'cd -- "$1" || exit 126; n=$2; shift 2; '
    'while [ "$n" -gt 0 ]; do export "$1"; shift; n=$((n - 1)); done; exec "$@"'
)
#: ``restart`` without a restart API: every process of the command user but PID 1 killed,
#: /tmp emptied (PID 1's shell starts a new ``sleep``).
_RESET: Final = (
    "kill -9 -1 2>/dev/null; chmod -R u+rwx /tmp 2>/dev/null; "
    "find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null; "
    'test -z "$(find /tmp -mindepth 1 | head -n 1)"'
)


class KubeExec:
    """One exec's ``ExecChannel``: lightkube's ``Client.exec`` (WebSocket v5, stdin sent
    then closed) run on a thread of its own, output written to the sinks as it arrives.
    ``pump`` waits for it up to a deadline (connecting included); ``close`` abandons one
    still running (its client is closed)."""

    def __init__(self, run: Callable[[Any], int], api: KubeApi, pod: str) -> None:
        self._api = api
        self._pod = pod
        self._client = api.acquire(stream=True)
        client = self._client
        self._done = threading.Event()
        self._code: int | None = None
        self._error: BaseException | None = None

        def work() -> None:
            try:
                self._code = run(client)
            except BaseException as exc:  # noqa: BLE001 - kept for exit_code and the caller
                self._error = exc
            finally:
                self._done.set()

        self._thread = threading.Thread(target=work, name="haversack-kube-exec", daemon=True)
        self._thread.start()

    @property
    def eof(self) -> bool:
        """Whether the exec ended (its status arrived, or the connection failed)."""
        return self._done.is_set()

    @property
    def error(self) -> BaseException | None:
        """Why the exec failed, when it did (None: it ran, or it still runs)."""
        return self._error

    def pump(self, deadline: float, until: Callable[[], bool] | None = None) -> bool:
        """Wait until the exec ends or ``until()`` holds (True), or ``deadline`` (False).
        An exec the cluster refused raises: ``BackendGoneError`` for a Pod that no longer
        exists, ``SandboxError`` otherwise."""
        while not self._done.is_set():
            if until is not None and until():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            check_cancelled()
            self._done.wait(min(remaining, _WAKE_S))
        if self._error is not None:
            raise _exec_error(self._pod, self._error)
        return True

    def send(self, data: bytes, deadline: float) -> bool:
        """lightkube sends stdin in one piece when the exec starts: nothing can follow."""
        return False

    def exit_code(self, *, killed: bool) -> int:
        """The command's exit status; 137 when killed and none arrived, -1 otherwise."""
        self._done.wait(0 if killed else _EXIT_CODE_S)
        if self._code is not None:
            return self._code
        return 137 if killed else -1

    def close(self) -> None:
        """Give the client back once the exec ended; abandon one still running (closing its
        client ends the WebSocket). Idempotent."""
        client, self._client = self._client, None
        if client is None:
            return
        if self._done.is_set() and self._error is None:
            self._api.release(client, stream=True)
            return
        with contextlib.suppress(Exception):
            client.close()


class KubernetesBackend:
    """Sandboxes as Pods of a Kubernetes cluster (``KubernetesConfig``), reached through
    lightkube; one backend may serve many sandboxes (``Sandbox(config, backend=...)``). With
    a :class:`~haversack_podman.WarmPool`, ``create`` takes one of its started Pods, so the
    first command does not wait for a Pod to start."""

    def __init__(
        self,
        kube: KubernetesConfig,
        *,
        pool: WarmPool | None = None,
        api: KubeApi | None = None,
    ) -> None:
        self.kube = kube
        self.pool = pool
        self.api = api if api is not None else (pool.api if pool is not None else KubeApi(kube))
        self._lock = threading.Lock()
        self._execs: dict[str, tuple[str, ExecRequest]] = {}

    def close(self) -> None:
        """Close the idle connections to the API (the Pods are the sandboxes' to delete)."""
        self.api.close()

    @property
    def caps(self) -> BackendCaps:
        """No host workspace, no freezer, no pause, no per-Pod pids limit."""
        return BackendCaps("kubernetes", False, False, False, pids_limit=False)

    # ---------------------------------------------------------------- the workspace
    def open_workspace(self, config: SandboxConfig, key: str) -> Path | None:
        """None: the workspace is an ``emptyDir`` of the Pod. ``mounts`` and a user's
        ``workspace`` directory need the workspace agent, which this backend lacks yet."""
        if config.mounts or config.workspace is not None:
            raise SandboxError(
                "The Kubernetes backend cannot copy mounts or a workspace directory into the "
                "Pod yet (that needs the workspace agent); drop mounts and workspace."
            )
        return None

    def filesystem(self, sandbox: Sandbox) -> Filesystem:
        """Not available yet: the Pod's workspace is reached only by commands."""
        raise SandboxError(
            "The file tools need the workspace agent, which the Kubernetes backend does not "
            "have yet; use shell_execute to read and write files in /workspace."
        )

    # ---------------------------------------------------------------- images
    def ensure_image(self, image: str) -> None:
        """Nothing to do: the nodes pull the image (``image_pull_policy``); a Pod that cannot
        pull it fails to start with the kubelet's reason."""

    # ---------------------------------------------------------------- lifecycle
    def create(self, spec: SandboxSpec) -> str:
        """Take a warm Pod when the pool has one, else create the Pod and its NetworkPolicy;
        returns the Pod's name. Kubernetes starts what it creates: ``start`` waits."""
        if self.pool is not None and self.pool.serves(spec):
            claimed = self.pool.claim()
            if claimed is not None:
                return claimed
        # A name of its own each time: a Pod deleted a moment ago (a recreation) may still
        # be terminating under the sandbox's name.
        name = f"{spec.name}-{uuid.uuid4().hex[:6]}"
        manifest = pod_manifest(replace(spec, name=name), self.kube)
        self.api.create_pod(manifest, _policy(manifest))
        return name

    def start(self, ref: str) -> None:
        """Wait until the Pod runs (``start_timeout_s``); a Pod that cannot is deleted."""
        try:
            self.api.wait_running(ref, time.monotonic() + self.kube.start_timeout_s)
        except BaseException:
            with contextlib.suppress(Exception):
                self.api.delete(ref)
            raise

    def restart(self, ref: str) -> None:
        """No restart API: every process but PID 1 is killed and /tmp emptied by exec; the
        workspace is kept. Raises when that does not succeed (the caller then removes the
        Pod, and the next command gets a new one, workspace included)."""
        code = self._run(ref, ["sh", "-c", _RESET], request_timeout())
        if code != 0:
            raise SandboxError(f"Could not reset the sandbox Pod {ref} (exit code {code}).")

    def pause(self, ref: str) -> None:
        """Kubernetes has no pause: the sandbox stays unused under the sandbox's lock, its
        processes killed by the quiescence that called this."""

    def unpause(self, ref: str) -> None:
        """Nothing to undo (see ``pause``)."""

    def remove(self, ref: str, *, last_resort: bool = False) -> bool:
        """Delete the Pod and its NetworkPolicy; never raises."""
        if self.pool is not None:
            self.pool.start()  # the Pod taken from it is replaced meanwhile
        try:
            self.api.delete(ref)
        except Exception:  # noqa: BLE001 - the contract: never raises
            return False
        return True

    def remove_workspace(self, name: str, workspace: Path | None) -> None:
        """Nothing: the ``emptyDir`` ends with its Pod."""

    def inspect(self, ref: str) -> ContainerState:
        """The Pod's phase and the limits the API holds for its sandbox container."""
        pod = self.api.get_pod(ref)
        if pod is None:
            raise BackendGoneError(f"The sandbox Pod {ref} no longer exists.")
        status = pod.get("status") or {}
        phase = str(status.get("phase") or "")
        states = {s.get("name"): s for s in status.get("containerStatuses") or []}
        sandbox = states.get(SANDBOX_CONTAINER) or {}
        terminated = (sandbox.get("state") or {}).get("terminated") or {}
        containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers", [])}
        limits = (containers.get(SANDBOX_CONTAINER, {}).get("resources") or {}).get("limits")
        memory = (limits or {}).get("memory")
        cpu = (limits or {}).get("cpu")
        running = phase == "Running" and bool(sandbox.get("ready"))
        return ContainerState(
            status="running" if running else ("exited" if terminated else phase.lower()),
            running=running,
            paused=False,
            exit_code=terminated.get("exitCode"),
            error=str(terminated.get("message") or terminated.get("reason") or ""),
            memory_limit=None if memory is None else int(parse_quantity(str(memory))),
            cpu_quota=None if cpu is None else round(parse_quantity(str(cpu)) * _CPU_PERIOD),
            pids_limit=None,
            raw=pod,
        )

    def logs(self, ref: str, tail: int) -> str:
        """The last ``tail`` lines of the sandbox container's log."""

        def read(client: Any) -> str:
            lines = client.log(ref, container=SANDBOX_CONTAINER, tail_lines=tail)
            return "\n".join(lines)

        try:
            return self.api.call(f"GET pods {ref} log", read)
        except Exception:  # noqa: BLE001 - only for an error message
            return ""

    def processes(self, ref: str, timeout: float) -> int | None:
        """How many live processes the sandbox container has, counted from /proc by one exec
        (Kubernetes has no ``top``); None when that does not answer within ``timeout``."""
        out = CappedBuffer(256)
        code = self._run(ref, ["sh", "-c", COUNT_SCRIPT], max(timeout, 0.05), out)
        text = out.text().strip()
        return int(text) if code == 0 and text.isdigit() else None

    def container_cgroup(self, ref: str, state: ContainerState) -> ContainerCgroup | None:
        """None: the cluster's nodes are other kernels."""
        return None

    # ---------------------------------------------------------------- commands
    def create_exec(self, ref: str, request: ExecRequest) -> str:
        """Remember the request: Kubernetes creates and starts an exec in one step, so a
        refusal (a Pod that no longer exists) is raised by the channel's ``pump``."""
        exec_id = uuid.uuid4().hex
        with self._lock:
            self._execs[exec_id] = (ref, request)
        return exec_id

    def attach_exec(
        self, exec_id: str, stdin: bytes | None, stdout: Sink, stderr: Sink
    ) -> ExecChannel:
        """Start the exec over WebSocket v5: ``stdin`` sent, then closed. Kubernetes exec runs
        as the Pod's user (the command user) whatever ``request.user`` says, and an open
        stdin fed later (the resident executor) is refused."""
        with self._lock:
            ref, request = self._execs.pop(exec_id)
        if request.stdin and stdin is None:
            raise SandboxError(
                "The Kubernetes backend sends stdin in one piece, so the resident executor "
                "cannot run there; every command is one exec."
            )
        pairs = list(request.env)
        argv = ["sh", "-c", _WRAPPER, "sh", request.cwd, str(len(pairs)), *pairs]
        argv += list(request.argv)

        def run(client: Any) -> int:
            response = client.exec(
                ref,
                container=SANDBOX_CONTAINER,
                command=argv,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                decode=None,
            )
            return int(response.exit_code)

        return KubeExec(run, self.api, ref)

    def _run(
        self, ref: str, argv: list[str], seconds: float, sink: CappedBuffer | None = None
    ) -> int | None:
        out = sink if sink is not None else CappedBuffer(1024)
        return self.api.exec(
            ref, argv, stdin=None, stdout=out, stderr=out, deadline=time.monotonic() + seconds
        )

    # ---------------------------------------------------------------- housekeeping
    def list_owned(self) -> list[OwnedSandbox]:
        """Every Pod of the namespace with the sandbox label."""
        from lightkube.resources.core_v1 import Pod

        pods = self.api.call("GET pods", lambda c: list(c.list(Pod, labels={SANDBOX_LABEL: "1"})))
        owned = []
        for pod in pods:
            labels = pod.metadata.labels or {}
            try:
                pid = int(labels.get(PID_LABEL) or 0)
            except ValueError:
                pid = 0
            owned.append(
                OwnedSandbox(
                    ref=str(pod.metadata.name),
                    name=str(pod.metadata.name),
                    owner=str(labels.get(OWNER_LABEL) or ""),
                    creator_pid=pid,
                    status=str((pod.status.phase if pod.status else "") or "").lower(),
                )
            )
        return owned


def _exec_error(pod: str, exc: BaseException) -> SandboxError:
    """What a failed exec raises: the Pod is gone, or why the cluster refused it."""
    from httpx2.websockets import WebSocketUpgradeError
    from lightkube import ApiError

    if isinstance(exc, SandboxError):
        return exc
    if isinstance(exc, WebSocketUpgradeError) and exc.response.status_code == 404:
        return BackendGoneError(f"The sandbox Pod {pod} no longer exists.")
    if isinstance(exc, ApiError):
        return SandboxError(
            f"The command could not run in the sandbox Pod {pod}: {exc.status.message}"
        )
    return SandboxError(
        f"The command could not run in the sandbox Pod {pod}: {type(exc).__name__}: {exc}"
    )


def _policy(manifest: dict[str, Any]) -> dict[str, Any]:
    from ._kube_manifest import network_policy

    meta = manifest["metadata"]
    return network_policy(meta["name"], meta["labels"][OWNER_LABEL])


def make_pool_pod(api: KubeApi, spec: SandboxSpec, pool: str) -> str:
    """Create and start one warm pool Pod of ``spec`` (named and owned anew)."""
    owner = uuid.uuid4().hex
    labels = {**spec.labels, OWNER_LABEL: owner}
    name = f"haversack-{owner[:16]}"
    manifest = pod_manifest(replace(spec, name=name, labels=labels), api.kube, pool=pool)
    return create_pod(api, manifest)
