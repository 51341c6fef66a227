"""Per-session host workspace directories, owned by the container user."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from haversack.errors import PathNotFoundError
from haversack.filesystem import normalize_path

__all__ = ["chown_tree", "copy_into_workspace", "create_workspace", "remove_workspace"]


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` and everything below it to ``uid:gid`` (no-op unless running as root).

    Rootful podman without a user namespace maps container uid 1000 to host uid 1000, so a
    root-owned 0755 workspace would be read-only for the agent (the reference library's bug).
    """
    if os.geteuid() != 0:
        return
    os.chown(path, uid, gid, follow_symlinks=False)
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def create_workspace(parent: Path, name: str, uid: int, gid: int) -> Path:
    """Create the empty workspace ``parent/name`` writable by ``uid:gid``.

    ``parent`` (the configured ``workspace_root``) is created when missing.
    """
    parent.mkdir(parents=True, exist_ok=True)
    path = parent / name
    path.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(path, uid, gid)
    else:
        # Rootless: the container user maps to a sub-uid we cannot chown to.
        path.chmod(0o777)
    return path


def copy_into_workspace(workspace: Path, mounts: Mapping[str, str], uid: int, gid: int) -> None:
    """Copy each host path into the workspace at its workspace-relative target."""
    for source, target in mounts.items():
        src = Path(source)
        if not src.exists():
            raise PathNotFoundError(
                f"Sandbox mount source {source!r} does not exist on the host; fix "
                "SandboxConfig.mounts.",
                path=source,
            )
        rel = normalize_path(target)
        dest = workspace / rel if rel else workspace
        if src.is_dir():
            shutil.copytree(
                src, dest, symlinks=True, dirs_exist_ok=True, ignore=_links_leaving(src)
            )
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
        top = workspace / rel.split("/", 1)[0] if rel else workspace
        chown_tree(top, uid, gid)


def _links_leaving(root: Path) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter dropping symlinks that would lead out of the workspace.

    Only relative links that resolve inside the copied tree are kept: an absolute link keeps
    pointing at the host (even one aimed inside the mount), and a relative link leaving the
    tree would lead out of the workspace once copied.
    """
    top = root.resolve()

    def ignore(directory: str, names: list[str]) -> set[str]:
        dropped: set[str] = set()
        for name in names:
            link = Path(directory, name)
            if not link.is_symlink():
                continue
            target = os.readlink(link)
            resolved = link.parent.resolve() / target
            if os.path.isabs(target) or not resolved.resolve().is_relative_to(top):
                import logging  # a rare path: keep the pack's import light

                logging.getLogger("haversack.podman").warning(
                    "not copying symlink %s -> %s: it leads out of the mount", link, target
                )
                dropped.add(name)
        return dropped

    return ignore


def remove_workspace(path: Path) -> None:
    """Delete a workspace directory and everything in it (missing is fine)."""
    shutil.rmtree(path, ignore_errors=True)
