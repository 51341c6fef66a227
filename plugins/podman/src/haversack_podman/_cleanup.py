"""Remove what crashed or killed processes left behind: labelled containers and directories."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._containers_conf import podman_env
from ._labels import PID_LABEL, SANDBOX_LABEL
from ._runtime_dir import owner_pid, pid_alive, runtime_dir, snapshots_dir, workspaces_dir
from ._service import podman_binary

__all__ = ["CleanupReport", "cleanup"]


@dataclass(frozen=True, slots=True)
class CleanupReport:
    """How many containers and directories ``cleanup`` removed."""

    containers: int
    directories: int


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
    removed_dirs = 0
    parents: list[Path] = [workspaces_dir(), snapshots_dir(), runtime_dir()]
    for parent in parents:
        for child in parent.iterdir():
            pid = owner_pid(child.name)
            if child.is_dir() and pid is not None and _orphan(pid, include_live):
                shutil.rmtree(child, ignore_errors=True)
                removed_dirs += 1
    return CleanupReport(len(ids), removed_dirs)
