"""A second, "remote" Podman engine on this machine: its own network namespace, its own mount
namespace (a private ``/tmp``, ``/var/tmp`` and ``/dev/shm``) and its own storage, reached over
TCP only from a client network namespace joined to it by a veth pair.

The host's paths under ``/tmp`` (every test's workspace) do not exist for that engine, its
image store is empty until the backend loads an image through the API, and its containers'
pids mean nothing to the client. Only what runs inside the client namespace can reach it:
the address is never probed from the root namespace (there it would route off the machine).

Names carry the pid of the process that made them, so parallel workers (and other sessions
on the machine) never share one, and leftovers of a dead process are found and removed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar, Final

__all__ = ["RemoteEngine", "missing_tools"]

_SERVER_IP: Final = "10.213.7.2"
_CLIENT_IP: Final = "10.213.7.1"
_PORT: Final = 8888
_STORE: Final = "/tmp/engine"  # inside the engine's private /tmp
_NAME = re.compile(r"^hvr(\d+)n\d+[sc]$")
_START_S: Final = 30.0
_TOOLS: Final = ("ip", "nsenter", "unshare", "podman")


def missing_tools() -> str | None:
    """Why this machine cannot run the remote engine, or None."""
    if os.geteuid() != 0:
        return "the remote engine needs root (network namespaces)"
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    return f"missing: {', '.join(missing)}" if missing else None


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=60)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_namespace(name: str) -> None:
    """Kill what still runs in namespace ``name`` (its engine, by pid), then delete it."""
    pids = _run("ip", "netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    _run("ip", "netns", "del", name, check=False)


def remove_stale() -> None:
    """Remove the namespaces of remote engines whose creating process is gone."""
    listed = _run("ip", "netns", "list", check=False).stdout.splitlines()
    for line in listed:
        name = line.split()[0] if line.split() else ""
        match = _NAME.match(name)
        if match and not _pid_alive(int(match.group(1))):
            _remove_namespace(name)


class RemoteEngine:
    """A running remote engine: ``url`` (``tcp://…``) is reachable from ``client_run`` only."""

    #: How many engines this process made: each gets names of its own, so a second engine in
    #: one test process (a reliability test next to the session fixture) never takes the
    #: first one's namespaces for a stale session and kills it.
    _made: ClassVar[itertools.count[int]] = itertools.count()

    def __init__(self, conf_text: str) -> None:
        tag = f"{os.getpid()}n{next(self._made)}"
        self.server_ns, self.client_ns = f"hvr{tag}s", f"hvr{tag}c"
        self._links = (f"hv{tag}c", f"hv{tag}s")
        self.url = f"tcp://{_SERVER_IP}:{_PORT}"
        self._conf_text = conf_text
        self._process: subprocess.Popen[bytes] | None = None
        self._log = Path(f"/tmp/hvr-{tag}-engine.log")

    # ---------------------------------------------------------------- set-up
    def start(self) -> None:
        """Create the namespaces and the link, start the engine, wait until it answers."""
        remove_stale()
        for ns in (self.server_ns, self.client_ns):
            _remove_namespace(ns)  # a previous session of this very pid: start clean
            _run("ip", "netns", "add", ns)
        client_link, server_link = self._links
        _run("ip", "link", "add", client_link, "type", "veth", "peer", "name", server_link)
        _run("ip", "link", "set", client_link, "netns", self.client_ns)
        _run("ip", "link", "set", server_link, "netns", self.server_ns)
        _run("ip", "-n", self.server_ns, "addr", "add", f"{_SERVER_IP}/30", "dev", server_link)
        _run("ip", "-n", self.client_ns, "addr", "add", f"{_CLIENT_IP}/30", "dev", client_link)
        for ns, link in ((self.server_ns, server_link), (self.client_ns, client_link)):
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            _run("ip", "-n", ns, "link", "set", link, "up")
        # nsenter --net, not "ip netns exec": that remounts /sys and hides the cgroup mounts
        # the runtime needs. The mount namespace gets private /tmp, /var/tmp and /dev/shm
        # (podman's shared-memory locks), and the store lives there.
        script = textwrap.dedent(
            f"""\
            set -e
            mount -t tmpfs tmpfs /tmp
            mount -t tmpfs tmpfs /var/tmp
            mount -t tmpfs tmpfs /dev/shm
            mkdir -p {_STORE}/root {_STORE}/run {_STORE}/tmp {_STORE}/volumes
            printf '%s' "$HVR_CONF" > {_STORE}/containers.conf
            export CONTAINERS_CONF={_STORE}/containers.conf
            cd {_STORE}
            exec podman {self._storage_flags()} system service --time=0 {self.url}
            """
        )
        env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
        env["HVR_CONF"] = self._conf_text
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [
                    *("nsenter", f"--net=/run/netns/{self.server_ns}", "--"),
                    *("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd="/",
                start_new_session=True,
            )
        waited = self.client_run(
            f"""
            import socket, time
            deadline = time.monotonic() + {_START_S}
            while True:
                try:
                    with socket.create_connection(("{_SERVER_IP}", {_PORT}), timeout=1) as s:
                        s.sendall(b"GET /_ping HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                        if s.recv(64).startswith(b"HTTP/1.1 200"):
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("no answer")
                time.sleep(0.1)
            result = {{"ok": True}}
            """,
            timeout=_START_S + 15,
            check=False,
        )
        if waited.get("ok") is not True:
            log = self._log.read_text(errors="replace")[-2000:]
            self.stop()
            raise RuntimeError(f"The remote Podman engine did not start: {waited}; log: {log}")

    def _storage_flags(self) -> str:
        return (
            f"--root {_STORE}/root --runroot {_STORE}/run --tmpdir {_STORE}/tmp "
            f"--volumepath {_STORE}/volumes"
        )

    # ---------------------------------------------------------------- use
    def client_run(self, code: str, *, timeout: float = 180, check: bool = True) -> Any:
        """Run ``code`` (Python) in a fresh interpreter inside the client namespace, with
        ``URL`` bound to the engine's URL; returns the JSON of its variable ``result``."""
        program = (
            f"URL = {self.url!r}\n"
            + textwrap.dedent(code)
            + "\nimport json as _json, sys as _sys\n"
            + "_sys.stdout.write('\\n@@RESULT@@' + _json.dumps(result))\n"
        )
        proc = subprocess.run(
            ["nsenter", f"--net=/run/netns/{self.client_ns}", "--", sys.executable, "-c", program],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        marker = proc.stdout.rfind("@@RESULT@@")
        if marker < 0:
            if not check:
                return {"error": proc.stderr[-3000:], "code": proc.returncode}
            raise AssertionError(
                f"client program failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
            )
        return json.loads(proc.stdout[marker + len("@@RESULT@@") :])

    def engine_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the ``podman`` CLI on the engine's own store, inside its namespaces (never
        through its address)."""
        assert self._process is not None
        return _run(
            "nsenter",
            "-t",
            str(self._process.pid),
            "-m",
            "-n",
            "--",
            "env",
            f"CONTAINERS_CONF={_STORE}/containers.conf",
            "podman",
            *self._storage_flags().split(),
            *args,
            check=False,
        )

    # ---------------------------------------------------------------- tear-down
    def stop(self) -> None:
        """Remove every container and volume of the engine, stop it by pid, delete the
        namespaces (and with them the link)."""
        process = self._process
        if process is not None and process.poll() is None:
            self.engine_cli("rm", "-af", "-t", "0")
            self.engine_cli("volume", "rm", "-af")
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for ns in (self.server_ns, self.client_ns):
            _remove_namespace(ns)
        with contextlib.suppress(OSError):
            self._log.unlink()
        self._process = None
