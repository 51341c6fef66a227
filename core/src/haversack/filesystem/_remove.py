"""Removing a directory tree that someone hostile may have built: iterative, link-safe.

``shutil.rmtree`` recurses once per level (Python 3.11), so a tree 1,100 directories deep
raises ``RecursionError``; and a path-based removal can be redirected by a directory swapped
for a link mid-way. This walk holds a handle on each directory it empties, opens children with
``O_NOFOLLOW | O_DIRECTORY`` relative to it, unlinks links as names (never following them),
and keeps its own stack, so depth costs memory, not recursion.
"""

from __future__ import annotations

import contextlib
import os
import stat

__all__ = ["remove_tree"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | os.PathLike[str], *, keep_root: bool = False) -> int:
    """Delete ``path`` and everything below it; return how many entries were removed.

    A missing ``path`` is fine (returns 0). With ``keep_root`` the directory itself stays and
    only its contents go (a bind-mounted workspace must keep its inode). Raises ``OSError``
    only when something cannot be removed at all (permissions), after removing what it can.
    """
    path = os.fspath(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        if keep_root:
            raise NotADirectoryError(path)
        os.unlink(path)
        return 1
    root = os.open(path, _DIR_FLAGS)
    removed = _empty(root)
    if not keep_root:
        os.rmdir(path)
        removed += 1
    return removed


def _empty(root: int) -> int:
    """Remove every entry below the directory handle ``root`` (which it closes)."""
    removed = 0
    errors: list[OSError] = []
    stuck: set[int] = set()  # inodes of directories that could not be removed: not revisited
    # Each frame: (handle of a directory being emptied, the name it has in its parent's frame).
    stack: list[tuple[int, str | None]] = [(root, None)]
    try:
        while stack:
            fd, _ = stack[-1]
            descended = False
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.inode() in stuck:
                                continue
                            child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                            stack.append((child, entry.name))
                            descended = True
                            break
                        os.unlink(entry.name, dir_fd=fd)
                        removed += 1
                    except FileNotFoundError:
                        continue
                    except OSError as exc:
                        errors.append(exc)
            if descended:
                continue
            # This directory is empty (or holds only what could not be removed): leave it.
            fd, name = stack.pop()
            inode = os.fstat(fd).st_ino
            os.close(fd)
            if name is not None and stack:
                try:
                    os.rmdir(name, dir_fd=stack[-1][0])
                    removed += 1
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    errors.append(exc)
                    stuck.add(inode)
    finally:
        for fd, _ in stack:
            with contextlib.suppress(OSError):
                os.close(fd)
    if errors:
        raise errors[0]
    return removed
