"""The workspace boundary of a sandbox on a user's directory (issue 24), real Podman and git.

The container works on a private copy of the directory; only the command's own changes are
written back, never to a protected path, always as new inodes, and never over someone else's
newer version. A failed call's rollback undoes exactly that write-back, and empties /tmp and
/dev/shm in the container.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import haversack
from haversack import Session, ToolExecutor
from haversack.filesystem import DirectoryFilesystem
from haversack_podman import PYTHON_IMAGE, Sandbox, SandboxConfig

pytestmark = pytest.mark.podman

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=GIT_ENV,
        check=False,
        timeout=60,
    )


def tree(root: Path) -> dict[str, str]:
    """Every path below ``root`` with a digest of what it holds (links not followed)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            st = path.lstat()
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                found[rel] = f"dir:{st.st_mode:o}"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = f"file:{st.st_mode:o}:{digest}"
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    assert git(root, "init", "-q").returncode == 0
    (root / "app.py").write_text("print('hi')\n")
    assert git(root, "add", "app.py").returncode == 0
    assert git(root, "commit", "-qm", "init").returncode == 0
    return root


def _executor(workspace: Path) -> ToolExecutor:
    prompt = haversack.compose(
        ns="test",
        key="workspace-boundary",
        packs=["vfs", "podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace": str(workspace)}},
        strict=True,
    )
    return ToolExecutor(prompt.render(), session=Session())


@pytest.fixture
def executor(podman_service: Any, repo: Path) -> Iterator[ToolExecutor]:
    ex = _executor(repo)
    yield ex
    ex.close()


def _run(ex: ToolExecutor, command: str) -> Any:
    return ex.execute("shell_execute", {"command": command})


def _ok(ex: ToolExecutor, command: str) -> Any:
    result = _run(ex, command)
    assert result.success, result.render()
    return result


def _host_git_runs_nothing_planted(repo: Path, canary: Path) -> None:
    """The host's git status and commit in the workspace run no planted command."""
    (repo / "app.py").write_text("print('changed on the host')\n")
    for args in (("status",), ("add", "-A"), ("commit", "-qm", "host commit"), ("status",)):
        git(repo, *args)
    assert not canary.exists(), "a command planted by the sandbox ran on the host"


