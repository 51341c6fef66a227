"""A racing swapper and the file operations it attacks: the check-then-use race on a workspace.

A process swaps the workspace directory ``d`` with ``s``, a symbolic link to a host directory,
in a tight loop (``renameat2(RENAME_EXCHANGE)``, atomic), while the host runs file operations
on paths under ``d``. A resolver that checks a path and then opens it, or follows a link at
any component, sooner or later lands in the host directory. The host directory holds a
root-only canary (mode 0600) and other files; any read of it, write to it or new entry in it
is an escape.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haversack import Filesystem
from haversack.errors import FilesystemError, LinkRefusedError

from ._canary import Canary, tree

#: The swapper: exchanges argv[1] and argv[2] until its stdin closes, then prints how many
#: swaps succeeded; it says "ready" once the first swap worked. Only ctypes and the C
#: library: it runs on the host and in the sandbox.
RACER = r"""
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
count = [0]
def watch():
    sys.stdin.read()
    print(count[0], flush=True)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
while libc.renameat2(-100, a, -100, b, 2) != 0:
    pass
count[0] = 1
print("ready", flush=True)  # after a first swap: the race is on
while True:
    if libc.renameat2(-100, a, -100, b, 2) == 0:
        count[0] += 1
"""

#: Text only the host directory holds: a listing, glob or grep that shows it escaped.
HOST_ONLY = "host-only-marker.txt"


@dataclass
class RaceSite:
    """The workspace ``root`` (``d`` a directory, ``s`` a link to ``host``) and the host
    directory with its canary."""

    root: Path
    host: Path
    canary: Canary
    host_tree: dict[str, tuple[str, int, int]] = field(default_factory=dict)

    @classmethod
    def plant(
        cls,
        root: Path,
        host: Path,
        *,
        link: str | None = None,
        owner: tuple[int, int] | None = None,
    ) -> RaceSite:
        """Fill the workspace ``root`` (which exists) and the host directory ``host``;
        ``link`` is what ``s`` points at (default: ``host`` itself)."""
        canary = Canary.plant(host)
        canary.path.chmod(0o600)  # root-only, as an attacker's real target would be
        canary.stat = (*canary.stat[:3], canary.path.stat().st_mode, *canary.stat[4:])
        (host / HOST_ONLY).write_text("host only\n")
        (host / "victim.txt").write_text("host victim\n")
        (root / "d").mkdir()
        (root / "d" / "canary.txt").write_text("inside\n")
        (root / "d" / "victim.txt").write_text("inside victim\n")
        (root / "s").symlink_to(link or host)
        if owner is not None and os.geteuid() == 0:
            for path in (root / "d", root / "d" / "canary.txt", root / "d" / "victim.txt"):
                os.chown(path, *owner)
            os.chown(root / "s", *owner, follow_symlinks=False)
        site = cls(root, host, canary)
        site.host_tree = tree(host)
        return site

    def escapes(self, values: Sequence[str] = (), errors: Sequence[str] = ()) -> list[str]:
        """What leaked or changed in the host directory (empty: nothing): ``values`` are what
        successful operations returned, ``errors`` the messages of refused ones (which may
        name the path asked for, but never show the canary)."""
        found = list(self.canary.intact())
        if tree(self.host) != self.host_tree:
            found.append(f"the host directory changed: {sorted(os.listdir(self.host))}")
        for text in (*values, *errors):
            if self.canary.leaked_in(text):
                found.append(f"the canary leaked into: {text[:80]!r}")
        found.extend(f"a host-only name leaked: {t[:80]!r}" for t in values if HOST_ONLY in t)
        return found


class Racer:
    """The swapper as a child process (``command`` runs :data:`RACER` with the two paths)."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            list(command),
            env=None if env is None else dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()  # blocks until the loop is about to start
        if first.strip() != "ready":
            err = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError(f"the racer did not start: {first!r} {err}")
        self.swaps = 0

    def stop(self) -> int:
        """End the swapper (its stdin closes) and return how many swaps it made."""
        out, err = self.process.communicate(input="", timeout=60)
        try:
            self.swaps = int(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RuntimeError(f"the racer ended badly: {out!r} {err!r}") from None
        return self.swaps


Operation = Callable[[Filesystem, int], Any]

#: Every file operation, aimed through ``d``: what it returns is checked for leaks.
OPERATIONS: dict[str, Operation] = {
    "read": lambda fs, i: fs.read("d/canary.txt").content,
    "read_text": lambda fs, i: fs.read_text("d/canary.txt"),
    "exists": lambda fs, i: f"{HOST_ONLY} exists" if fs.exists(f"d/{HOST_ONLY}") else "",
    "stat": lambda fs, i: f"{HOST_ONLY} stat: {fs.stat(f'd/{HOST_ONLY}')!r}",
    "list": lambda fs, i: " ".join(s.path for s in fs.list("d")),
    "glob": lambda fs, i: " ".join(fs.glob("**", path="d")),
    "grep": lambda fs, i: " ".join(f"{m.path}:{m.line}" for m in fs.grep(".", path="d").matches),
    "write_create": lambda fs, i: fs.write(f"d/new-{i}.txt", "pwned\n"),
    "write_overwrite": lambda fs, i: fs.write("d/victim.txt", "pwned\n", mode="overwrite"),
    "write_append": lambda fs, i: fs.write("d/canary.txt", "", mode="append"),
    "edit": lambda fs, i: fs.edit("d/victim.txt", "victim", "victim"),
    "mkdir": lambda fs, i: fs.mkdir(f"d/dir-{i}"),
    "delete": lambda fs, i: (
        fs.delete("d/victim.txt"),
        fs.write("d/victim.txt", "inside victim\n", mode="overwrite"),
    ),
}


@dataclass
class Outcome:
    """What one operation's attempts gave: counts, returned texts and error messages."""

    succeeded: int = 0
    refused: int = 0
    #: Refusals that met the link (the swap was seen and stopped).
    links: int = 0
    values: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def attack(fs: Filesystem, operation: str, attempts: int) -> Outcome:
    """Run one operation ``attempts`` times and collect what it gave."""
    run = OPERATIONS[operation]
    outcome = Outcome()
    for i in range(attempts):
        try:
            value = run(fs, i)
        except FilesystemError as exc:
            outcome.refused += 1
            outcome.links += isinstance(exc, LinkRefusedError)
            outcome.errors.append(str(exc))
            continue
        outcome.succeeded += 1
        if isinstance(value, str) and value:
            outcome.values.append(value)
    return outcome
