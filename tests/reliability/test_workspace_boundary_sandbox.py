"""The workspace boundary of sandboxed commands (area ``workspace-boundary``), real Podman.

The user's own git repository is the Podman pack's workspace. Families:

* **Planting what the host runs** from a shell command: git's config, hooks and info, a
  replaced or redirected ``.git``, nested repositories, direnv, editor and hook-manager files.
  Each call must fail, leave the tree byte-identical, and the host's own ``git status``,
  ``git add`` and ``git commit`` afterwards must not run anything planted (a marker outside).
* **Hard links**: a workspace file hard-linked to a file outside; commands append, rewrite,
  truncate and ``sed -i`` it, succeeding and failing. The outside file stays byte-identical.
* **Foreign writers**: a host thread writes, appends to and deletes other files while commands
  that change their own files fail. After each rollback every foreign change is as the writer
  left it and every file only the command changed is as before.
* **Temporary state**: ``/tmp`` and ``/dev/shm`` are empty after every failed call.
"""

from __future__ import annotations

import os
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from haversack import Session, ToolExecutor, compose

from ._canary import Canary
from ._harness import budget
from ._repo import check_host_git, git, tree_state

pytestmark = pytest.mark.podman

AREA = "workspace-boundary"
GIT = shutil.which("git")


def _executor(repo: Path, scratch: Path) -> ToolExecutor:
    (scratch / "empty.toml").write_text("")
    prompt = compose(
        ns="t",
        key="t",
        packs=["vfs", "podman"],
        config={"podman": {"workspace": str(repo)}},
        strict=True,
        config_file=scratch / "empty.toml",
    )
    return ToolExecutor(prompt.render(), session=Session())