ATTACKS = {
    "fsmonitor": "printf '[core]\\n\\tfsmonitor = \"touch {canary}\"\\n' >> .git/config",
    "pre-commit hook": (
        "printf '#!/bin/sh\\ntouch {canary}\\n' > .git/hooks/pre-commit && "
        "chmod +x .git/hooks/pre-commit"
    ),
    "attributes filter": (
        "mkdir -p .git/info && echo '*.py filter=x' > .git/info/attributes && "
        "printf '[filter \"x\"]\\n\\tclean = touch {canary}\\n' >> .git/config"
    ),
    "replaced .git": (
        "mv .git moved && mkdir .git && cp -r moved/. .git/ && rm -rf moved && "
        "printf '[core]\\n\\tfsmonitor = \"touch {canary}\"\\n' >> .git/config"
    ),
    "envrc": "echo 'touch {canary}' > .envrc",
    "vscode task": (
        'mkdir -p .vscode && echo \'{{"command": "touch {canary}"}}\' > .vscode/tasks.json'
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_protected_change_is_refused_whole(executor, repo, tmp_path, attack):
    canary = tmp_path / "canary"
    before = tree(repo)
    # A harmless change rides along: it must not be written either (nothing of the call is).
    result = _run(executor, "echo also > innocent.txt; " + ATTACKS[attack].format(canary=canary))
    assert not result.success
    assert "protected" in result.message, result.message
    assert result.value.refused, result.render()
    assert tree(repo) == before
    # The sandbox's copy is back to the user's state too: the next command sees no trace.
    shown = _ok(executor, "ls -A; cat .git/config")
    assert "innocent.txt" not in shown.value.stdout
    assert str(canary) not in shown.value.stdout
    _host_git_runs_nothing_planted(repo, canary)


def test_git_add_and_commit_in_the_sandbox_reach_the_repository(executor, repo):
    """git's objects, index, refs and logs are not protected: a commit made in the sandbox
    is the user's next commit on the host."""
    env = {k: v for k, v in GIT_ENV.items() if k.startswith("GIT_")}
    result = executor.execute(
        "shell_execute",
        {
            "command": "echo feature > feature.txt && git add feature.txt && "
            "git commit -qm 'from the sandbox' && git log --oneline | head -n 1",
            "env": env,
        },
    )
    assert result.success, result.render()
    log = git(repo, "log", "--format=%s")
    assert log.stdout.splitlines()[:2] == ["from the sandbox", "init"]
    assert git(repo, "status", "--porcelain").stdout == ""
    assert git(repo, "fsck", "--no-progress").returncode == 0


def test_git_objects_index_and_refs_are_not_protected(executor, repo):
    """What `git add`/`git commit` write (objects, index, refs, logs) goes through."""
    _ok(executor, "mkdir -p .git/refs/tags && echo new > notes.txt")
    _ok(
        executor,
        "cp .git/refs/heads/* .git/refs/tags/v1 2>/dev/null || cp .git/HEAD .git/refs/tags/v1",
    )
    assert (repo / ".git/refs/tags/v1").exists()
    assert (repo / "notes.txt").read_text() == "new\n"


def test_a_write_through_a_hard_link_never_reaches_the_outside_file(executor, repo, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    os.link(outside, repo / "linked.txt")
    _ok(executor, "echo appended >> linked.txt")
    assert outside.read_text() == "outside\n"
    assert (repo / "linked.txt").read_text() == "outside\nappended\n"
    assert (repo / "linked.txt").stat().st_ino != outside.stat().st_ino
    # Through a failing command too: the rollback gives the workspace its name back, and the
    # outside file never changed.
    os.unlink(repo / "linked.txt")
    os.link(outside, repo / "linked.txt")
    failed = _run(executor, "echo appended >> linked.txt; exit 1")
    assert not failed.success
    assert outside.read_text() == "outside\n"
    assert (repo / "linked.txt").read_text() == "outside\n"


def test_a_link_leading_out_is_not_written_back(executor, repo):
    result = _ok(executor, "ln -s /etc/passwd pw; ln -s app.py inside; echo x > plain.txt")
    assert not (repo / "pw").is_symlink()
    assert not (repo / "pw").exists()
    assert os.readlink(repo / "inside") == "app.py"
    assert (repo / "plain.txt").read_text() == "x\n"
    assert "pw" in result.render()
    assert "leads out" in result.render()


def test_a_rollback_keeps_what_others_changed_meanwhile(podman_service, repo):
    """The journal undoes the command's write-back only where the path still holds it."""
    sandbox = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=repo))
    fs = DirectoryFilesystem(repo, shared=True, guard=sandbox.quiesced)
    assert fs.journal is not None
    sandbox.attach_journal(fs.journal.record)
    try:
        mark = fs.snapshot()
        done = sandbox.exec("echo mine > a.txt; echo mine > b.txt; echo mine > app.py")
        assert done.exit_code == 0
        assert not done.kept
        assert (repo / "b.txt").read_text() == "mine\n"
        # Someone else, after the command and before the rollback:
        (repo / "a.txt").write_text("theirs\n")
        (repo / "c.txt").write_text("theirs\n")
        report = fs.restore(mark)
        assert (repo / "a.txt").read_text() == "theirs\n"
        assert (repo / "c.txt").read_text() == "theirs\n"
        assert not (repo / "b.txt").exists()
        assert (repo / "app.py").read_text() == "print('hi')\n"
        assert "a.txt" in report.kept
        # The copy follows: the next command sees the user's directory as it is now.
        shown = sandbox.exec("cat a.txt c.txt app.py; ls b.txt 2>&1")
        assert shown.stdout.startswith("theirs\ntheirs\nprint('hi')\n"), shown.stdout
        assert "No such file" in shown.stdout
    finally:
        sandbox.close()
        fs.close()


def test_a_change_made_meanwhile_by_someone_else_wins(podman_service, repo):
    sandbox = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=repo))
    try:
        sandbox.exec("true")
        writer = threading.Timer(0.5, (repo / "app.py").write_text, args=("theirs\n",))
        writer.start()
        done = sandbox.exec("sleep 2; echo mine > app.py; echo mine > other.txt")
        writer.join()
        assert done.exit_code == 0
        assert (repo / "app.py").read_text() == "theirs\n"
        assert done.kept == ("app.py",)
        assert (repo / "other.txt").read_text() == "mine\n"
        assert sandbox.exec("cat app.py").stdout == "theirs\n"
    finally:
        sandbox.close()


