"""Remove what crashed or killed processes left behind: labelled containers and directories."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from haversack.filesystem import remove_tree

from ._containers_conf import podman_env
from ._labels import PID_LABEL, SANDBOX_LABEL
from ._runtime_dir import (
    mirrors_dir,
    owner_pid,
    pid_alive,
    runtime_dir,
    snapshots_dir,
    workspaces_dir,
)
from ._service import podman_binary

__all__ = ["CleanupReport", "cleanup"]


@dataclass(frozen=True, slots=True)
class CleanupReport:
    """How many containers, directories and orphaned private services ``cleanup`` removed."""

    containers: int
    directories: int
    services: int = 0


def _orphan_services(include_live: bool) -> list[int]:
    """Pids of private ``podman system service`` processes whose owner process is gone.

    The socket path names the owner (``<runtime dir>/<owner pid>-service-*/podman.sock``);
    an owner killed without running atexit leaves its service behind.
    """
    prefix = f"unix://{runtime_dir()}/"
    found: list[int] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(args) < 4 or args[1:3] != [b"system", b"service"]:
            continue
        url = args[-2].decode(errors="replace") if args[-1] == b"" else args[-1].decode()
        if not url.startswith(prefix):
            continue
        owner = owner_pid(url[len(prefix) :])
        if owner is not None and owner != os.getpid() and _orphan(owner, include_live):
            found.append(int(proc.name))
    return found


def _orphan(pid: int | None, include_live: bool) -> bool:
    return include_live or pid is None or not pid_alive(pid)


def _containers(include_live: bool) -> list[str]:
    proc = subprocess.run(
        [podman_binary(), "ps", "-a", "--filter", f"label={SANDBOX_LABEL}=1", "--format", "json"],
        capture_output=True,
        text=True,
        env=podman_env(),
        check=False,
    )
    if proc.returncode != 0:
        return []
    ids: list[str] = []
    for entry in json.loads(proc.stdout or "[]"):
        raw_pid = (entry.get("Labels") or {}).get(PID_LABEL, "")
        pid = int(raw_pid) if str(raw_pid).isdigit() else None
        if _orphan(pid, include_live):
            ids.append(str(entry["Id"]))
    return ids


def cleanup(*, include_live: bool = False) -> CleanupReport:
    """Remove sandbox containers and workspace, snapshot and service directories whose owning
    process is gone (all of them with ``include_live``). Never touches anything unlabelled."""
    ids = _containers(include_live)
    if ids:
        subprocess.run(
            [podman_binary(), "rm", "-f", "-t", "0", *ids],
            capture_output=True,
            env=podman_env(),
            check=False,
        )
    services = _orphan_services(include_live)
    for service_pid in services:
        with contextlib.suppress(ProcessLookupError):
            os.kill(service_pid, signal.SIGTERM)
    removed_dirs = 0
    parents: list[Path] = [workspaces_dir(), mirrors_dir(), snapshots_dir(), runtime_dir()]
    for parent in parents:
        for child in parent.iterdir():
            pid = owner_pid(child.name)
            if (
                child.is_dir()
                and pid is not None
                and pid != os.getpid()
                and _orphan(pid, include_live)
            ):
                with contextlib.suppress(OSError):
                    remove_tree(child)  # iterative and link-safe: a workspace is hostile
                removed_dirs += 1
    return CleanupReport(len(ids), removed_dirs, len(services))
