"""The sandbox on a user's project directory (``SandboxConfig.workspace``), real Podman.

The container bind-mounts the directory itself and runs as its owner, so new files are the
owner's and no existing file changes owner; a failed command is rolled back on disk; closing
removes the container and never the directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import haversack
from haversack import Filesystem, Session, ToolExecutor
from haversack.errors import PackConfigError
from haversack.filesystem import DirectoryFilesystem
from haversack_podman import PYTHON_IMAGE, Sandbox, SandboxConfig

pytestmark = pytest.mark.podman

OWNER = (1234, 1235)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Project\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "other.txt").write_text("someone else's\n")
    if os.geteuid() == 0:
        for path in (root, root / "src", root / "README.md", root / "src" / "app.py"):
            os.chown(path, *OWNER)
        os.chown(root / "other.txt", 4321, 4321)
    return root


@pytest.fixture
def executor(podman_service: Any, project: Path, tmp_path: Path) -> Iterator[ToolExecutor]:
    prompt = haversack.compose(
        ns="test",
        key="user-workspace",
        packs=["vfs", "podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace": str(project)}},
        strict=True,
    )
    executor = ToolExecutor(prompt.render(), session=Session())
    yield executor
    executor.close()


def _ok(ex: ToolExecutor, tool: str, args: dict[str, Any]) -> Any:
    result = ex.execute(tool, args)
    assert result.success, result.render()
    return result


def test_commands_and_file_tools_work_on_the_directory(executor, project):
    sandbox = executor.resources.get(Sandbox)
    fs = executor.resources.get(Filesystem)
    assert isinstance(fs, DirectoryFilesystem)
    assert sandbox.workspace == project
    shown = _ok(executor, "shell_execute", {"command": "cat README.md && echo hi > shell.txt"})
    assert "# Project" in shown.value.stdout
    assert (project / "shell.txt").read_text() == "hi\n"
    _ok(executor, "write_file", {"path": "src/new.py", "content": "x = 1\n"})
    assert (project / "src" / "new.py").read_text() == "x = 1\n"


def test_the_container_runs_as_the_directory_owner(executor, project):
    if os.geteuid() != 0:
        pytest.skip("rootful Podman only: rootless maps the container user differently")
    ids = _ok(executor, "shell_execute", {"command": "id -u; id -g; echo x > mine.txt"})
    assert ids.value.stdout.split() == [str(OWNER[0]), str(OWNER[1])]
    _ok(executor, "write_file", {"path": "tool.txt", "content": "x"})
    for name in ("mine.txt", "tool.txt"):
        st = (project / name).stat()
        assert (st.st_uid, st.st_gid) == OWNER, name
    # Nothing existing was given away.
    assert (project / "other.txt").stat().st_uid == 4321
    assert (project / "README.md").stat().st_uid == OWNER[0]


def test_a_failed_command_is_rolled_back_on_disk(executor, project):
    _ok(executor, "shell_execute", {"command": "true"})
    result = executor.execute(
        "shell_execute", {"command": "echo broken > README.md; rm -r src; touch junk; exit 3"}
    )
    assert not result.success
    assert (project / "README.md").read_text() == "# Project\n"
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    assert not (project / "junk").exists()


def test_closing_keeps_the_directory(podman_service, project):
    sandbox = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=project))
    result = sandbox.exec("echo kept > kept.txt")
    assert result.exit_code == 0, result.stderr
    sandbox.close()
    assert sandbox.closed
    assert (project / "kept.txt").read_text() == "kept\n"
    assert (project / "README.md").read_text() == "# Project\n"


def test_workspace_configuration_mistakes(project, tmp_path):
    with pytest.raises(PackConfigError, match="not an existing directory"):
        SandboxConfig(workspace=tmp_path / "missing")
    with pytest.raises(PackConfigError, match="cannot be combined"):
        SandboxConfig(workspace=project, mounts={str(tmp_path): "m"})
    assert SandboxConfig(workspace=project, user="1000:1000").user == "1000:1000"
    assert SandboxConfig().user == "1000:1000"
