"""The Kubernetes API as the Kubernetes backend reaches it (lightkube): Pods, their
NetworkPolicies and ``pods/exec``.

lightkube is the pack's ``kubernetes`` extra and is imported only by this module and
``_kube_backend``, when a backend is made. Every request is bounded: an API call by the
call's deadline (``request_timeout``), an exec by the deadline it is given; a request that
overruns is abandoned (its client is closed) and reported, never waited for.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from haversack import check_cancelled

from ._backend import BackendGoneError
from ._errors import SandboxError, SandboxUnavailableError
from ._kube_manifest import SANDBOX_CONTAINER, network_policy
from ._labels import OWNER_LABEL
from ._service import ENGINE_CAP_S, request_timeout

if TYPE_CHECKING:
    from ._backend import Sink
    from ._kube_config import KubernetesConfig

__all__ = ["KubeApi", "create_pod"]

_T = TypeVar("_T")
#: How long a bounded request may run past its own timeout before it is abandoned.
_OVERRUN_S: Final = 1.0
_POLL_S: Final = 0.1
#: Idle clients kept per kind (requests, streams) for reuse.
_IDLE_CLIENTS: Final = 4
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
        self._lock = threading.Lock()
        self._idle: dict[bool, list[Any]] = {False: [], True: []}
        # Idle clients hold connections: closed with the API object at the latest.
        self._finalizer = weakref.finalize(self, _close_all, self._idle)

    def new_client(self, *, stream: bool) -> Any:
        """A new lightkube ``Client``. Its own timeouts only bound an abandoned request's
        thread (``ENGINE_CAP_S``; none for reading a ``stream``, a command that may be quiet
        for long): callers bound what they wait for themselves (:meth:`call`, ``pump``)."""
        import httpx2

        lightkube = _lightkube()
        timeout = httpx2.Timeout(ENGINE_CAP_S, read=None if stream else ENGINE_CAP_S)
        return lightkube.Client(self._config, namespace=self.namespace, timeout=timeout)

    def acquire(self, *, stream: bool = False) -> Any:
        """An idle client (making one costs about 0.1 s: its TLS set-up), or a new one."""
        with self._lock:
            idle = self._idle[stream]
            if idle:
                return idle.pop()
        return self.new_client(stream=stream)

    def release(self, client: Any, *, stream: bool = False) -> None:
        """Give back a client whose requests all ended (one abandoned mid-request is closed
        instead, which also ends its sockets)."""
        with self._lock:
            idle = self._idle[stream]
            if len(idle) < _IDLE_CLIENTS:
                idle.append(client)
                return
        with contextlib.suppress(Exception):
            client.close()

    def close(self) -> None:
        """Close every idle client (idempotent; the API stays usable)."""
        with self._lock:
            _close_all(self._idle)

    def call(
        self,
        what: str,
        fn: Callable[[Any], _T],
        seconds: float | None = None,
        *,
        stream: bool = False,
    ) -> _T:
        """``fn(client)`` bounded by ``seconds`` (default: the call's engine bound,
        ``request_timeout``): a request still running ``_OVERRUN_S`` after that is abandoned
        (its client closed) and raises ``SandboxUnavailableError``. A cancelled call stops
        waiting at once."""
        import httpx2

        limit = request_timeout() if seconds is None else max(seconds, 0.001)
        client = self.acquire(stream=stream)
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
        except BaseException:
            with contextlib.suppress(Exception):
                client.close()  # ends the abandoned request's sockets
            raise
        ok, value = outcome[0]
        if ok or not isinstance(value, SandboxUnavailableError):
            self.release(client, stream=stream)
        else:
            with contextlib.suppress(Exception):
                client.close()
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    # ------------------------------------------------------------------ objects
    def create_pod(self, manifest: dict[str, Any], policy: dict[str, Any]) -> None:
        """Create the deny-all NetworkPolicy, then the Pod it selects (so the Pod never runs
        without it); when the Pod is refused, the policy is deleted again."""
        from lightkube.resources.core_v1 import Pod
        from lightkube.resources.networking_v1 import NetworkPolicy

        name = manifest["metadata"]["name"]
        self._checked(
            f"POST networkpolicies {name}",
            lambda c: c.create(NetworkPolicy.from_dict(policy)),
        )
        try:
            self._checked(f"POST pods {name}", lambda c: c.create(Pod.from_dict(manifest)))
        except BaseException:
            with contextlib.suppress(Exception):
                self.delete(name)  # the policy made for it (and a Pod half made)
            raise

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

    def wait_running(self, name: str, deadline: float) -> None:
        """Wait until the Pod runs and its sandbox container is ready; raise with the
        reason when it cannot start or ``deadline`` passes."""
        while True:
            pod = self.get_pod(name)
            if pod is None:
                raise BackendGoneError(f"The sandbox Pod {name} disappeared while starting.")
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
                return
            if time.monotonic() >= deadline:
                raise SandboxUnavailableError(
                    f"The sandbox Pod {name} was not running after "
                    f"{self.kube.start_timeout_s:.3g} s (phase {phase or 'unknown'}"
                    f"{', ' + waiting['reason'] if waiting.get('reason') else ''})."
                )
            check_cancelled()
            time.sleep(_POLL_S)

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
            return self.call(f"exec in {pod}", run, seconds, stream=True)
        except SandboxUnavailableError:
            if time.monotonic() >= deadline:
                return None
            raise
        except WebSocketUpgradeError as exc:
            code = exc.response.status_code
            if code == 404:
                raise BackendGoneError(f"The sandbox Pod {pod} no longer exists.") from exc
            raise SandboxError(
                f"The Kubernetes API refused an exec in {pod} (HTTP {code})."
            ) from exc
        except ApiError as exc:
            raise SandboxError(
                f"The command could not run in the sandbox Pod {pod}: {exc.status.message}"
            ) from exc


def _close_all(idle: dict[bool, list[Any]]) -> None:
    for clients in idle.values():
        while clients:
            with contextlib.suppress(Exception):
                clients.pop().close()


def create_pod(api: KubeApi, manifest: dict[str, Any]) -> str:
    """Create a sandbox Pod and its NetworkPolicy and wait until it runs; returns its name.
    On any failure both are deleted again."""
    name = str(manifest["metadata"]["name"])
    owner = str(manifest["metadata"]["labels"][OWNER_LABEL])
    deadline = time.monotonic() + api.kube.start_timeout_s
    try:
        api.create_pod(manifest, network_policy(name, owner))
        api.wait_running(name, deadline)
    except BaseException:
        with contextlib.suppress(Exception):
            api.delete(name)
        raise
    return name