def _repo(scratch: Path) -> Path:
    repo = scratch / "repo"
    repo.mkdir()
    assert git(repo, "init", "-q").returncode == 0
    (repo / "app.py").write_text("print('hi')\n")
    (repo / ".git" / "hooks").mkdir(exist_ok=True)
    (repo / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\ntrue\n")
    (repo / ".git" / "hooks" / "post-commit").chmod(0o755)
    (repo / "nested" / ".git").mkdir(parents=True)
    assert git(repo, "add", "app.py").returncode == 0
    assert git(repo, "commit", "-qm", "init").returncode == 0
    return repo


def _attacks(marker: Path) -> list[str]:
    run = f"touch {marker}"
    fsmonitor = f"printf '[core]\\n\\tfsmonitor = \"{run}; false\"\\n'"
    hook = f"printf '#!/bin/sh\\n{run}\\n'"
    return [
        f"{fsmonitor} >> .git/config",
        f"{fsmonitor} > .git/config.worktree",
        f"{hook} > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        f"{hook} > .git/hooks/post-commit",
        "chmod -x .git/hooks/post-commit",
        "echo '* filter=evil' > .git/info/attributes",
        "rm .git/config",
        "rm -rf .git/hooks",
        f"mv .git moved && mkdir .git && cp -r moved/. .git/ && rm -rf moved && "
        f"{fsmonitor} >> .git/config",
        f"mv .git .git-old && echo 'gitdir: {marker.parent}/evil' > .git",
        f"echo 'gitdir: {marker.parent}/evil' > sub.git; mkdir sub && mv sub.git sub/.git",
        f"{fsmonitor} > nested/.git/config",
        f"mkdir -p nested/.git/hooks && {hook} > nested/.git/hooks/pre-commit",
        f"echo '{run}' > .envrc",
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
        f"mkdir -p .husky && {hook} > .husky/pre-commit",
        "echo 'repos: []' > .pre-commit-config.yaml",
        "echo '{}' > .devcontainer.json",
        # A harmless change beside a protected one: nothing of the call is written.
        f"echo ok > fine.txt && {fsmonitor} >> .git/config",
        # Through a link inside the copy, and with a restored mtime (ctime still moves).
        f"ln -s .git/config c && {fsmonitor} >> c",
        "cp -p .git/config /tmp/k && sed -i 's/bare/BARE/' .git/config && "
        "touch -r /tmp/k .git/config",
        # Same size, same inode, mtime put back: only ctime tells.
        "python3 -c \"import os; p='.git/config'; s=os.stat(p); f=open(p, 'r+'); "
        "f.write('#'); f.close(); os.utime(p, ns=(s.st_atime_ns, s.st_mtime_ns))\"",
    ]


@pytest.mark.skipif(GIT is None and not os.environ.get("CI"), reason="git is not installed")
def test_commands_cannot_plant_what_the_host_runs(figure, scratch: Path) -> None:
    fig = figure(AREA, "sandbox commands: plant what the host's git, direnv or editor runs")
    assert GIT is not None, "git must be installed to run this family"
    repo = _repo(scratch)
    canary = Canary.plant(scratch / "outside")
    marker = scratch / "outside" / "PLANTED"
    executor = _executor(repo, scratch)
    try:
        before = tree_state(repo)
        for command in _attacks(marker):
            fig.case()
            result = executor.execute("shell_execute", {"command": command})
            fig.check(not result.success, f"{command!r} succeeded")
            fig.check(tree_state(repo) == before, f"{command!r} changed the tree: {result.message}")
        # Still a working sandbox on the same directory.
        fig.case()
        done = executor.execute("shell_execute", {"command": "echo fine > fine.txt"})
        fig.check(done.success, f"an ordinary command failed: {done.message}")
        fig.check((repo / "fine.txt").exists(), "an ordinary change was not written back")
        # git in the sandbox still commits: objects, index and refs are not protected.
        fig.case()
        identity = {"GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.com"}
        identity |= {"GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.com"}
        done = executor.execute(
            "shell_execute",
            {"command": "git add fine.txt && git commit -qm 'in the sandbox'", "env": identity},
        )
        fig.check(done.success, f"git commit in the sandbox failed: {done.message}")
        log = git(repo, "log", "-1", "--format=%s").stdout.strip()
        fig.check(log == "in the sandbox", f"the sandbox's commit is not the host's: {log!r}")
    finally:
        executor.close()
    (repo / "app.py").write_text("print('changed by the user')\n")
    check_host_git(fig, repo, marker, canary)
    fig.note("attacks", len(_attacks(marker)))
    fig.assert_clean()


_LINK_WRITES = (
    "echo more >> linked.txt",
    "echo replaced > linked.txt",
    ": > linked.txt",
    "sed -i 's/outside/inside/' linked.txt",
    "python3 -c \"open('linked.txt', 'r+').write('XX')\"",
    "ln -f linked.txt second && echo more >> second",
)


def test_hard_links_to_outside_files_are_never_written_through(figure, scratch: Path) -> None:
    fig = figure(AREA, "sandbox commands: write through a hard link to a file outside")
    repo = scratch / "repo"
    repo.mkdir()
    outside = scratch / "outside.txt"
    content = b"outside content\n" * 64
    executor = _executor(repo, scratch)
    try:
        for command in _LINK_WRITES:
            for fail in (False, True):
                fig.case()
                outside.write_bytes(content)
                for name in ("linked.txt", "second"):
                    (repo / name).unlink(missing_ok=True)
                os.link(outside, repo / "linked.txt")
                line = command + ("; exit 1" if fail else "")
                result = executor.execute("shell_execute", {"command": line})
                fig.check(result.success != fail, f"{line!r}: {result.message}")
                fig.check(outside.read_bytes() == content, f"{line!r} wrote the outside file")
                if fail:
                    fig.check(
                        (repo / "linked.txt").read_bytes() == content,
                        f"{line!r}: the workspace name was not rolled back",
                    )
    finally:
        executor.close()
    fig.assert_clean()


class _Foreign(threading.Thread):
    """Another party writing straight to the directory: it remembers what it left."""

    def __init__(self, root: Path, seed: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.left: dict[str, bytes | None] = {}
        self.count = 0

    def run(self) -> None:
        while not self.stop.is_set():
            name = f"foreign/{self.rng.randrange(12)}.txt"
            path = self.root / name
            op = self.rng.choice(("write", "append", "delete"))
            if op == "delete":
                path.unlink(missing_ok=True)
                self.left[name] = None
            else:
                path.parent.mkdir(exist_ok=True)
                with open(path, "ab" if op == "append" else "wb") as handle:
                    handle.write(f"{self.count} {op}\n".encode())
                self.left[name] = path.read_bytes()
            self.count += 1
            time.sleep(self.rng.uniform(0.001, 0.03))


def test_foreign_writers_keep_their_changes_while_commands_fail(figure, scratch: Path) -> None:
    fig = figure(AREA, "sandbox commands: other writers during failing commands")
    repo = scratch / "repo"
    (repo / "own").mkdir(parents=True)
    for n in range(5):
        (repo / "own" / f"{n}.txt").write_text(f"original {n}\n")
    executor = _executor(repo, scratch)
    rng = random.Random(24)
    try:
        for round_ in range(budget(4, 30)):
            fig.case()
            original = {p: p.read_bytes() for p in (repo / "own").iterdir()}
            writer = _Foreign(repo, round_)
            writer.start()
            n = rng.randrange(5)
            command = (
                f"echo call >> own/{n}.txt; rm -f own/{(n + 1) % 5}.txt; echo new > own/new.txt; "
                f"mkdir -p own/dir && echo x > own/dir/f; sleep {rng.uniform(0.1, 0.8):.2f}; "
                "exit 3"
            )
            result = executor.execute("shell_execute", {"command": command})
            writer.stop.set()
            writer.join()
            fig.check(not result.success, f"{command!r} succeeded")
            for name, data in writer.left.items():
                now = (repo / name).read_bytes() if (repo / name).exists() else None
                fig.check(now == data, f"round {round_}: the other party's {name} was lost")
            now_own = {p: p.read_bytes() for p in (repo / "own").iterdir() if p.is_file()}
            fig.check(now_own == original, f"round {round_}: the command's changes stayed")
            fig.check(not (repo / "own" / "dir").exists(), f"round {round_}: own/dir stayed")
            fig.check(
                not any(p.name.startswith(".haversack-") for p in repo.rglob("*")),
                f"round {round_}: a temporary file was left in the workspace",
            )
    finally:
        executor.close()
    fig.assert_clean()


def test_temporary_directories_are_empty_after_a_failed_call(figure, scratch: Path) -> None:
    fig = figure(AREA, "sandbox commands: /tmp and /dev/shm after a failed call")
    repo = scratch / "repo"
    repo.mkdir()
    executor = _executor(repo, scratch)
    leave: list[str] = [
        "echo x > /tmp/a",
        "echo x > /dev/shm/a",
        "mkdir -p /tmp/d/e/f && echo x > /tmp/d/e/f/g && chmod 000 /tmp/d/e /tmp/d",
        "echo x > /tmp/.hidden; mkfifo /tmp/fifo",
        "ln -s /workspace /tmp/link; touch /tmp/-rf",
        "python3 -c \"import os; os.makedirs('/tmp/' + 'x/' * 60)\"",
    ]
    try:
        for command in leave:
            fig.case()
            failed = executor.execute("shell_execute", {"command": command + "; exit 1"})
            fig.check(not failed.success, f"{command!r} succeeded")
            shown: Any = executor.execute(
                "shell_execute", {"command": "find /tmp /dev/shm -mindepth 1"}
            )
            fig.check(shown.success, f"listing failed: {shown.message}")
            fig.check(shown.value.stdout == "", f"{command!r} left {shown.value.stdout!r}")
    finally:
        executor.close()
    fig.assert_clean()
