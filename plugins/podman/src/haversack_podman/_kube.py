"""The Kubernetes backend: one Pod per sandbox, commands over ``pods/exec`` (lightkube).

lightkube is the pack's ``kubernetes`` extra and is imported only here, when a backend is
made. Every request is bounded: an API call by the call's deadline (``request_timeout``),
an exec by the deadline it is given; a request that overruns is abandoned (its client is
closed) and reported, never waited for.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from haversack import check_cancelled

from ._errors import SandboxError, SandboxUnavailableError
from ._kube_manifest import (
    QUIESCE_SCRIPT,
    SANDBOX_CONTAINER,
    network_policy,
    parse_quantity,
    pod_manifest,
    resource_limits,
)
from ._output import CappedBuffer
from ._service import request_timeout

if TYPE_CHECKING:
    from ._config import SandboxConfig
    from ._exec_stream import Sink
    from ._kube_config import KubernetesConfig
    from ._kube_pool import WarmPool

__all__ = ["KubeApi", "KubernetesBackend", "PodGoneError"]

_T = TypeVar("_T")
#: How long a bounded request may run past its own timeout before it is abandoned.
_OVERRUN_S: Final = 1.0
_POLL_S: Final = 0.1
#: Waiting reasons of a container that will not start by waiting longer.
_STUCK: Final = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
    }
)
#: Kubernetes exec has no working directory or environment: ``sh -c _WRAPPER sh CWD N
#: K=V... ARGV`` enters CWD, exports the N pairs and execs ARGV.
_WRAPPER: Final = (
    'cd -- "$1" || exit 126; n=$2; shift 2; '
    'while [ "$n" -gt 0 ]; do export "$1"; shift; n=$((n - 1)); done; exec "$@"'
)
_INSTALL_HINT: Final = "install it: pip install 'haversack-podman[kubernetes]'"


class PodGoneError(SandboxError):
    """The sandbox's Pod no longer exists (deleted from outside, or evicted)."""


def _lightkube() -> Any:
    try:
        import lightkube
    except ImportError as exc:
        raise SandboxUnavailableError(
            f"The Kubernetes backend needs the 'lightkube' package; {_INSTALL_HINT}."
        ) from exc
    return lightkube


