"""The Podman REST service: a configured URL, or one private ``podman system service``."""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlparse

from ._containers_conf import podman_env
from ._errors import SandboxImageMissingError, SandboxUnavailableError
from ._runtime_dir import runtime_dir

__all__ = [
    "ENGINE_CAP_S",
    "PodmanService",
    "engine_deadline",
    "ensure_image",
    "get_service",
    "podman_binary",
    "shutdown_services",
]

_INSTALL_HINT: Final = (
    "install it: apt-get install --no-install-recommends podman runc conmon catatonit "
    "busybox-static netavark (or, as root: python -m haversack_podman setup)"
)
_BUILD_HINT: Final = "build it: python -m haversack_podman build-images"
_START_TIMEOUT_S: Final = 15.0
#: Longest one request to the engine may take; also the bound when no call's deadline applies
#: (closing, cleanup, the file tools' quiescence).
ENGINE_CAP_S: Final = 30.0
#: The least one request gets once the call's deadline has passed: the clean-up after a
#: timed-out command (kill, check, pause, remove) must still reach a slow engine.
_FLOOR_S: Final = 2.0

_deadline: ContextVar[float | None] = ContextVar("haversack_podman_engine_deadline", default=None)


@contextlib.contextmanager
def engine_deadline(seconds: float) -> Iterator[None]:
    """Bound every engine request made inside the block (in this thread): none waits past
    ``seconds`` from now (or ``_FLOOR_S`` once that has passed), none longer than
    ``ENGINE_CAP_S``. Connecting to a ``connection_url`` service is bounded the same way."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def request_timeout() -> float:
    """How long the next engine request may wait, in seconds."""
    deadline = _deadline.get()
    if deadline is None:
        return ENGINE_CAP_S
    return min(ENGINE_CAP_S, max(deadline - time.monotonic(), _FLOOR_S))


class _BoundedAPI:
    """podman-py's ``APIClient`` with every request bounded by :func:`request_timeout`; a
    request the engine does not answer in time (or at all) raises ``SandboxUnavailableError``
    naming it, instead of podman-py's 60 s default or a hang."""

    def __init__(self, api: Any, url: str) -> None:
        self._api = api
        self._url = url

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    def _send(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        limit = request_timeout()
        given = kwargs.get("timeout")
        if isinstance(given, int | float):
            limit = min(limit, float(given))
        kwargs["timeout"] = limit
        try:
            return getattr(self._api, method)(path, *args, **kwargs)
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
            if not isinstance(cause, OSError):
                raise
            raise SandboxUnavailableError(
                f"The Podman service at {self._url} did not answer {method.upper()} {path} "
                f"within {limit:.3g} s ({type(cause).__name__}); check that it runs and is "
                "reachable."
            ) from exc

    def get(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A bounded ``GET``."""
        return self._send("get", path, *args, **kwargs)

    def post(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A bounded ``POST``."""
        return self._send("post", path, *args, **kwargs)

    def put(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A bounded ``PUT``."""
        return self._send("put", path, *args, **kwargs)

    def delete(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A bounded ``DELETE``."""
        return self._send("delete", path, *args, **kwargs)

    def head(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """A bounded ``HEAD``."""
        return self._send("head", path, *args, **kwargs)


def podman_binary() -> str:
    """The path of the ``podman`` executable, or a ``SandboxUnavailableError`` with the fix."""
    found = shutil.which("podman")
    if found is None:
        raise SandboxUnavailableError(f"The 'podman' binary is not on PATH; {_INSTALL_HINT}.")
    return found


def _client(base_url: str) -> Any:
    try:
        from podman import PodmanClient
    except ImportError as exc:  # pragma: no cover - dependency of the distribution
        raise SandboxUnavailableError(
            "The 'podman' Python package is missing; install it: pip install haversack-podman."
        ) from exc
    client: Any = PodmanClient(base_url=base_url, timeout=ENGINE_CAP_S)
    client.api = _BoundedAPI(client.api, base_url)
    return client


class PodmanService:
    """A reachable Podman API: ``client`` (podman-py), ``base_url`` and, when this process
    started it, the service subprocess. ``local`` means commands run on this host as root, so
    exec pids can be signalled directly."""

    def __init__(
        self,
        base_url: str,
        process: subprocess.Popen[bytes] | None,
        private_dir: Path | None,
        startup_s: float,
        *,
        remote: bool = False,
    ) -> None:
        self.base_url = base_url
        self.startup_s = startup_s
        self._process = process
        self._private_dir = private_dir
        self.client: Any = _client(base_url)
        parsed = urlparse(base_url)
        self.socket_path: str | None = (
            parsed.path if parsed.scheme in ("unix", "http+unix") else None
        )
        # A candidate only: each container proves it shares this kernel (``_container``).
        self.local = not remote and self.socket_path is not None and os.geteuid() == 0

    def ping(self) -> bool:
        """Whether the service answers ``/_ping``."""
        return self._probe() is None

    def _probe(self) -> str | None:
        """Why the service does not answer ``/_ping`` in time, or None when it does."""
        limit = request_timeout()
        if self.socket_path is not None:
            # podman-py leaks its socket when the connect fails (a ResourceWarning later).
            if _unix_ping(self.socket_path, limit):
                return None
            return f"no answer to GET /_ping on {self.socket_path} within {limit:.3g} s"
        try:
            if self.client.ping():
                return None
            return "GET /_ping did not answer OK"
        except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
            return str(exc).rstrip(".")

    def close(self) -> None:
        """Close the client and stop the private service (if any) and remove its socket dir."""
        try:
            self.client.close()
        finally:
            if self._process is not None and self._process.poll() is None:
                self._process.terminate()
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            if self._private_dir is not None:
                shutil.rmtree(self._private_dir, ignore_errors=True)


def _unix_ping(path: str, timeout: float = 5.0) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.1\r\nHost: podman\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


_lock = threading.Lock()
_services: dict[str | None, PodmanService] = {}
_atexit_registered = False


def _start_private() -> PodmanService:
    binary = podman_binary()
    private_dir = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-service-", dir=runtime_dir()))
    socket_path = private_dir / "podman.sock"
    url = f"unix://{socket_path}"
    log_path = private_dir / "service.log"
    start = time.perf_counter()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [binary, "system", "service", "--time=0", url],
            env=podman_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # conmon writes an ``oom`` marker into its working directory when a container is
            # OOM-killed: that must land in our own folder, not in the caller's cwd.
            cwd=private_dir,
            start_new_session=True,  # a Ctrl-C in the caller's terminal must not kill it first
        )
    service = PodmanService(url, process, private_dir, 0.0)
    while True:
        if socket_path.exists() and service.ping():
            service.startup_s = time.perf_counter() - start
            return service
        if process.poll() is not None or time.perf_counter() - start > _START_TIMEOUT_S:
            detail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            service.close()
            raise SandboxUnavailableError(
                f"'podman system service' did not answer on {url} within {_START_TIMEOUT_S:.0f} s "
                f"(exit code {process.poll()}, last log line: {detail[0]}); check 'podman info' "
                f"with CONTAINERS_CONF={podman_env()['CONTAINERS_CONF']}, or {_INSTALL_HINT}."
            )
        time.sleep(0.01)


def _forward_ssh(url: str) -> PodmanService:
    """A service reached through the remote socket of an ``ssh://user@host[:port]/path`` URL,
    forwarded to a private local socket by the ``ssh`` client (podman-py's own ssh transport
    waits up to 300 s for a tunnel whose ssh already failed, and its exec output is empty).
    The wait for the tunnel is bounded by :func:`request_timeout`."""
    parsed = urlparse(url)
    if not parsed.hostname or not parsed.path.strip("/"):
        raise SandboxUnavailableError(
            f"connection_url {url!r} must name the host and the remote socket: "
            "ssh://user@host[:port]/run/podman/podman.sock."
        )
    ssh = shutil.which("ssh")
    if ssh is None:
        raise SandboxUnavailableError(
            f"connection_url {url!r} needs the 'ssh' client on PATH; install it: apt-get "
            "install --no-install-recommends openssh-client."
        )
    limit = request_timeout()
    private_dir = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-ssh-", dir=runtime_dir()))
    local = private_dir / "podman.sock"
    # BatchMode: a missing key or an unknown host key fails instead of prompting (the host key
    # is checked against known_hosts, never accepted blindly).
    argv = [ssh, "-N", "-T", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes"]
    argv += ["-o", f"ConnectTimeout={max(1, math.ceil(limit))}", "-o", "ServerAliveInterval=15"]
    argv += ["-L", f"{local}:{parsed.path}"]
    if parsed.port is not None:
        argv += ["-p", str(parsed.port)]
    host = parsed.hostname if parsed.username is None else f"{parsed.username}@{parsed.hostname}"
    argv += ["--", host]
    log_path = private_dir / "ssh.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
        )
    service = PodmanService(f"unix://{local}", process, private_dir, 0.0, remote=True)
    deadline = time.monotonic() + limit
    while not local.exists():
        code = process.poll()
        if code is not None or time.monotonic() >= deadline:
            lines = log_path.read_text(errors="replace").strip().splitlines()
            service.close()
            state = "still connecting" if code is None else f"exit code {code}"
            raise SandboxUnavailableError(
                f"ssh did not forward the Podman socket of {url} within {limit:.3g} s "
                f"({state}: {lines[-1] if lines else 'no output'}); check that 'ssh {host}' "
                "logs in without a prompt (a key, the host in known_hosts) and that the "
                "socket exists there."
            )
        time.sleep(0.01)
    return service


def get_service(connection_url: str | None = None) -> PodmanService:
    """The shared service for ``connection_url`` (None: this process's private service),
    started or connected on first use. Thread-safe."""
    global _atexit_registered
    with _lock:
        service = _services.get(connection_url)
        if service is not None:
            return service
        if connection_url is None:
            service = _start_private()
        else:
            start = time.perf_counter()
            if urlparse(connection_url).scheme == "ssh":
                service = _forward_ssh(connection_url)
            else:
                service = PodmanService(connection_url, None, None, 0.0)
            why = service._probe()
            if why is not None:
                service.close()
                raise SandboxUnavailableError(
                    f"The Podman service at {connection_url} does not answer ({why}); start it "
                    f"('podman system service --time=0 {connection_url}') or set "
                    "connection_url=None to let haversack start a private one."
                )
            service.startup_s = time.perf_counter() - start
        _services[connection_url] = service
        if not _atexit_registered:
            atexit.register(shutdown_services)
            _atexit_registered = True
        return service


def shutdown_services() -> None:
    """Stop every service this process started and close every client (idempotent)."""
    with _lock:
        services = list(_services.values())
        _services.clear()
    for service in services:
        service.close()


def ensure_image(service: PodmanService, image: str) -> None:
    """Raise ``SandboxImageMissingError`` with the fix when ``image`` is not stored locally."""
    if not service.client.images.exists(image):
        raise SandboxImageMissingError(
            f"The sandbox image {image!r} is not in the local store "
            f"(images are never pulled); {_BUILD_HINT}."
        )
