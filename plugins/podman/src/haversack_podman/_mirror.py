"""``Mirror``: the sandbox's private copy of a user's workspace directory.

The container never mounts a user's directory. It mounts this copy, which only the session
writes: before each command the copy is brought up to date with the user's directory, and
after it the copy is compared with its state at that moment, which gives exactly the
command's own changes (nobody else writes the copy). Both looks cost the change, not the
workspace: a :class:`haversack.filesystem.ChangeTracker` on each side (inotify; the
container's writes reach the copy's watches through the bind mount) names the paths to
compare, and falls back to a whole walk itself whenever events may have been lost. Only the
first sync (and one after a failed write-back) walks and copies everything.

The command's changes are written back to the user's directory path by path, only where the
user's path still holds what it held at the sync (someone else's newer version wins), as new
inodes (a temporary name, then a rename), so a hard link to a file outside is never written
through. A change set touching a protected path
(``.git/config``, hooks, ...) is written back not at all.

Every walk holds a handle on each directory it works in and never follows a link; the
user's directory is reached only through :class:`haversack.filesystem.Beneath`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple

from haversack.filesystem import Beneath, ChangeTracker, remove_tree

__all__ = ["Mirror", "WriteBack"]

_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 30
_TMP_PREFIX: Final = ".haversack-wb-"


class Key(NamedTuple):
    """What a path holds, compared between two looks: kind (``S_IFMT``), mode, and for a
    file its size, mtime, ctime and inode (ctime cannot be set back by a command, so a
    rewrite that restores size and mtime is still seen); for a link its target. A directory
    is its kind and mode only: its children are paths of their own.

    Keys of the user's directory leave ctime out: the change journal's pre-image is a hard
    link, which changes ctime without changing the file."""

    kind: int
    mode: int
    size: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    ino: int = 0
    link: str | None = None


def _key(st: os.stat_result, link: str | None = None) -> Key | None:
    kind = stat.S_IFMT(st.st_mode)
    mode = stat.S_IMODE(st.st_mode)
    if kind == stat.S_IFDIR:
        return Key(kind, mode)
    if kind == stat.S_IFREG:
        return Key(kind, mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if kind == stat.S_IFLNK:
        return Key(kind, 0, link=link)
    return None  # FIFOs, sockets, devices are not workspace content


Manifest = dict[str, Key]


def scan(root: Path | str, *, ctime: bool = True) -> Manifest:
    """Every file, directory and link below ``root`` (not ``root`` itself), by relative path.
    Special files are left out; nothing is followed; a directory that vanishes mid-walk is
    simply not listed."""
    found: Manifest = {}
    top = os.open(root, _DIR)
    stack: list[tuple[int, str]] = [(top, "")]
    try:
        while stack:
            fd, prefix = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        rel = prefix + entry.name
                        try:
                            st = entry.stat(follow_symlinks=False)
                            link = (
                                os.readlink(entry.name, dir_fd=fd)
                                if stat.S_ISLNK(st.st_mode)
                                else None
                            )
                        except OSError:
                            continue
                        key = _key(st, link)
                        if key is None:
                            continue
                        if not ctime:
                            key = key._replace(ctime_ns=0)
                        found[rel] = key
                        if key.kind == stat.S_IFDIR:
                            with contextlib.suppress(OSError):
                                stack.append((os.open(entry.name, _DIR, dir_fd=fd), rel + "/"))
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)
    return found


def _depth(rel: str) -> int:
    return rel.count("/")


def _link_inside(rel: str, target: str) -> bool:
    """Whether the link at ``rel`` pointing at ``target`` stays inside the workspace."""
    if not target or os.path.isabs(target):
        return False
    depth = _depth(rel)
    for part in target.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            depth += 1
    return True


@dataclass(frozen=True, slots=True)
class WriteBack:
    """What became of a command's changes: ``written`` to the user's directory; ``refused``
    (path, reason) because a protected path was among them (then nothing was written);
    ``kept`` paths someone else changed meanwhile (their version stays); ``skipped``
    (path, reason) changes never copied out (a link leading out of the workspace)."""

    written: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    kept: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


#: Given a changed path, why it may not be written (a reason for the model), or None.
Protect = Callable[[str], "str | None"]
#: A journal's ``record(paths)``: the write-back of those paths happens inside the block.
Record = Callable[[list[str]], AbstractContextManager[None]]


@contextlib.contextmanager
def _no_journal(paths: list[str]) -> Iterator[None]:
    yield


class Mirror:
    """The private copy ``path`` of the user's directory ``source``. Not thread-safe: the
    sandbox calls it under its lock, with the container quiet."""

    def __init__(self, source: Path, path: Path, *, track_changes: bool = True) -> None:
        self.source = source
        self.path = path
        # What changed on each side since the last look, at the cost of the change: the
        # user's directory (the user, other programs) and the copy (the command, seen
        # through its bind mount).
        self._user_tracker = ChangeTracker(source, track_changes=track_changes)
        self._copy_tracker = ChangeTracker(path, track_changes=track_changes)
        # As root, a copied path keeps its owner both ways (a new file in the user's directory
        # is owned as the command's file in the copy: the container's user).
        self._root = os.geteuid() == 0
        self._user_seen: Manifest = {}  # the user's directory as last synced or written
        self._mirror_seen: Manifest = {}  # the copy as last synced or written
        self._dirty: set[str] = set()  # copy paths not known to match the user's
        self._recheck: set[str] = set()  # user paths to compare again at the next sync
        self._synced = False

    # ------------------------------------------------------------------ user -> copy
    def sync(self) -> None:
        """Bring the copy up to date with the user's directory: everything the first time,
        afterwards only paths whose (kind, mode, size, mtime, inode, link) changed, as the
        user's directory's change tracker reports them (a whole walk only when its events
        may have been lost)."""
        first = not self._synced
        complete = True
        if first:
            self._user_tracker.changed()  # watches every directory before the walk below
            if _empty(self.path):
                # A new copy: filled in one walk (what the walk cannot copy is marked dirty).
                self._dirty.clear()
                self._user_seen, complete = self._copy_all()
                changed = set()
            else:
                now = scan(self.source, ctime=False)
                changed = set(now) | set(scan(self.path)) | self._dirty
                self._dirty.clear()
                self._user_seen = now
        else:
            # A path the pull below cannot copy now is marked again.
            dirty, self._dirty = self._dirty, set()
            recheck, self._recheck = self._recheck, set()
            changed = set(dirty)
            with Beneath(self.source) as src:
                for rel in self._user_tracker.changed() | dirty | recheck:
                    key = _ukey(src, rel, ctime=False)
                    if key != self._user_seen.get(rel):
                        changed.add(rel)
                        if key is None:
                            self._user_seen.pop(rel, None)
                        else:
                            self._user_seen[rel] = key
        self._pull(changed)
        # Whatever changed the copy since the last look was this pull (the container is
        # quiet): the new base the command's changes are told from.
        if first:
            self._copy_tracker.changed()
            self._mirror_seen = scan(self.path)
        else:
            with Beneath(self.path) as dst:
                for rel in self._copy_tracker.changed():
                    key = _ukey(dst, rel)
                    if key is None:
                        self._mirror_seen.pop(rel, None)
                    else:
                        self._mirror_seen[rel] = key
        # A directory the first walk could not list whole: the next sync compares all.
        self._synced = complete

    def _copy_all(self) -> tuple[Manifest, bool]:
        """Copy the user's whole directory into the empty copy in one walk of handles (no
        link followed); return the user's keys (without ctime) of what was copied, and
        whether every directory could be listed to its end."""
        seen: Manifest = {}
        complete = True
        stack = [(os.open(self.source, _DIR), os.open(self.path, _DIR), "")]
        try:
            while stack:
                sfd, dfd, prefix = stack.pop()
                try:
                    with os.scandir(sfd) as entries:
                        for entry in entries:
                            rel = prefix + entry.name
                            try:
                                key = self._copy_entry(entry, sfd, dfd, rel, stack)
                            except OSError:
                                self._dirty.add(rel)  # gone or unreadable: looked at again
                                continue
                            if key is not None:
                                seen[rel] = key._replace(ctime_ns=0)
                except OSError:
                    complete = False
                finally:
                    os.close(sfd)
                    os.close(dfd)
        finally:
            for sfd, dfd, _ in stack:
                os.close(sfd)
                os.close(dfd)
        return seen, complete

    def _copy_entry(
        self,
        entry: os.DirEntry[str],
        sfd: int,
        dfd: int,
        rel: str,
        stack: list[tuple[int, int, str]],
    ) -> Key | None:
        """Copy one entry of the directory ``sfd`` into ``dfd`` (a directory: made, and
        queued on ``stack``); its key, or None for what is not workspace content."""
        name = entry.name
        st = entry.stat(follow_symlinks=False)
        owner = (st.st_uid, st.st_gid) if self._root else None
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(name, 0o700, dir_fd=dfd)
            child_dst = os.open(name, _DIR, dir_fd=dfd)
            try:
                os.fchmod(child_dst, stat.S_IMODE(st.st_mode) | (0 if self._root else 0o700))
                if owner is not None:
                    os.fchown(child_dst, *owner)
                child_src = os.open(name, _DIR, dir_fd=sfd)
            except BaseException:
                os.close(child_dst)
                raise
            stack.append((child_src, child_dst, rel + "/"))
            return _key(st)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(name, dir_fd=sfd)
            os.symlink(target, name, dir_fd=dfd)
            if owner is not None:
                os.chown(name, *owner, dir_fd=dfd, follow_symlinks=False)
            return _key(st, target)
        if not stat.S_ISREG(st.st_mode):
            return None  # FIFOs, sockets, devices are not workspace content
        fd_in = os.open(name, _FILE, dir_fd=sfd)
        try:
            fst = os.fstat(fd_in)
            if not stat.S_ISREG(fst.st_mode):
                raise OSError(errno.EAGAIN, "replaced since it was listed")
            fd_out = os.open(name, _NEW, 0o600, dir_fd=dfd)
            try:
                offset = 0
                while sent := os.sendfile(fd_out, fd_in, offset, _CHUNK):
                    offset += sent
                if owner is not None:
                    os.fchown(fd_out, fst.st_uid, fst.st_gid)
                os.fchmod(fd_out, stat.S_IMODE(fst.st_mode))
                os.utime(fd_out, ns=(fst.st_atime_ns, fst.st_mtime_ns))
            finally:
                os.close(fd_out)
        finally:
            os.close(fd_in)
        return _key(fst)

    def mark_dirty(self, paths: Iterable[str]) -> None:
        """Have the next :meth:`sync` copy these paths from the user's directory again."""
        self._dirty.update(paths)

    def _pull(self, paths: Iterable[str]) -> None:
        """Make each path of the copy match the user's (as ``_user_seen`` lists it)."""
        ordered = sorted(paths, key=lambda p: (_depth(p), p))
        with Beneath(self.source) as src, Beneath(self.path) as dst:
            # Removals deepest first, so a directory is empty when its turn comes; judged by
            # what the copy holds now (the command may have changed a path's kind).
            for rel in reversed(ordered):
                want = self._user_seen.get(rel)
                have = _ukey(dst, rel)
                if want is None or (have is not None and have.kind != want.kind):
                    self._remove_in_copy(dst, rel)
            for rel in ordered:
                want = self._user_seen.get(rel)
                if want is None:
                    continue
                try:
                    got = self._copy_one(src, dst, rel, want)
                except Exception:  # noqa: BLE001 - gone, or a link on the way (refused)
                    got = None
                if got is None:
                    # Gone or changed kind meanwhile: the next sync looks again.
                    self._user_seen.pop(rel, None)
                    self._mirror_seen.pop(rel, None)
                    self._dirty.add(rel)
                    continue
                self._user_seen[rel] = got._replace(ctime_ns=0)
                mirror_key = _ukey(dst, rel)
                if mirror_key is None:
                    self._mirror_seen.pop(rel, None)
                else:
                    self._mirror_seen[rel] = mirror_key

    def _remove_in_copy(self, dst: Beneath, rel: str) -> None:
        was_dir = False
        with contextlib.suppress(Exception), dst.parent(rel) as (fd, name):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                was_dir = True
                # Through the parent's handle: no link on the way is followed.
                remove_tree(f"/proc/self/fd/{fd}/{name}")
            else:
                os.unlink(name, dir_fd=fd)
        gone = self._mirror_seen.pop(rel, None)
        if was_dir or (gone is not None and gone.kind == stat.S_IFDIR):
            prefix = rel + "/"
            for key in [k for k in self._mirror_seen if k.startswith(prefix)]:
                del self._mirror_seen[key]

    def _copy_one(self, src: Beneath, dst: Beneath, rel: str, want: Key) -> Key | None:
        """Copy the user's ``rel`` into the copy; return what was copied (its key)."""
        with src.parent(rel) as (sfd, name), dst.parent(rel) as (dfd, _):
            if want.kind == stat.S_IFDIR:
                st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    return None
                mode = stat.S_IMODE(st.st_mode) | (0 if self._root else 0o700)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=dfd)
                fd = os.open(name, _DIR, dir_fd=dfd)
                try:
                    os.fchmod(fd, mode)
                    if self._root:
                        os.fchown(fd, st.st_uid, st.st_gid)
                finally:
                    os.close(fd)
                return _key(st)
            if want.kind == stat.S_IFLNK:
                target = os.readlink(name, dir_fd=sfd)
                st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
                _replace_link(dfd, name, target, (st.st_uid, st.st_gid) if self._root else None)
                return _key(st, target)
            fd_in = os.open(name, _FILE, dir_fd=sfd)
            try:
                st = os.fstat(fd_in)
                if not stat.S_ISREG(st.st_mode):
                    return None
                _replace_file(fd_in, st, dfd, name, (st.st_uid, st.st_gid) if self._root else None)
            finally:
                os.close(fd_in)
            return _key(st)

    # ------------------------------------------------------------------ copy -> user
    def changes(self) -> tuple[list[str], dict[str, Key | None]]:
        """The paths of the copy that differ from its state at the last sync or write-back
        (exactly what the command since then changed), and what each holds now (None:
        nothing). Only the paths the copy's change tracker reports are compared."""
        with Beneath(self.path) as copy:
            now = {rel: _ukey(copy, rel) for rel in self._copy_tracker.changed()}
        changed = sorted(p for p, key in now.items() if key != self._mirror_seen.get(p))
        return changed, {p: now[p] for p in changed}

    def write_back(self, protect: Protect, record: Record | None = None) -> WriteBack:
        """Write the command's changes to the user's directory (see the module docstring)."""
        try:
            return self._write_back(protect, record)
        except BaseException:
            # The changes were taken from the tracker but not settled: the next sync copies
            # everything again rather than leave them for a later command's write-back.
            self.forget()
            raise

    def _write_back(self, protect: Protect, record: Record | None) -> WriteBack:
        changed, manifest = self.changes()
        if not changed:
            return WriteBack()
        refused = [(p, why) for p in changed if (why := protect(p)) is not None]
        if refused:
            # Nothing reaches the user; the copy goes back to the user's state.
            self._pull(changed)
            return WriteBack(refused=tuple(refused))
        now = {p: manifest.get(p) for p in changed}
        skipped = [
            (p, f"a symbolic link to {k.link!r} leads out of the workspace")
            for p, k in now.items()
            if k is not None and k.kind == stat.S_IFLNK and not _link_inside(p, k.link or "")
        ]
        skip = {p for p, _ in skipped}
        wanted = [p for p in changed if p not in skip]
        written: list[str] = []
        failed: set[str] = set()
        with Beneath(self.source) as user, Beneath(self.path) as copy:
            # Who else changed a path since the sync is decided before the journal looks, so
            # it records only paths this write-back changes; each is checked again just
            # before its write (the window left is one path's copy).
            seen = self._user_seen
            todo = [p for p in wanted if _ukey(user, p, ctime=False) == seen.get(p)]
            kept = [p for p in wanted if p not in set(todo)]
            with (record or _no_journal)(todo):
                seen = self._user_seen
                removals = {p for p in todo if now[p] is None or _kind_changed(seen.get(p), now[p])}
                for rel in sorted(removals, key=lambda p: (-_depth(p), p)):
                    if _ukey(user, rel, ctime=False) != seen.get(rel) or not _remove_user(
                        user, rel
                    ):
                        failed.add(rel)
                for rel in sorted(todo, key=lambda p: (_depth(p), p)):
                    if rel in failed:
                        continue
                    key = now[rel]
                    if key is not None:
                        if rel not in removals and _ukey(user, rel, ctime=False) != seen.get(rel):
                            failed.add(rel)
                            continue
                        if not self._push(user, copy, rel, key):
                            failed.add(rel)
                            continue
                    written.append(rel)
            # The copy's view: what it holds now is the new base; where the user's version
            # won, the next sync copies it in again.
            for rel in changed:
                key = now[rel]
                if key is None:
                    self._mirror_seen.pop(rel, None)
                else:
                    self._mirror_seen[rel] = key
            for rel in written:
                ukey = _ukey(user, rel, ctime=False)
                if ukey is None:
                    self._user_seen.pop(rel, None)
                else:
                    self._user_seen[rel] = ukey
        # This write-back's own changes must not hide, in the tracker's next answer, a later
        # change that brings a path back to how the tracker last saw it (written, then
        # rolled back): the tracker's view moves to now, and every path it reports until
        # now is compared again at the next sync (someone else may have changed it too).
        self._recheck.update(self._user_tracker.changed())
        kept = sorted({*kept, *failed})
        self._dirty.update(kept)
        self._dirty.update(skip)
        return WriteBack(tuple(written), (), tuple(kept), tuple(skipped))

    def _push(self, user: Beneath, copy: Beneath, rel: str, key: Key) -> bool:
        """Put the copy's ``rel`` (described by ``key``) at the user's ``rel``."""
        try:
            with user.parent(rel) as (ufd, name), copy.parent(rel) as (cfd, _):
                mst = os.stat(name, dir_fd=cfd, follow_symlinks=False)
                if _key(mst, key.link) != key:
                    return False  # the copy changed since it was listed: not what was seen
                owner = (mst.st_uid, mst.st_gid) if self._root else None
                if key.kind == stat.S_IFDIR:
                    created = True
                    try:
                        os.mkdir(name, 0o700, dir_fd=ufd)
                    except FileExistsError:
                        created = False
                    fd = os.open(name, _DIR, dir_fd=ufd)
                    try:
                        os.fchmod(fd, key.mode)
                        if owner is not None and created:
                            os.fchown(fd, *owner)
                    finally:
                        os.close(fd)
                elif key.kind == stat.S_IFLNK:
                    _replace_link(ufd, name, key.link or "", owner)
                else:
                    fd_in = os.open(name, _FILE, dir_fd=cfd)
                    try:
                        st = os.fstat(fd_in)
                        if not stat.S_ISREG(st.st_mode):
                            return False
                        _replace_file(fd_in, st, ufd, name, owner)
                    finally:
                        os.close(fd_in)
        except Exception:  # noqa: BLE001 - reported as kept: the user's side did not allow it
            return False
        return True

    def revert(self) -> None:
        """Put the copy back to the user's state wherever it changed since the last look."""
        try:
            changed, _ = self.changes()
            self._pull(changed)
        except BaseException:
            self.forget()
            raise

    def forget(self) -> None:
        """Drop every record: the next sync copies everything again."""
        self._user_seen.clear()
        self._mirror_seen.clear()
        self._dirty.clear()
        self._recheck.clear()
        self._synced = False

    def close(self) -> None:
        """Release the change trackers (idempotent)."""
        self._user_tracker.close()
        self._copy_tracker.close()