class KubeApi:
    """One cluster and namespace, reached with lightkube: every request made through
    :meth:`call`, on a client of its own whose timeouts are that request's bound."""

    def __init__(self, kube: KubernetesConfig) -> None:
        lightkube = _lightkube()
        self.kube = kube
        try:
            if kube.kubeconfig is not None:
                loaded = lightkube.KubeConfig.from_file(kube.kubeconfig)
            else:
                loaded = lightkube.KubeConfig.from_env()
            self._config = loaded.get(kube.context)
        except Exception as exc:  # lightkube's ConfigError, a YAML error, an OSError
            where = kube.kubeconfig or "$KUBECONFIG, ~/.kube/config or the service account"
            raise SandboxUnavailableError(
                f"Cannot load the Kubernetes configuration from {where}: {exc}"
            ) from exc
        self.namespace: str = kube.namespace or self._config.namespace or "default"
        self.server: str = str(self._config.cluster.server)

    def _client(self, seconds: float) -> Any:
        import httpx2

        lightkube = _lightkube()
        return lightkube.Client(
            self._config, namespace=self.namespace, timeout=httpx2.Timeout(seconds)
        )

    def call(self, what: str, fn: Callable[[Any], _T], seconds: float | None = None) -> _T:
        """``fn(client)`` on a fresh client, bounded by ``seconds`` (default: the call's
        engine bound); a request still running ``_OVERRUN_S`` after that is abandoned and
        raises ``SandboxUnavailableError``. A cancelled call stops waiting at once."""
        import httpx2

        limit = request_timeout() if seconds is None else max(seconds, 0.001)
        client = self._client(limit)
        outcome: list[tuple[bool, Any]] = []

        def run() -> None:
            try:
                outcome.append((True, fn(client)))
            except httpx2.TransportError as exc:
                # Refused, reset, timed out: lightkube passes httpx2's own errors through.
                unavailable = SandboxUnavailableError(
                    f"The Kubernetes API at {self.server} did not answer {what} within "
                    f"{limit:.3g} s ({type(exc).__name__}: {exc}); check that the cluster "
                    "is reachable."
                )
                unavailable.__cause__ = exc
                outcome.append((False, unavailable))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome.append((False, exc))

        worker = threading.Thread(target=run, name=f"haversack-kube-{what}", daemon=True)
        worker.start()
        until = time.monotonic() + limit + _OVERRUN_S
        try:
            while worker.is_alive():
                remaining = until - time.monotonic()
                if remaining <= 0:
                    raise SandboxUnavailableError(
                        f"The Kubernetes API at {self.server} did not answer {what} within "
                        f"{limit:.3g} s; check that the cluster is reachable."
                    )
                check_cancelled()
                worker.join(min(remaining, _POLL_S))
        finally:
            # Closing the client also ends an abandoned request's sockets.
            with contextlib.suppress(Exception):
                client.close()
        ok, value = outcome[0]
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    # ------------------------------------------------------------------ objects
    def create_pod(self, manifest: dict[str, Any], policy: dict[str, Any]) -> None:
        """Create the deny-all NetworkPolicy, then the Pod it selects (so the Pod never runs
        without it)."""
        from lightkube.resources.core_v1 import Pod
        from lightkube.resources.networking_v1 import NetworkPolicy

        name = manifest["metadata"]["name"]
        self._checked(
            f"POST networkpolicies {name}",
            lambda c: c.create(NetworkPolicy.from_dict(policy)),
        )
        self._checked(f"POST pods {name}", lambda c: c.create(Pod.from_dict(manifest)))

    def get_pod(self, name: str) -> dict[str, Any] | None:
        """The Pod as the API returns it, or None when it does not exist."""
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod

        try:
            pod = self.call(f"GET pods {name}", lambda c: c.get(Pod, name))
        except ApiError as exc:
            if exc.status.code == 404:
                return None
            raise self._error(f"GET pods {name}", exc) from exc
        return pod.to_dict()  # type: ignore[no-any-return]

    def delete(self, name: str) -> None:
        """Delete the Pod (no grace period) and its NetworkPolicy; a missing one is fine."""
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod
        from lightkube.resources.networking_v1 import NetworkPolicy

        kinds: tuple[tuple[Any, str], ...] = ((Pod, "pods"), (NetworkPolicy, "networkpolicies"))
        for kind, label in kinds:

            def delete(client: Any, kind: Any = kind) -> None:
                client.delete(kind, name, grace_period=0)

            try:
                self.call(f"DELETE {label} {name}", delete)
            except ApiError as exc:
                if exc.status.code != 404:
                    raise self._error(f"DELETE {label} {name}", exc) from exc

    def wait_running(self, name: str, limits: Mapping[str, str], deadline: float) -> None:
        """Wait until the Pod runs and its sandbox container is ready, then check that the
        limits the API returns are the ones asked for; raise with the reason otherwise."""
        while True:
            pod = self.get_pod(name)
            if pod is None:
                raise PodGoneError(f"The sandbox Pod {name} disappeared while starting.")
            status = pod.get("status") or {}
            phase = status.get("phase")
            states = {s.get("name"): s for s in status.get("containerStatuses") or []}
            sandbox = states.get(SANDBOX_CONTAINER) or {}
            waiting = (sandbox.get("state") or {}).get("waiting") or {}
            if phase in ("Failed", "Succeeded") or waiting.get("reason") in _STUCK:
                why = waiting.get("message") or waiting.get("reason") or status.get("reason")
                raise SandboxError(
                    f"The sandbox Pod {name} cannot run (phase {phase}: {why or 'no reason'})."
                )
            if phase == "Running" and sandbox.get("ready"):
                self._check_limits(name, pod, limits)
                return
            if time.monotonic() >= deadline:
                raise SandboxUnavailableError(
                    f"The sandbox Pod {name} was not running after "
                    f"{self.kube.start_timeout_s:.3g} s (phase {phase or 'unknown'}"
                    f"{', ' + waiting['reason'] if waiting.get('reason') else ''})."
                )
            check_cancelled()
            time.sleep(_POLL_S)

    def _check_limits(self, name: str, pod: dict[str, Any], asked: Mapping[str, str]) -> None:
        containers = {c.get("name"): c for c in pod.get("spec", {}).get("containers", [])}
        got = (containers.get(SANDBOX_CONTAINER, {}).get("resources") or {}).get("limits") or {}
        wrong = []
        for key, value in asked.items():
            have = got.get(key)
            if have is None or parse_quantity(str(have)) != parse_quantity(value):
                wrong.append(f"{key}: asked {value}, the cluster has {have!r}")
        if wrong:
            raise SandboxError(
                f"The cluster changed the limits of the sandbox Pod {name} ({'; '.join(wrong)}); "
                "an admission policy or LimitRange rewrote them. The sandbox is refused rather "
                "than run with limits other than configured."
            )

    def _checked(self, what: str, fn: Callable[[Any], Any]) -> Any:
        from lightkube import ApiError

        try:
            return self.call(what, fn)
        except ApiError as exc:
            raise self._error(what, exc) from exc

    def _error(self, what: str, exc: Any) -> SandboxError:
        status = exc.status
        return SandboxError(
            f"The Kubernetes API refused {what} in namespace {self.namespace} "
            f"({status.code} {status.reason}): {status.message}"
        )

    # ------------------------------------------------------------------ exec
    def exec(
        self,
        pod: str,
        argv: Sequence[str],
        *,
        stdin: bytes | None,
        stdout: Sink,
        stderr: Sink,
        deadline: float,
        container: str = SANDBOX_CONTAINER,
    ) -> int | None:
        """Run ``argv`` in the Pod's container over WebSocket v5 (stdin closed after
        ``stdin``), output to the sinks as it arrives: the exit code, or None when the
        deadline passed first (the command may still run: quiesce the sandbox)."""
        import httpx2
        from httpx2.websockets import WebSocketUpgradeError
        from lightkube import ApiError

        seconds = max(deadline - time.monotonic(), 0.001)

        def run(client: Any) -> int | None:
            try:
                response = client.exec(
                    pod,
                    container=container,
                    command=list(argv),
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    decode=None,
                    timeout=seconds,
                )
            except (TimeoutError, httpx2.TimeoutException):
                return None
            return int(response.exit_code)

        try:
            return self.call(f"exec in {pod}", run, seconds)
        except SandboxUnavailableError:
            if time.monotonic() >= deadline:
                return None
            raise
        except WebSocketUpgradeError as exc:
            code = exc.response.status_code
            if code == 404:
                raise PodGoneError(f"The sandbox Pod {pod} no longer exists.") from exc
            raise SandboxError(
                f"The Kubernetes API refused an exec in {pod} (HTTP {code})."
            ) from exc
        except ApiError as exc:
            raise SandboxError(
                f"The command could not run in the sandbox Pod {pod}: {exc.status.message}"
            ) from exc


