"""Per-session host workspace directories: created, filled, owned and removed link-safely.

A workspace is written by the sandbox, so every walk here holds a handle on each directory
it works in, opens children with ``O_NOFOLLOW`` relative to it and never follows a link; walks
keep their own stack (no recursion), so a deep tree costs memory, not a ``RecursionError``.
A user's own directory (``SandboxConfig.workspace``) is used in place: it is never filled,
chowned or removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from haversack.errors import PathNotFoundError
from haversack.filesystem import normalize_path, remove_tree

if TYPE_CHECKING:
    from ._config import SandboxConfig

__all__ = [
    "chown_tree",
    "copy_into_workspace",
    "create_workspace",
    "open_workspace",
    "remove_workspace",
]

_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_COPY_CHUNK: Final = 1 << 30

# The workspaces this process created: only these are ever removed, so a user's directory
# can never be deleted by a sandbox's teardown, whatever path reaches it.
_created: set[str] = set()
_created_lock = threading.Lock()


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` and everything below it to ``uid:gid`` (no-op unless running as root).

    Rootful podman without a user namespace maps container uid 1000 to host uid 1000, so a
    root-owned 0755 workspace would be read-only for the agent. Links are chowned themselves,
    never followed.
    """
    if os.geteuid() != 0:
        return
    os.chown(path, uid, gid, follow_symlinks=False)
    try:
        top = os.open(path, _DIR)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            return  # a file or a link: done above
        raise
    stack = [top]
    try:
        while stack:
            fd = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        os.chown(entry.name, uid, gid, dir_fd=fd, follow_symlinks=False)
                        if entry.is_dir(follow_symlinks=False):
                            with contextlib.suppress(OSError):
                                stack.append(os.open(entry.name, _DIR, dir_fd=fd))
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)


def create_workspace(parent: Path, name: str, uid: int, gid: int) -> Path:
    """Create the empty workspace ``parent/name`` writable by ``uid:gid``.

    ``parent`` (the configured ``workspace_root``) is created when missing.
    """
    parent.mkdir(parents=True, exist_ok=True)
    path = parent / name
    path.mkdir(mode=0o755)
    with _created_lock:
        _created.add(str(path))
    if os.geteuid() == 0:
        os.chown(path, uid, gid)
    else:
        # Rootless: the container user maps to a sub-uid we cannot chown to.
        path.chmod(0o777)
    return path


def open_workspace(config: SandboxConfig, name: str) -> Path:
    """The session's workspace: the user's ``config.workspace`` as it is, or a new directory
    ``name`` under the workspace root with ``config.mounts`` copied in."""
    if config.workspace is not None:
        path = Path(config.workspace)
        if not path.is_dir():
            raise PathNotFoundError(
                f"The sandbox workspace {path} is not an existing directory; create it or fix "
                "SandboxConfig.workspace.",
                path=str(path),
            )
        return path
    from ._runtime_dir import workspaces_dir

    parent = config.workspace_root or workspaces_dir()
    path = create_workspace(parent, name, config.uid, config.gid)
    try:
        copy_into_workspace(path, config.mounts, config.uid, config.gid)
    except BaseException:
        remove_workspace(path)
        raise
    return path


def copy_into_workspace(workspace: Path, mounts: Mapping[str, str], uid: int, gid: int) -> None:
    """Copy each host path into the workspace at its workspace-relative target.

    Links are copied as links only when they are relative and stay inside the copied tree
    (an absolute link keeps pointing at the host); no link is ever followed, on the host side
    or in the workspace, and special files are skipped.
    """
    for source, target in mounts.items():
        if not os.path.exists(source):  # a dangling link is missing too
            raise PathNotFoundError(
                f"Sandbox mount source {source!r} does not exist on the host; fix "
                "SandboxConfig.mounts.",
                path=source,
            )
        # The user named this path: a link there is followed once, on purpose; nothing
        # below it is.
        source = os.path.realpath(source)
        rel = normalize_path(target)
        dest = _workspace_dir(workspace, rel.rpartition("/")[0])
        try:
            _copy(source, dest, rel.rpartition("/")[2] if rel else None)
        finally:
            os.close(dest)
        top = workspace / rel.split("/", 1)[0] if rel else workspace
        chown_tree(top, uid, gid)


