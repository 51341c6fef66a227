"""``WarmPool``: sandbox Pods created and started ahead of time, so a first command does not
wait for a Pod to be scheduled, pull its image and start."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import deque
from typing import TYPE_CHECKING, Final

from ._kube import KubeApi

if TYPE_CHECKING:
    from ._backend import SandboxSpec
    from ._config import SandboxConfig
    from ._kube_config import KubernetesConfig

__all__ = ["WarmPool"]

#: Longest ``close`` waits for a refill under way before deleting what is left.
_CLOSE_WAIT_S: Final = 30.0


class WarmPool:
    """Keeps ``kube.warm_pool`` started sandbox Pods (one ``SandboxConfig`` for all) ready.

    A ``KubernetesBackend`` given the pool takes one for each new sandbox (:meth:`claim`;
    the Pod is then the sandbox's, deleted with it) and a background thread starts a
    replacement; with none ready the backend creates its own Pod. Each Pod is new (never
    reused across sessions, so nothing of one session reaches another). Only sandboxes whose
    Pod would be the same (:meth:`serves`) take one. :meth:`close` deletes the Pods never
    claimed.
    """

    def __init__(
        self, config: SandboxConfig, kube: KubernetesConfig, *, api: KubeApi | None = None
    ) -> None:
        from ._container import sandbox_spec

        self.config = config
        self.size = kube.warm_pool
        self.api = api if api is not None else KubeApi(kube)
        self.id = uuid.uuid4().hex[:16]
        self._spec = sandbox_spec(config, name="pool", owner=self.id, workspace=None)
        self._ready: deque[str] = deque()
        self._lock = threading.Lock()
        self._closed = False
        self._refill: threading.Thread | None = None
        #: The last error a refill met (the pool then stays short until the next claim).
        self.error: BaseException | None = None

    @property
    def ready(self) -> list[str]:
        """The names of the Pods ready to be claimed now."""
        with self._lock:
            return list(self._ready)

    def fill(self) -> None:
        """Create Pods until ``size`` are ready (each bounded by ``start_timeout_s``); the
        first failure is recorded in :attr:`error` and raised."""
        from ._kube_backend import make_pool_pod

        while True:
            with self._lock:
                if self._closed or len(self._ready) >= self.size:
                    return
            try:
                name = make_pool_pod(self.api, self._spec, self.id)
            except BaseException as exc:
                self.error = exc
                raise
            if not self._keep(name):
                self.api.delete(name)  # closed meanwhile
                return

    def _keep(self, name: str) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._ready.append(name)
            return True

    def start(self) -> None:
        """Fill the pool in the background (returns at once)."""
        with self._lock:
            if self._closed or (self._refill is not None and self._refill.is_alive()):
                return
            self._refill = threading.Thread(
                target=self._fill_quietly, name=f"haversack-pool-{self.id}", daemon=True
            )
            self._refill.start()

    def _fill_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self.fill()

    def wait(self, timeout: float) -> bool:
        """Wait for a background fill to finish; True when the pool is full."""
        refill = self._refill
        if refill is not None:
            refill.join(timeout)
        with self._lock:
            return len(self._ready) >= self.size

    def serves(self, spec: SandboxSpec) -> bool:
        """Whether this pool's Pods are what ``spec`` asks for (the same Pod spec: image,
        user, limits, environment...), so one may stand in for it."""
        from ._kube_manifest import pod_manifest

        kube = self.api.kube
        return bool(pod_manifest(spec, kube)["spec"] == pod_manifest(self._spec, kube)["spec"])

    def claim(self) -> str | None:
        """A ready Pod's name, now the caller's, or None when none is ready; a replacement
        starts in the background."""
        with self._lock:
            name = self._ready.popleft() if self._ready else None
        self.start()
        return name

    def close(self) -> None:
        """Stop refilling and delete every Pod never claimed (idempotent)."""
        with self._lock:
            self._closed = True
            refill = self._refill
        if refill is not None:
            refill.join(_CLOSE_WAIT_S)
        with self._lock:
            names = list(self._ready)
            self._ready.clear()
        for name in names:
            with contextlib.suppress(Exception):
                self.api.delete(name)
        self.api.close()
