"""Host mounts configured through the pack's options, end to end through the tools."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from haversack.errors import FilesystemLimitError, PackConfigError, ResourceError

from ._workspace import Workspace


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "proj" / "src").mkdir(parents=True)
    (root / "proj" / "src" / "app.py").write_text("print('hi')\r\n", encoding="utf-8")
    (root / "proj" / "README.md").write_text("# readme\n", encoding="utf-8")
    (root / "proj" / "build").mkdir()
    (root / "proj" / "build" / "out.py").write_text("generated\n", encoding="utf-8")
    (root / "proj" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    return root


def _mount(host: Path, **fields: object) -> dict[str, object]:
    return {"allowed_host_roots": [str(host)], "mounts": [{"host_path": "proj", **fields}]}


def test_mounted_files_are_readable_and_editable(
    make_ws: Callable[..., Workspace], host: Path
) -> None:
    ws = make_ws(_mount(host, mount_path="/workspace/proj"))
    assert ws.ok("glob", pattern="**/*.py").value.matches == (
        "proj/build/out.py",
        "proj/src/app.py",
    )
    assert ws.ok("read_file", path="proj/src/app.py").value.content == "print('hi')\r\n"
    ws.ok("edit_file", path="proj/src/app.py", old_string="hi", new_string="bye")
    assert (host / "proj" / "src" / "app.py").read_bytes() == b"print('hi')\r\n"  # untouched
    assert not ws.fs.exists("proj/logo.png")  # binary: skipped
    assert "`/workspace/proj`: a copy of host `proj`" in ws.rendered.text


def test_include_and_exclude(make_ws: Callable[..., Workspace], host: Path) -> None:
    ws = make_ws(_mount(host, include=["**/*.py", "*.md"], exclude=["build/**"]))
    assert ws.ok("glob", pattern="**").value.matches == ("README.md", "src/app.py")
    assert "only **/*.py, *.md, without build/**" in ws.rendered.text


def test_budget_is_enforced(make_ws: Callable[..., Workspace], host: Path) -> None:
    with pytest.raises(ResourceError) as info:
        make_ws(_mount(host, max_bytes=10))
    assert isinstance(info.value.__cause__, FilesystemLimitError)
    assert "byte budget of 10 bytes" in str(info.value.__cause__)


def test_mount_outside_allowed_roots_is_refused(
    make_ws: Callable[..., Workspace], host: Path, tmp_path: Path
) -> None:
    other = tmp_path / "secret"
    other.mkdir()
    (other / "key").write_text("s3cret", encoding="utf-8")
    config = {"allowed_host_roots": [str(host)], "mounts": [{"host_path": str(other)}]}
    with pytest.raises(ResourceError) as info:
        make_ws(config)
    assert isinstance(info.value.__cause__, PackConfigError)
    config = {"allowed_host_roots": [str(host)], "mounts": [{"host_path": "../secret"}]}
    with pytest.raises(ResourceError):
        make_ws(config)


def test_symlink_escaping_the_root_is_not_followed(
    make_ws: Callable[..., Workspace], host: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret", encoding="utf-8")
    os.symlink(secret, host / "proj" / "leak.txt")
    ws = make_ws(_mount(host))
    assert not ws.fs.exists("leak.txt")
    assert ws.ok("grep", pattern="s3cret").value.matches == ()


def test_mounts_need_allowed_roots(make_ws: Callable[..., Workspace]) -> None:
    with pytest.raises(PackConfigError, match="allowed_host_roots"):
        make_ws({"mounts": [{"host_path": "/etc"}]})


def test_unknown_option_is_rejected(make_ws: Callable[..., Workspace]) -> None:
    with pytest.raises(PackConfigError, match="vfs"):
        make_ws({"max_reads": 3})


def test_bad_limit_is_rejected(make_ws: Callable[..., Workspace]) -> None:
    with pytest.raises(PackConfigError, match="max_read_lines must be a positive integer"):
        make_ws({"max_read_lines": 0})


def test_each_executor_gets_a_fresh_copy(make_ws: Callable[..., Workspace], host: Path) -> None:
    ws = make_ws(_mount(host))
    ws.ok("rm", path="src")
    again = Workspace(ws.prompt)
    try:
        assert again.fs.exists("src/app.py")
    finally:
        again.close()