def _workspace_dir(workspace: Path, rel: str) -> int:
    """A handle on the directory ``rel`` of the workspace, created as needed, never through
    a link."""
    fd = os.open(workspace, _DIR)
    for part in rel.split("/") if rel else ():
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, 0o755, dir_fd=fd)
        try:
            child = os.open(part, _DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def _copy(source: str, dest: int, name: str | None) -> None:
    """Copy the host path ``source`` into the directory handle ``dest`` as ``name`` (or, for
    ``None``, its contents into ``dest`` itself), iteratively and without following links."""
    st = os.stat(source, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        _warn(source, os.readlink(source))
        return
    if not stat.S_ISDIR(st.st_mode):
        if not stat.S_ISREG(st.st_mode):
            return  # a FIFO, socket or device is not workspace content
        if name is None:
            name = os.path.basename(source)  # a file mounted at the root keeps its name
        with contextlib.suppress(FileNotFoundError):  # an existing target is replaced
            os.unlink(name, dir_fd=dest)
        _copy_file(source, None, dest, name, st)
        return
    top = os.open(source, _DIR)
    if name is not None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=dest)
        target = os.open(name, _DIR, dir_fd=dest)
    else:
        target = os.dup(dest)
    # Each frame: (source directory handle, target directory handle, depth below the top).
    stack = [(top, target, 0)]
    try:
        while stack:
            src, dst, depth = stack.pop()
            try:
                with os.scandir(src) as entries:
                    for entry in entries:
                        _copy_entry(source, entry, src, dst, depth, stack)
            finally:
                os.close(src)
                os.close(dst)
    finally:
        for src, dst, _ in stack:
            os.close(src)
            os.close(dst)


def _copy_entry(
    source: str,
    entry: os.DirEntry[str],
    src: int,
    dst: int,
    depth: int,
    stack: list[tuple[int, int, int]],
) -> None:
    st = entry.stat(follow_symlinks=False)
    name = entry.name
    if stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=dst)
        child_src = os.open(name, _DIR, dir_fd=src)
        try:
            child_dst = os.open(name, _DIR, dir_fd=dst)
        except BaseException:
            os.close(child_src)
            raise
        stack.append((child_src, child_dst, depth + 1))
    elif stat.S_ISLNK(st.st_mode):
        link = os.readlink(name, dir_fd=src)
        # Relative, and never climbing above the mount: it stays inside once copied.
        climb = depth
        inside = not os.path.isabs(link)
        for part in link.split("/"):
            if part == "..":
                climb -= 1
                if climb < 0:
                    inside = False
                    break
            elif part not in ("", "."):
                climb += 1
        if not inside:
            _warn(os.path.join(source, entry.path), link)
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dst)
        os.symlink(link, name, dir_fd=dst)
    elif stat.S_ISREG(st.st_mode):
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.unlink(name, dir_fd=dst)
        _copy_file(name, src, dst, name, st)
    # FIFOs, sockets and devices are not workspace content: skipped


def _copy_file(
    name: str, src_dir: int | None, dst_dir: int, target: str, st: os.stat_result
) -> None:
    fd_in = os.open(name, _FILE, dir_fd=src_dir)
    try:
        if not stat.S_ISREG(os.fstat(fd_in).st_mode):
            return  # replaced by something else since it was listed
        fd_out = os.open(
            target,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            stat.S_IMODE(st.st_mode),
            dir_fd=dst_dir,
        )
        try:
            # sendfile, not copy_file_range: a mount source may be on another filesystem.
            while os.sendfile(fd_out, fd_in, None, _COPY_CHUNK):
                pass
            os.fchmod(fd_out, stat.S_IMODE(st.st_mode))
            os.utime(fd_out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _warn(link: str, target: str) -> None:
    import logging  # a rare path: keep the pack's import light

    logging.getLogger("haversack.podman").warning(
        "not copying symlink %s -> %s: it leads out of the mount", link, target
    )


def remove_workspace(path: Path) -> None:
    """Delete a workspace directory this process created and everything in it, link-safely
    and at any depth (missing is fine). Any other directory (a user's) is left alone."""
    key = str(path)
    with _created_lock:
        if key not in _created:
            return
    with contextlib.suppress(OSError):
        remove_tree(path)
    if not os.path.lexists(path):
        with _created_lock:
            _created.discard(key)
