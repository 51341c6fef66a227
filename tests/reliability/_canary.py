"""A canary outside the allowed roots, and a host-tree fingerprint to prove nothing escaped."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Canary:
    """A secret file outside every allowed root: its text must never show up anywhere, and
    its content, mtime and atime must stay as set (atime is set older than mtime, so under
    ``relatime`` any read would move it)."""

    path: Path
    secret: str
    stat: tuple[int, int, int, int, int, int]
    #: Whether this filesystem moves atime on a read (relatime/strictatime), checked on a probe.
    atime_armed: bool = True

    @classmethod
    def plant(cls, folder: Path) -> Canary:
        folder.mkdir(parents=True, exist_ok=True)
        secret = f"CANARY-{uuid.uuid4().hex}"
        path = folder / "canary.txt"
        path.write_text(secret + "\n", encoding="utf-8")
        st = path.stat()
        os.utime(path, ns=(st.st_mtime_ns - 10**12, st.st_mtime_ns))
        probe = folder / "probe.txt"
        probe.write_text("probe")
        pst = probe.stat()
        os.utime(probe, ns=(pst.st_mtime_ns - 10**12, pst.st_mtime_ns))
        probe.read_text()
        armed = probe.stat().st_atime_ns != pst.st_mtime_ns - 10**12
        probe.unlink()
        return cls(path, secret, _stat(path), armed)

    def intact(self) -> list[str]:
        problems = []
        now = _stat(self.path)  # before reading it ourselves, which moves the atime
        if now[:2] != self.stat[:2]:
            problems.append(f"canary {self.path} size/mtime changed: {self.stat} -> {now}")
        if now[3:] != self.stat[3:]:
            problems.append(f"canary {self.path} mode/owner changed: {self.stat} -> {now}")
        if self.atime_armed and now[2] != self.stat[2]:
            problems.append(f"canary {self.path} was read (atime moved)")
        if self.path.read_text(encoding="utf-8") != self.secret + "\n":
            problems.append(f"canary {self.path} content changed")
        # Our own read moved the atime: put it back so the next read is seen again.
        os.utime(self.path, ns=(self.stat[2], now[1]))
        return problems

    def leaked_in(self, text: str) -> bool:
        return self.secret in text or self.secret[7:] in text


def _stat(path: Path) -> tuple[int, int, int, int, int, int]:
    """size, mtime, atime, mode, uid, gid."""
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_atime_ns, st.st_mode, st.st_uid, st.st_gid)


def tree(root: Path, *, skip: tuple[Path, ...] = ()) -> dict[str, tuple[str, int, int]]:
    """Every path under ``root`` (not following symlinks) -> (kind, size, mtime_ns)."""
    out: dict[str, tuple[str, int, int]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        if any(here == s or s in here.parents for s in skip):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = here / name
            st = path.lstat()
            kind = "link" if path.is_symlink() else ("dir" if path.is_dir() else "file")
            size = 0 if kind == "dir" else st.st_size
            mtime = 0 if kind == "dir" else st.st_mtime_ns
            out[str(path.relative_to(root))] = (kind, size, mtime)
    return out
