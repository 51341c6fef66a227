"""The read-before-write policy through the executor, with every spelling of a path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from haversack import (
    CallOutcome,
    MarkdownSection,
    Tool,
    ToolContext,
    ToolIdentity,
    ToolInvoked,
    ToolResult,
)

from ._workspace import Workspace


def _seed(ws: Workspace, path: str = "a.txt", content: str = "old\n") -> None:
    """Put a file in the workspace behind the session's back (as a mount would)."""
    ws.fs.write(path, content, mode="create")


def test_editing_an_unread_existing_file_is_denied(ws: Workspace) -> None:
    _seed(ws)
    result = ws.fail("edit_file", path="a.txt", old_string="old", new_string="new")
    assert result.message.startswith("Denied by policy 'vfs-read-before-write'")
    assert "read_file" in result.message
    assert ws.session[ToolInvoked].latest().outcome is CallOutcome.DENIED


def test_reading_first_allows_the_edit(ws: Workspace) -> None:
    _seed(ws)
    ws.ok("read_file", path="a.txt")
    ws.ok("edit_file", path="a.txt", old_string="old", new_string="new")
    assert ws.fs.read_text("a.txt") == "new\n"


def test_a_partial_read_counts(ws: Workspace) -> None:
    _seed(ws, content="1\n2\n3\n")
    ws.ok("read_file", path="a.txt", offset=1, limit=1)
    ws.ok("edit_file", path="a.txt", old_string="3", new_string="x")


def test_failed_read_does_not_unlock(ws: Workspace) -> None:
    _seed(ws, content="1\n")
    ws.fail("read_file", path="a.txt", offset=5)
    ws.fail("edit_file", path="a.txt", old_string="1", new_string="2")


def test_new_files_are_allowed_and_created_files_are_editable(ws: Workspace) -> None:
    ws.ok("write_file", path="new.txt", content="x")
    ws.ok("edit_file", path="/workspace/new.txt", old_string="x", new_string="y")


def test_write_file_on_existing_gets_the_tools_own_message(ws: Workspace) -> None:
    _seed(ws)
    message = ws.fail("write_file", path="a.txt", content="x").message
    assert "Denied" not in message
    assert "edit_file" in message


@pytest.mark.parametrize("read_as", ["/workspace/a.txt", "a.txt", " a.txt", "./a.txt", "//a.txt"])
@pytest.mark.parametrize("edit_as", ["/workspace/a.txt", "a.txt", " a.txt ", "/a.txt"])
def test_path_spellings_unify(ws: Workspace, read_as: str, edit_as: str) -> None:
    _seed(ws)
    ws.ok("read_file", path=read_as)
    ws.ok("edit_file", path=edit_as, old_string="old", new_string="new")


def test_nested_spellings_unify(ws: Workspace) -> None:
    _seed(ws, path="a/b")
    ws.ok("read_file", path="a//b")
    ws.ok("edit_file", path="/workspace/a/./b", old_string="old", new_string="new")


def test_reads_do_not_leak_between_files(ws: Workspace) -> None:
    _seed(ws, "a.txt")
    _seed(ws, "b.txt")
    ws.ok("read_file", path="a.txt")
    ws.fail("edit_file", path="b.txt", old_string="old", new_string="new")


def test_policy_can_be_turned_off(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"read_before_write": False})
    assert ws.rendered.policies == ()
    _seed(ws)
    ws.ok("edit_file", path="a.txt", old_string="old", new_string="new")
    assert "before editing" not in ws.rendered.text


def test_policy_governs_prefixed_tools(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"prefix": "fs_"})
    assert {t.name for t in ws.rendered.tools} >= {"fs_read_file", "fs_edit_file"}
    _seed(ws)
    denied = ws.fail("fs_edit_file", path="a.txt", old_string="old", new_string="new")
    assert denied.message.startswith("Denied by policy")
    ws.ok("fs_read_file", path="a.txt")
    ws.ok("fs_edit_file", path="a.txt", old_string="old", new_string="new")
    assert "fs_read_file" in ws.rendered.text
    assert "${tool:" not in ws.rendered.text


@dataclass(frozen=True)
class _PathArgs:
    path: str


def _user_read_file() -> MarkdownSection[None]:
    """A section of the user's own code whose ``read_file`` reads nothing of the workspace."""

    def read_file(params: _PathArgs, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult.ok(None, message=f"(my own notes about {params.path})")

    tool = Tool[_PathArgs, None](name="read_file", description="Read my notes.", handler=read_file)
    return MarkdownSection[None](title="Mine", key="mine", template="My notes.", tools=[tool])


def test_another_contributors_read_file_never_satisfies_the_policy(
    make_ws: Callable[..., Workspace],
) -> None:
    # Issue 26, item 1: vfs prefixed beside the user's own read_file (the case prefixes are for).
    ws = make_ws({"prefix": "fs_"}, sections=[_user_read_file()])
    _seed(ws)
    assert ws.prompt.identity("read_file") == ToolIdentity("your code", "read_file")
    assert ws.prompt.identity("fs_read_file") == ToolIdentity("vfs", "read_file")
    ws.ok("read_file", path="a.txt")  # the user's tool: it read nothing of the workspace
    denied = ws.fail("fs_edit_file", path="a.txt", old_string="old", new_string="new")
    assert denied.message.startswith("Denied by policy 'vfs-read-before-write'")
    # Item 2: the denial names the tool the model has to call, after the prefix.
    assert "call fs_read_file on it first" in denied.message
    ws.ok("fs_read_file", path="a.txt")
    ws.ok("fs_edit_file", path="a.txt", old_string="old", new_string="new")


def test_messages_name_the_tools_of_the_calling_pack_when_names_clash(
    make_ws: Callable[..., Workspace],
) -> None:
    # Item 2: ToolContext.tool_name picked the first tool of that original name (the user's).
    ws = make_ws({"prefix": "fs_"}, sections=[_user_read_file()])
    _seed(ws)
    refused = ws.fail("fs_write_file", path="a.txt", content="x")
    assert "call fs_read_file and then fs_edit_file" in refused.message
    assert "read_file" not in refused.message.replace("fs_read_file", "")


def test_excluding_rm_takes_its_sentences_and_hints_with_it(
    make_ws: Callable[..., Workspace],
) -> None:
    # Issue 26, item 4: exclude_tools = ["rm"] was refused (the text named ${tool:rm}).
    ws = make_ws({"exclude_tools": ["rm"]})
    assert "rm" not in {t.name for t in ws.rendered.tools}
    assert "removes a file" not in ws.rendered.text
    assert "read_file" in ws.rendered.text  # the other tools keep theirs
    _seed(ws)
    refused = ws.fail("write_file", path="a.txt", content="x")
    assert "call read_file and then edit_file" in refused.message
    assert " rm" not in refused.message
