"""Where the pack keeps its per-user runtime files (containers.conf, sockets, workspaces)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = [
    "mirrors_dir",
    "owner_pid",
    "pid_alive",
    "runtime_dir",
    "snapshots_dir",
    "workspaces_dir",
]


def runtime_dir() -> Path:
    """The per-user runtime directory, created 0700 on first use.

    ``$XDG_RUNTIME_DIR/haversack-podman`` when set, else ``<tempdir>/haversack-podman-<uid>``.
    """
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    base = (
        Path(xdg) / "haversack-podman"
        if xdg
        else (Path(tempfile.gettempdir()) / f"haversack-podman-{os.geteuid()}")
    )
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    return base


def workspaces_dir() -> Path:
    """The default parent of per-session workspace directories (on disk, not tmpfs)."""
    path = Path(tempfile.gettempdir()) / f"haversack-podman-{os.geteuid()}" / "workspaces"
    path.mkdir(mode=0o711, parents=True, exist_ok=True)
    return path


def snapshots_dir() -> Path:
    """The default parent of snapshot storage (same filesystem as the workspaces, so hard
    links and renames work)."""
    path = Path(tempfile.gettempdir()) / f"haversack-podman-{os.geteuid()}" / "snapshots"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def mirrors_dir() -> Path:
    """The parent of the sandboxes' private copies of users' workspace directories (next to
    the workspaces: on disk, not tmpfs)."""
    path = Path(tempfile.gettempdir()) / f"haversack-podman-{os.geteuid()}" / "mirrors"
    path.mkdir(mode=0o711, parents=True, exist_ok=True)
    return path


def owner_pid(name: str) -> int | None:
    """The pid encoded at the start of a ``<pid>-...`` directory name, if any."""
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (signal 0 probe)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
