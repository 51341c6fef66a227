"""A workspace-boundary family's tools: the host's own git, run as the user would, and an exact
picture of a tree to compare before and after an attack."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._canary import Canary
    from ._harness import Figure


def git(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The host's ``git`` in ``repo``, with no system or user configuration of this machine
    (only what the repository itself holds decides what runs)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", *argv], cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def tree_state(root: Path) -> dict[str, object]:
    """Every path under ``root`` (links not followed) -> its kind, mode and content digest
    or link target."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = (digest, stat.S_IMODE(st.st_mode))
    return out


def check_host_git(fig: Figure, repo: Path, marker: Path, canary: Canary) -> None:
    """After the attacks: the user's own ``git status``, ``add`` and ``commit`` in ``repo``
    succeed, the command a planted config or hook would run never made ``marker``, and the
    canary outside is untouched."""
    for argv in (("status",), ("add", "-A"), ("commit", "-q", "-m", "after the session")):
        fig.case()
        done = git(repo, *argv)
        fig.check(done.returncode == 0, f"host git {argv}: {done.stderr}")
    fig.check(not marker.exists(), "a planted command ran on the host")
    for problem in canary.intact():
        fig.problem(problem)
