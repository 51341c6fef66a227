"""The workspace agent with a sandbox-like container on the same volume: the agent's
snapshots see what commands in the other container write (inotify on the shared volume), and
content goes in (``seed``) and comes back (``sync_to``) without following links either way."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from haversack_podman import BUSYBOX_IMAGE, PodmanService, podman_binary, podman_env
from haversack_podman._agent import AgentFilesystem

from ._agent_fixtures import new_volume, remove_volume, volume_path

pytestmark = pytest.mark.podman


@pytest.fixture
def volume(podman_service: PodmanService) -> Iterator[str]:
    name = new_volume(podman_service)
    yield name
    remove_volume(podman_service, name)


@pytest.fixture
def agent(podman_service: PodmanService, volume: str) -> Iterator[AgentFilesystem]:
    fs = AgentFilesystem(podman_service, volume, uid=1000, gid=1000)
    yield fs
    fs.close()


def _command(volume: str, script: str) -> str:
    """Run ``script`` in a sandbox-like container (no network, the command uid) on the
    volume; the agent's container is a different one."""
    proc = subprocess.run(
        [
            *(podman_binary(), "run", "--rm", "--network", "none", "--user", "1000:1000"),
            *("--cap-drop", "all", "-v", f"{volume}:/workspace", "-w", "/workspace"),
            *(BUSYBOX_IMAGE, "sh", "-c", script),
        ],
        capture_output=True,
        text=True,
        env=podman_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_snapshots_see_what_a_command_in_another_container_wrote(agent, volume):
    assert agent.tracks_changes  # inotify on the volume, seen from the agent's container
    agent.write("src/main.py", "print(1)\n")
    before = agent.snapshot()
    _command(volume, "echo changed > src/main.py; mkdir -p out/deep; echo x > out/deep/y")
    assert agent.read_text("src/main.py") == "changed\n"
    after = agent.snapshot()  # must hold the command's writes, not the older manifest
    _command(volume, "rm -rf out; echo later > src/main.py")
    agent.restore(after)
    assert agent.read_text("out/deep/y") == "x\n"
    assert agent.read_text("src/main.py") == "changed\n"
    agent.restore(before)
    assert not agent.exists("out")
    assert agent.read_text("src/main.py") == "print(1)\n"
    # The command's container sees the restored tree too.
    assert _command(volume, "cat src/main.py; ls") == "print(1)\nsrc\n"


def test_quota_counts_what_the_command_wrote(podman_service, volume):
    fs = AgentFilesystem(podman_service, volume, uid=1000, gid=1000, max_files=5)
    try:
        fs.check_quota()
        _command(volume, "for i in 1 2 3 4 5 6 7; do echo $i > f$i; done")
        from haversack.errors import FilesystemLimitError

        with pytest.raises(FilesystemLimitError):
            fs.check_quota()
    finally:
        fs.close()


def test_seed_copies_host_content_owned_by_the_command_user(
    agent, podman_service, volume, tmp_path
):
    src = tmp_path / "project"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (src / "data.bin").write_bytes(bytes(range(256)) * 10)
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "link").symlink_to("/etc/passwd")
    single = tmp_path / "notes.txt"
    single.write_text("notes\n")
    result = agent.seed({str(src): "proj", str(single): "docs/notes.txt"})
    assert result["files"] == 4
    assert "proj/link" in result["skipped"]
    assert agent.read_text("proj/pkg/mod.py") == "VALUE = 1\n"
    assert agent.read_text("docs/notes.txt") == "notes\n"
    assert not agent.exists("proj/link")
    root = volume_path(podman_service, volume)
    assert (root / "proj/data.bin").read_bytes() == bytes(range(256)) * 10
    assert os.stat(root / "proj/run.sh").st_mode & 0o111
    for rel in ("proj", "proj/pkg/mod.py", "docs/notes.txt"):
        st = os.stat(root / rel)
        assert (st.st_uid, st.st_gid) == (1000, 1000)


def test_seed_never_writes_through_a_link_in_the_volume(agent, volume, tmp_path):
    # A command left links where the seed writes: a file name and a directory name.
    _command(volume, "mkdir proj; ln -s /etc/hostname proj/a.txt; ln -s /tmp proj/sub")
    src = tmp_path / "project"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("mine\n")
    (src / "sub" / "b.txt").write_text("b\n")
    result = agent.seed({str(src): "proj"})
    # The link at a.txt was replaced as a name; nothing went through the directory link.
    assert agent.stat("proj/a.txt").kind == "file"
    assert agent.read_text("proj/a.txt") == "mine\n"
    assert agent.stat("proj/sub").kind == "link"
    assert "proj/sub/b.txt" in result["skipped"]


def test_sync_to_brings_the_workspace_back_link_safely(agent, volume, tmp_path):
    agent.write("src/app.py", "print('hi')\n")
    agent.write("README.md", "# r\n")
    _command(volume, "ln -s /etc/passwd src/leak; printf '\\000\\001' > src/blob.bin")
    host = tmp_path / "back"
    host.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched\n")
    (host / "README.md").symlink_to(outside)  # a link where a workspace file lands
    (tmp_path / "elsewhere").mkdir()
    result = agent.sync_to(host)
    assert result["files"] == 3
    assert "src/leak" in result["skipped"]
    assert (host / "src/app.py").read_text() == "print('hi')\n"
    assert (host / "src/blob.bin").read_bytes() == b"\x00\x01"
    assert not (host / "src/leak").exists()
    assert not (host / "README.md").is_symlink()
    assert (host / "README.md").read_text() == "# r\n"
    assert outside.read_text() == "untouched\n"
    # Only a part of the workspace, into another directory.
    part = tmp_path / "part"
    part.mkdir()
    assert agent.sync_to(part, path="/workspace/src")["files"] == 2
    assert sorted(p.name for p in part.iterdir()) == ["app.py", "blob.bin"]


def test_sync_to_never_writes_through_a_directory_link_on_the_host(agent, tmp_path):
    agent.write("sub/x.txt", "x\n")
    host = tmp_path / "back"
    host.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (host / "sub").symlink_to(target)
    result = agent.sync_to(host)
    assert "sub/x.txt" in result["skipped"]
    assert list(target.iterdir()) == []


def test_a_refused_archive_leaves_the_agent_usable(agent, tmp_path):
    # The host stops reading mid-stream (over max_bytes): the chunks the agent still sends
    # must never be taken for the next operation's answer.
    agent.write("big.txt", "x" * 3_000_000)
    agent.write("small.txt", "s\n")
    host = tmp_path / "back"
    host.mkdir()
    from haversack_podman import WorkspaceAgentError

    with pytest.raises(WorkspaceAgentError, match="larger than allowed"):
        agent.sync_to(host, max_bytes=1_000_000)
    assert agent.read_text("small.txt") == "s\n"
    assert agent.sync_to(host)["files"] == 2