def _empty(path: Path) -> bool:
    with os.scandir(path) as entries:
        return next(entries, None) is None


def _kind_changed(before: Key | None, after: Key | None) -> bool:
    return before is not None and after is not None and before.kind != after.kind


def _ukey(root: Beneath, rel: str, *, ctime: bool = True) -> Key | None:
    """The key of ``rel`` beneath ``root``, reached without following any link (None: absent
    or unreachable)."""
    try:
        with root.parent(rel) as (fd, name):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            link = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else None
    except Exception:  # noqa: BLE001 - missing, or a link on the way: not what was seen
        return None
    key = _key(st, link)
    return key if key is None or ctime else key._replace(ctime_ns=0)


def _remove_user(user: Beneath, rel: str) -> bool:
    """Remove the user's ``rel``: a file or link, or an empty directory (never a tree: what
    someone else put in it stays)."""
    try:
        with user.parent(rel) as (fd, name):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return True
    except Exception:  # noqa: BLE001 - not empty (someone added to it), or unreachable
        return False
    return True


def _tmp_name(name: str) -> str:
    return f"{_TMP_PREFIX}{os.urandom(6).hex()}-{name[:100]}"


def _replace_file(
    fd_in: int, st: os.stat_result, dir_fd: int, name: str, owner: tuple[int, int] | None
) -> None:
    """Write the open file ``fd_in`` as ``name`` in ``dir_fd``: a new inode renamed over the
    old name, so whatever else links to the old inode is untouched."""
    tmp = _tmp_name(name)
    mode = stat.S_IMODE(st.st_mode)
    fd_out = os.open(tmp, _NEW, 0o600, dir_fd=dir_fd)
    try:
        try:
            offset = 0
            while True:
                sent = os.sendfile(fd_out, fd_in, offset, _CHUNK)
                if not sent:
                    break
                offset += sent
            if owner is not None:
                os.fchown(fd_out, *owner)
            os.fchmod(fd_out, mode)
            os.utime(fd_out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fd_out)
        _rename_over(dir_fd, tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _replace_link(dir_fd: int, name: str, target: str, owner: tuple[int, int] | None) -> None:
    tmp = _tmp_name(name)
    os.symlink(target, tmp, dir_fd=dir_fd)
    try:
        if owner is not None:
            os.chown(tmp, *owner, dir_fd=dir_fd, follow_symlinks=False)
        _rename_over(dir_fd, tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _rename_over(dir_fd: int, tmp: str, name: str) -> None:
    try:
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise
        # A directory holds the name: removed only if empty (never someone else's tree).
        os.rmdir(name, dir_fd=dir_fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
