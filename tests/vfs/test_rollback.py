"""A failed or denied call leaves the workspace exactly as it was."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from haversack import MarkdownSection, Tool, ToolContext, ToolResult

from ._dump import dump
from ._workspace import Workspace


@dataclass(frozen=True)
class Mess:
    """Params of the test tool."""

    mode: str = field(metadata={"description": "raise, fail or ok"})


def _messy(params: Mess, *, context: ToolContext) -> ToolResult[None]:
    fs = context.filesystem
    fs.write("keep.txt", "clobbered", mode="overwrite")
    fs.delete("dir", recursive=True)
    fs.write("new/file.txt", "new")
    if params.mode == "raise":
        raise RuntimeError("boom after writing")
    if params.mode == "fail":
        return ToolResult.error("gave up after writing")
    return ToolResult.ok(None, "done")


def _section() -> MarkdownSection[None]:
    return MarkdownSection[None](
        title="Mess",
        key="mess",
        template="A tool that changes files.",
        tools=(Tool[Mess, None](name="mess", description="Change files.", handler=_messy),),
    )


@pytest.fixture
def messy(make_ws: Callable[..., Workspace]) -> Workspace:
    ws = make_ws(sections=[_section()])
    ws.ok("write_file", path="keep.txt", content="original\r\n")
    ws.ok("write_file", path="dir/a", content="a")
    ws.ok("write_file", path="dir/sub/b", content="b")
    return ws


@pytest.mark.parametrize("mode", ["raise", "fail"])
def test_failed_handler_restores_the_exact_tree(messy: Workspace, mode: str) -> None:
    before = dump(messy.fs)
    result = messy.call("mess", mode=mode)
    assert not result.success
    assert dump(messy.fs) == before


def test_successful_handler_keeps_its_changes(messy: Workspace) -> None:
    messy.ok("mess", mode="ok")
    assert messy.fs.read_text("keep.txt") == "clobbered"
    assert not messy.fs.exists("dir")


def test_edit_failing_after_its_write_is_rolled_back(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.ok("write_file", path="a.txt", content="one two\n")
    ws.ok("read_file", path="a.txt")
    fs = ws.fs
    real_write = fs.write

    def write_then_fail(*args: Any, **kwargs: Any) -> int:
        real_write(*args, **kwargs)
        raise OSError("disk vanished")

    monkeypatch.setattr(fs, "write", write_then_fail)
    before = dump(fs)
    result = ws.call("edit_file", path="a.txt", old_string="one", new_string="1")
    assert not result.success
    assert "disk vanished" in result.message
    assert dump(fs) == before


def test_denied_call_changes_nothing(ws: Workspace) -> None:
    ws.fs.write("a.txt", "x", mode="create")
    before = dump(ws.fs)
    assert not ws.call("edit_file", path="a.txt", old_string="x", new_string="y").success
    assert dump(ws.fs) == before


def test_rm_failure_midway_restores_the_tree(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.ok("write_file", path="d/a", content="a")
    fs = ws.fs
    real_delete = fs.delete

    def delete_then_fail(*args: Any, **kwargs: Any) -> tuple[str, ...]:
        real_delete(*args, **kwargs)
        raise RuntimeError("interrupted")

    monkeypatch.setattr(fs, "delete", delete_then_fail)
    before = dump(fs)
    assert not ws.call("rm", path="d").success
    assert dump(fs) == before