class KubernetesBackend:
    """One sandbox as one Pod: created (or taken from a :class:`WarmPool`) on ``start``,
    commands run with :meth:`exec`, :meth:`quiesce` between commands, deleted by
    :meth:`remove`. Not thread-safe: the sandbox above it runs one command at a time."""

    kind: Final = "kubernetes"

    def __init__(
        self,
        config: SandboxConfig,
        kube: KubernetesConfig,
        *,
        api: KubeApi | None = None,
        pool: WarmPool | None = None,
    ) -> None:
        self.config = config
        self.kube = kube
        self.api = api if api is not None else KubeApi(kube)
        self.pool = pool
        self.id = uuid.uuid4().hex
        #: The Pod serving this sandbox, once started.
        self.pod: str | None = None
        #: Why the last :meth:`quiesce` failed (empty when it succeeded).
        self.unquiet = ""

    def start(self) -> str:
        """Make sure a Pod runs for this sandbox (idempotent); returns its name. A warm
        pool's ready Pod is taken when there is one."""
        if self.pod is not None:
            return self.pod
        if self.pool is not None:
            claimed = self.pool.claim()
            if claimed is not None:
                self.pod = claimed
                return claimed
        self.pod = create_pod(self.api, self.config, owner=self.id)
        return self.pod

    def exec(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None,
        stdout: Sink,
        stderr: Sink,
        deadline: float,
        cwd: str = "/workspace",
        env: Mapping[str, str] | None = None,
    ) -> int | None:
        """Run one command in the sandbox container as the command user (Kubernetes exec
        takes no directory, environment or user: the first two are set by a ``sh`` wrapper,
        the user is the container's): its exit code, or None at the deadline."""
        pod = self.start()
        pairs = [f"{key}={value}" for key, value in (env or {}).items()]
        wrapped = ["sh", "-c", _WRAPPER, "sh", cwd, str(len(pairs)), *pairs, *argv]
        return self.api.exec(
            pod, wrapped, stdin=stdin, stdout=stdout, stderr=stderr, deadline=deadline
        )

    def quiesce(self, deadline: float) -> bool:
        """Kill every process of the command user in the sandbox container except PID 1
        (``kill -9 -1``, run as that user) and check /proc: True when nothing is left.
        There is no freezer: see docs/packs/podman.md for what this guarantees."""
        if self.pod is None:
            return True
        out = CappedBuffer(4096)
        code = self.api.exec(
            self.pod, ["sh", "-c", QUIESCE_SCRIPT], stdin=None, stdout=out, stderr=out,
            deadline=deadline,
        )  # fmt: skip
        self.unquiet = "" if code == 0 else f"exit code {code}: {out.text().strip()}"
        return code == 0

    def recreate(self) -> str:
        """Replace the Pod by a new one (``emptyDir`` volumes, the workspace with them, do
        not survive); returns the new Pod's name."""
        self.remove()
        return self.start()

    def remove(self) -> None:
        """Delete the Pod and its NetworkPolicy (idempotent)."""
        pod, self.pod = self.pod, None
        if pod is not None:
            self.api.delete(pod)


def create_pod(api: KubeApi, config: SandboxConfig, *, owner: str, pool: str | None = None) -> str:
    """Create one sandbox Pod and its NetworkPolicy and wait until it runs with the limits
    asked for; returns its name. On any failure both are deleted again."""
    name = f"haversack-{uuid.uuid4().hex[:16]}"
    manifest = pod_manifest(name, owner, config, api.kube, pool=pool)
    deadline = time.monotonic() + api.kube.start_timeout_s
    try:
        api.create_pod(manifest, network_policy(name, owner))
        api.wait_running(name, resource_limits(config), deadline)
    except BaseException:
        with contextlib.suppress(Exception):
            api.delete(name)
        raise
    return name