def test_foreign_files_written_during_a_failing_call_survive_its_rollback(executor, repo):
    _ok(executor, "true")
    stop = threading.Event()
    written: list[Path] = []

    def foreign() -> None:
        n = 0
        while not stop.is_set():
            path = repo / f"foreign-{n}.txt"
            path.write_text(f"foreign {n}\n")
            written.append(path)
            n += 1
            time.sleep(0.02)

    thread = threading.Thread(target=foreign)
    thread.start()
    try:
        failed = _run(executor, "echo mine > mine.txt; echo mine > app.py; sleep 1; exit 1")
    finally:
        stop.set()
        thread.join()
    assert not failed.success
    assert written
    for n, path in enumerate(written):
        assert path.read_text() == f"foreign {n}\n"
    assert not (repo / "mine.txt").exists()
    assert (repo / "app.py").read_text() == "print('hi')\n"


def test_tmp_and_shm_are_emptied_after_a_failed_call(executor):
    _ok(executor, "echo kept > /tmp/ok")
    assert _ok(executor, "cat /tmp/ok").value.stdout == "kept\n"
    failed = _run(
        executor,
        "echo left > /tmp/state; mkdir -p /tmp/d/e; chmod 000 /tmp/d; "
        "echo left > /dev/shm/state; exit 1",
    )
    assert not failed.success
    shown = _ok(executor, "find /tmp /dev/shm -mindepth 1")
    assert shown.value.stdout == ""


def test_two_sessions_on_one_directory(podman_service, repo):
    a, b = _executor(repo), _executor(repo)
    try:
        _ok(a, "echo from-a > a.txt")
        assert _ok(b, "cat a.txt").value.stdout == "from-a\n"
        _ok(b, "echo from-b > b.txt")
        assert _ok(a, "cat b.txt").value.stdout == "from-b\n"
        # A's call fails slowly while B commits: A's rollback leaves B's work alone.
        results: dict[str, Any] = {}
        slow = threading.Thread(
            target=lambda: results.setdefault(
                "a", _run(a, "echo a2 > a2.txt; echo a2 > a.txt; sleep 1.5; exit 1")
            )
        )
        slow.start()
        time.sleep(0.5)
        results["b"] = _run(b, "echo b2 > b2.txt; echo b2 >> b.txt")
        slow.join()
        assert results["b"].success
        assert not results["a"].success
        assert (repo / "b2.txt").read_text() == "b2\n"
        assert (repo / "b.txt").read_text() == "from-b\nb2\n"
        assert (repo / "a.txt").read_text() == "from-a\n"
        assert not (repo / "a2.txt").exists()
        assert _ok(a, "cat b2.txt").value.stdout == "b2\n"
    finally:
        a.close()
        b.close()


def test_closing_removes_the_private_copy(podman_service, repo):
    sandbox = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=repo))
    copy = sandbox.mounted
    assert copy != repo
    assert copy.is_dir()
    assert sandbox.exec("ls app.py").exit_code == 0
    assert (copy / "app.py").exists()
    sandbox.close()
    assert not copy.exists()
    assert (repo / "app.py").exists()


def test_a_workspace_holding_the_runtime_directory_is_refused(podman_service):
    import tempfile

    from haversack_podman import SandboxError

    with pytest.raises(SandboxError, match="runtime directory"):
        Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=Path(tempfile.gettempdir())))


def test_the_user_directory_is_not_mounted(executor, repo):
    sandbox = executor.resources.get(Sandbox)
    _ok(executor, "true")
    info = sandbox._inspect().raw
    sources = {m.get("Source") for m in info.get("Mounts", [])}
    assert str(repo) not in sources
    assert str(sandbox.mounted) in sources


def test_protected_paths_are_said_in_the_section(repo):
    from haversack_podman import podman_section

    cfg = SandboxConfig(image=PYTHON_IMAGE, workspace=repo)
    text = podman_section(cfg).template
    assert ".git/config" in text
    assert "protected" in text.lower()
    assert "shared" in text.lower()
    assert shutil.which("git")
