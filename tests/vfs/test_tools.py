"""Every VFS tool through the executor of a composed prompt: success and error paths."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from haversack import CallOutcome, ToolInvoked

from ._workspace import Workspace

# -- ls -------------------------------------------------------------------------------------


def test_ls_lists_sorted_entries_with_kinds_and_sizes(ws: Workspace) -> None:
    ws.ok("write_file", path="b.txt", content="hé")
    ws.ok("write_file", path="a/x.py", content="x")
    result = ws.ok("ls")
    assert result.message == "/workspace: 1 directory, 1 file."
    assert result.render().splitlines()[1:] == ["a/", "b.txt (3 bytes)"]
    assert [e.name for e in result.value.entries] == ["a", "b.txt"]


def test_ls_of_subdirectory_and_empty_root(ws: Workspace) -> None:
    assert ws.ok("ls").message == "/workspace is empty."
    ws.ok("write_file", path="src/pkg/m.py", content="")
    assert ws.ok("ls", path="/workspace/src").render().endswith("\npkg/")


def test_ls_errors(ws: Workspace) -> None:
    ws.ok("write_file", path="f.txt", content="x")
    assert "is a file" in ws.fail("ls", path="f.txt").message
    assert "Nothing exists at /workspace/missing" in ws.fail("ls", path="missing").message


def test_ls_caps_entries(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_list_entries": 2})
    for name in "abcd":
        ws.ok("write_file", path=name, content="")
    result = ws.ok("ls")
    assert len(result.value.entries) == 2
    assert result.value.total == 4
    assert "showing the first 2" in result.message
    assert "2 more entries not shown" in result.render()


# -- read_file ------------------------------------------------------------------------------


def test_read_file_numbers_lines_with_header(ws: Workspace) -> None:
    ws.ok("write_file", path="a.txt", content="one\ntwo\nthree\n")
    result = ws.ok("read_file", path="a.txt")
    assert result.render() == (
        "/workspace/a.txt: lines 1-3 of 3.\n     1\tone\n     2\ttwo\n     3\tthree"
    )
    assert result.value.content == "one\ntwo\nthree\n"


def test_read_file_window_and_continuation(ws: Workspace) -> None:
    ws.ok("write_file", path="a.txt", content="".join(f"line {i}\n" for i in range(1, 11)))
    result = ws.ok("read_file", path="a.txt", offset=2, limit=3)
    assert result.message == (
        "/workspace/a.txt: lines 3-5 of 10. More lines follow: continue with offset=5."
    )
    assert result.render().splitlines()[1:] == [
        "     3\tline 3",
        "     4\tline 4",
        "     5\tline 5",
    ]
    assert result.value.content == "line 3\nline 4\nline 5\n"


def test_read_file_marks_missing_final_newline(ws: Workspace) -> None:
    ws.ok("write_file", path="a.txt", content="a\nb")
    assert ws.ok("read_file", path="a.txt").render().endswith("\tb\n\\ No newline at end of file")


def test_read_file_marks_mixed_line_endings(ws: Workspace) -> None:
    ws.ok("write_file", path="a.txt", content="a\r\nb\nc\r\n")
    text = ws.ok("read_file", path="a.txt").render()
    assert "Mixed line endings" in text
    assert "     1\ta␍\n     2\tb\n     3\tc␍" in text


def test_read_file_empty_file(ws: Workspace) -> None:
    ws.ok("write_file", path="e.txt", content="")
    result = ws.ok("read_file", path="e.txt")
    assert result.render() == "/workspace/e.txt is empty (0 lines)."


def test_read_file_limit_clamped_to_maximum(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_read_lines": 2})
    ws.ok("write_file", path="a.txt", content="1\n2\n3\n")
    result = ws.ok("read_file", path="a.txt", limit=50)
    assert result.value.last_line == 2
    assert "limit 50 is above the maximum; read 2" in result.message
    assert ws.ok("read_file", path="a.txt").value.content == "1\n2\n"


def test_read_file_byte_budget_cuts_at_line_end(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_read_bytes": 10})
    ws.ok("write_file", path="a.txt", content="1234\n5678\nabcd\n")
    result = ws.ok("read_file", path="a.txt")
    assert result.value.content == "1234\n5678\n"
    assert result.value.exact
    assert "stopped at the 10-byte read limit" in result.message
    assert "continue with offset=2" in result.message


def test_read_file_overlong_line_is_cut_and_flagged(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_read_bytes": 8})
    ws.ok("write_file", path="a.txt", content="é" * 10 + "\nok\n")
    result = ws.ok("read_file", path="a.txt")
    assert result.value.content == "é" * 4
    assert not result.value.exact
    assert "not exact" in result.message
    assert result.render().endswith("[... line cut at the read limit]")


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"path": "missing.txt"}, "Nothing exists at /workspace/missing.txt"),
        ({"path": "d"}, "is a directory"),
        ({"path": "a.txt", "offset": -1}, "offset must be 0 or more"),
        ({"path": "a.txt", "limit": 0}, "limit must be a positive number"),
        ({"path": "a.txt", "offset": 2}, "offset 2 is past its end; use an offset from 0 to 1"),
        ({"path": "../etc/passwd"}, "'..'"),
        ({"path": "a\x00b"}, "control characters"),
        ({"path": "/".join(["d"] * 40)}, "levels deep"),
        ({"path": "x" * 300}, "characters long"),
        ({"path": 3}, "Invalid arguments for 'read_file'"),
        ({"path": "a.txt", "bogus": 1}, "Invalid arguments for 'read_file'"),
    ],
)
def test_read_file_errors(ws: Workspace, arguments: dict[str, object], fragment: str) -> None:
    ws.ok("write_file", path="a.txt", content="1\n2\n")
    ws.ok("write_file", path="d/x", content="")
    assert fragment in ws.fail("read_file", **arguments).message


# -- write_file -----------------------------------------------------------------------------


def test_write_file_creates_with_parents(ws: Workspace) -> None:
    result = ws.ok("write_file", path="/workspace/a/b/c.txt", content="x\ny")
    assert result.message == "Created /workspace/a/b/c.txt (3 bytes, 2 lines)."
    assert ws.tree() == {"a": None, "a/b": None, "a/b/c.txt": "x\ny"}


def test_write_file_refuses_existing_and_points_to_edit_file(ws: Workspace) -> None:
    ws.ok("write_file", path="a.txt", content="old")
    message = ws.fail("write_file", path="a.txt", content="new").message
    assert "already exists" in message
    assert "edit_file" in message
    assert "read_file" in message
    assert ws.fs.read_text("a.txt") == "old"


def test_write_file_errors(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_write_bytes": 4})
    ws.ok("write_file", path="d/x", content="")
    assert "is a directory" in ws.fail("write_file", path="d", content="").message
    assert "root is a directory" in ws.fail("write_file", path="/workspace", content="").message
    assert "at most 4" in ws.fail("write_file", path="big", content="12345").message
    assert "is a file" in ws.fail("write_file", path="d/x/y", content="").message
    # A lone surrogate is not text: refused before the handler runs.
    assert "Invalid arguments" in ws.fail("write_file", path="s", content="\ud800").message


# -- edit_file ------------------------------------------------------------------------------


def test_edit_file_replaces_unique_match(ws: Workspace) -> None:
    ws.ok("write_file", path="a.py", content="def f():\n    return 1\n")
    result = ws.ok("edit_file", path="a.py", old_string="return 1", new_string="return 2")
    assert result.message == (
        "Replaced 1 occurrence in /workspace/a.py (at line 2); the file is now 22 bytes."
    )
    assert ws.fs.read_text("a.py") == "def f():\n    return 2\n"


def test_edit_file_replace_all(ws: Workspace) -> None:
    ws.ok("write_file", path="a", content="x y x y x")
    result = ws.ok("edit_file", path="a", old_string="x", new_string="zz", replace_all=True)
    assert result.value.replacements == 3
    assert ws.fs.read_text("a") == "zz y zz y zz"


def test_edit_file_multiple_matches_names_lines(ws: Workspace) -> None:
    ws.ok("write_file", path="a", content="x\ny\nx\n")
    message = ws.fail("edit_file", path="a", old_string="x", new_string="z").message
    assert "occurs 2 times" in message
    assert "lines 1, 3" in message
    assert "replace_all" in message


def test_edit_file_overlapping_matches_count(ws: Workspace) -> None:
    ws.ok("write_file", path="a", content="aaa")
    assert (
        "occurs 2 times" in ws.fail("edit_file", path="a", old_string="aa", new_string="b").message
    )


def test_edit_file_not_found_hints(ws: Workspace) -> None:
    ws.ok("write_file", path="crlf", content="a\r\nb\r\n")
    ws.ok("read_file", path="crlf")
    message = ws.fail("edit_file", path="crlf", old_string="a\nb", new_string="c").message
    assert "\\r\\n line endings" in message
    ws.ok("write_file", path="ws", content="  x  ")
    ws.ok("read_file", path="ws")
    assert (
        "whitespace" in ws.fail("edit_file", path="ws", old_string=" x\n", new_string="y").message
    )
    assert "read_file" in ws.fail("edit_file", path="ws", old_string="q", new_string="y").message


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"path": "a", "old_string": "", "new_string": "x"}, "must not be empty"),
        ({"path": "a", "old_string": "x", "new_string": "x"}, "the same"),
        ({"path": "missing", "old_string": "x", "new_string": "y"}, "Nothing exists"),
        ({"path": "d", "old_string": "x", "new_string": "y"}, "is a directory"),
        ({"path": "a", "old_string": "x", "new_string": "12345"}, "at most 4"),
    ],
)
def test_edit_file_errors(
    make_ws: Callable[..., Workspace], arguments: dict[str, object], fragment: str
) -> None:
    ws = make_ws({"max_write_bytes": 4, "read_before_write": False})
    ws.ok("write_file", path="a", content="x")
    ws.ok("write_file", path="d/f", content="")
    assert fragment in ws.fail("edit_file", **arguments).message


# -- glob -----------------------------------------------------------------------------------


def test_glob_double_star_includes_top_level(ws: Workspace) -> None:
    for path in ("a.py", "src/b.py", "src/pkg/c.py", "src/d.txt"):
        ws.ok("write_file", path=path, content="")
    assert ws.ok("glob", pattern="**/*.py").value.matches == ("a.py", "src/b.py", "src/pkg/c.py")
    assert ws.ok("glob", pattern="*.py").value.matches == ("a.py",)
    assert ws.ok("glob", pattern="*.py", path="src").value.matches == ("src/b.py",)
    result = ws.ok("glob", pattern="src/**")
    assert result.message == "3 files match 'src/**' under /workspace."


def test_glob_no_match_and_cap(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_list_entries": 2})
    for name in "abc":
        ws.ok("write_file", path=f"{name}.md", content="")
    assert ws.ok("glob", pattern="*.py").message == "No files match '*.py' under /workspace."
    result = ws.ok("glob", pattern="*.md")
    assert result.value.matches == ("a.md", "b.md")
    assert result.value.total == 3
    assert "1 more matches not shown" in result.render()


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"pattern": ""}, "empty"),
        ({"pattern": "a**"}, "whole path segment"),
        ({"pattern": "[a"}, "never closed"),
        ({"pattern": "../*"}, "'..'"),
        ({"pattern": "*", "path": "missing"}, "Nothing exists"),
        ({"pattern": "*", "path": "f"}, "is a file"),
    ],
)
def test_glob_errors(ws: Workspace, arguments: dict[str, object], fragment: str) -> None:
    ws.ok("write_file", path="f", content="")
    assert fragment in ws.fail("glob", **arguments).message


# -- grep -----------------------------------------------------------------------------------


def test_grep_finds_lines_in_path_order(ws: Workspace) -> None:
    ws.ok("write_file", path="b.py", content="x = 1\n# TODO b\n")
    ws.ok("write_file", path="a/c.txt", content="TODO c\r\n")
    result = ws.ok("grep", pattern="TODO")
    assert result.render().splitlines() == [
        "2 matches for 'TODO' in 2 files under /workspace.",
        "a/c.txt:1: TODO c",
        "b.py:2: # TODO b",
    ]


def test_grep_glob_filter_and_path(ws: Workspace) -> None:
    ws.ok("write_file", path="a.py", content="hit\n")
    ws.ok("write_file", path="src/b.py", content="hit\n")
    ws.ok("write_file", path="src/c.txt", content="hit\n")
    assert [h.path for h in ws.ok("grep", pattern="hit", glob="**/*.py").value.matches] == [
        "a.py",
        "src/b.py",
    ]
    assert [h.path for h in ws.ok("grep", pattern="hit", path="src").value.matches] == [
        "src/b.py",
        "src/c.txt",
    ]
    assert [h.path for h in ws.ok("grep", pattern="hit", path="src/c.txt").value.matches] == [
        "src/c.txt"
    ]
    assert ws.ok("grep", pattern="nope").message == "No lines match 'nope' in /workspace."


def test_grep_caps_matches_with_note(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_grep_matches": 3})
    ws.ok("write_file", path="a", content="x\n" * 5)
    result = ws.ok("grep", pattern="x")
    assert len(result.value.matches) == 3
    assert result.value.truncated
    assert "More matches exist" in result.message
    assert "more matches exist beyond these 3" in result.render()
    capped = ws.ok("grep", pattern="x", max_matches=50)
    assert "above the maximum; used 3" in capped.message
    fewer = ws.ok("grep", pattern="x", max_matches=2)
    assert "above" not in fewer.message
    assert len(fewer.value.matches) == 2


def test_grep_cuts_long_lines(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_grep_line_chars": 5})
    ws.ok("write_file", path="a", content="0123456789\n")
    assert ws.ok("grep", pattern="0").value.matches[0].line == "01234[... 5 more characters]"


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"pattern": "("}, "Invalid regular expression"),
        ({"pattern": "(?=x)"}, "lookaround"),
        ({"pattern": "x", "path": "missing"}, "Nothing exists"),
        ({"pattern": "x", "glob": "a**"}, "whole path segment"),
        ({"pattern": "x", "max_matches": 0}, "max_matches must be a positive number"),
    ],
)
def test_grep_errors(ws: Workspace, arguments: dict[str, object], fragment: str) -> None:
    ws.ok("write_file", path="f", content="x")
    assert fragment in ws.fail("grep", **arguments).message


def test_grep_hostile_pattern_is_linear(ws: Workspace) -> None:
    ws.ok("write_file", path="f", content="a" * 50_000 + "!\n")
    assert ws.ok("grep", pattern="(a+)+$").value.matches == ()


# -- rm -------------------------------------------------------------------------------------


def test_rm_file(ws: Workspace) -> None:
    ws.ok("write_file", path="a/b.txt", content="x")
    result = ws.ok("rm", path="/workspace/a/b.txt")
    assert result.message == "Removed the file /workspace/a/b.txt."
    assert result.value.removed == ("a/b.txt",)
    assert ws.tree() == {"a": None}


def test_rm_tree_reports_exactly_what_it_removed(ws: Workspace) -> None:
    ws.ok("write_file", path="d/one", content="")
    ws.ok("write_file", path="d/two", content="")
    ws.ok("write_file", path="d/sub/three", content="")
    ws.ok("write_file", path="keep", content="")
    result = ws.ok("rm", path="d")
    assert result.message == (
        "Removed the directory /workspace/d with everything in it: 3 files and 2 directories "
        "(itself included)."
    )
    assert result.value.removed == ("d/", "d/one", "d/sub/", "d/sub/three", "d/two")
    assert ws.tree() == {"keep": ""}


def test_rm_errors(ws: Workspace) -> None:
    assert "root cannot be removed" in ws.fail("rm", path="/workspace").message
    assert "root cannot be removed" in ws.fail("rm", path=" / ").message
    assert "Nothing exists" in ws.fail("rm", path="missing").message
    assert "'..'" in ws.fail("rm", path="a/../..").message


# -- events ---------------------------------------------------------------------------------


def test_every_call_publishes_a_tool_invoked_event(ws: Workspace) -> None:
    ws.ok("write_file", path="a", content="x")
    ws.fail("read_file", path="b")
    outcomes = [e.outcome for e in ws.session[ToolInvoked].all()]
    assert outcomes == [CallOutcome.OK, CallOutcome.ERROR]


def test_names_with_edge_whitespace_are_not_created(ws: Workspace) -> None:
    message = ws.fail("write_file", path=" d /a", content="").message
    assert "'d ' in /workspace/d /a starts or ends with whitespace" in message
    ws.ok("write_file", path=" a.txt ", content="")  # outer whitespace is not part of the path
    assert ws.tree() == {"a.txt": ""}
