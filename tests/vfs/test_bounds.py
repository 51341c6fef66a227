"""The VFS tools check the cost of what they are asked before doing it (issue 14)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from haversack_vfs import CONFIG_MAXIMA, VfsConfig

from ._workspace import Workspace


def test_edit_replace_all_growth_is_refused_before_building(
    make_ws: Callable[..., Workspace],
) -> None:
    ws = make_ws({"max_file_bytes": 1_000_000})
    ws.ok("write_file", path="a.txt", content="a" * 100_000)
    ws.ok("read_file", path="a.txt")
    result = ws.fail(
        "edit_file", path="a.txt", old_string="a", new_string="b" * 100, replace_all=True
    )
    assert "Replacing 100000 occurrences would make /workspace/a.txt 10000000 bytes" in (
        result.message
    )
    assert "the limit for one file is 1000000 bytes" in result.message


def test_edit_ambiguity_is_counted_up_to_a_cap(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws()
    ws.ok("write_file", path="a.txt", content="a" * 100_000)
    ws.ok("read_file", path="a.txt")
    result = ws.fail("edit_file", path="a.txt", old_string="a" * 50_000, new_string="b")
    assert "occurs at least 20 times" in result.message
    result = ws.fail("edit_file", path="a.txt", old_string="a" * 99_999, new_string="b")
    assert "occurs 2 times" in result.message


@pytest.mark.parametrize(
    ("tool", "arguments", "what"),
    [
        ("grep", {"pattern": "a" * 101}, "grep pattern is 101 characters"),
        ("grep", {"pattern": "a", "glob": "*" * 101}, "glob pattern is 101 characters"),
        ("glob", {"pattern": "*" * 101}, "glob pattern is 101 characters"),
    ],
)
def test_pattern_lengths_are_capped(
    make_ws: Callable[..., Workspace], tool: str, arguments: dict[str, str], what: str
) -> None:
    ws = make_ws({"max_pattern_chars": 100})
    result = ws.fail(tool, **arguments)
    assert what in result.message
    assert "the limit is 100" in result.message


def test_grep_reports_where_its_budget_stopped_it(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"grep_scan_bytes": 2500})
    for index in range(5):
        ws.ok("write_file", path=f"f{index}.txt", content="x" * 999 + "\n")
    result = ws.ok("grep", pattern="x")
    assert len(result.value.matches) == 2
    assert result.value.stopped.startswith("stopped after scanning 2000 bytes in 3 file(s)")
    assert "The search stopped after scanning" in result.message
    assert "narrow the path or glob" in result.message


def test_grep_reports_skipped_long_lines(make_ws: Callable[..., Workspace]) -> None:
    ws = make_ws({"max_pattern_chars": 5000})
    ws.ok("write_file", path="a.txt", content="a" * 200_000 + "\n")
    result = ws.ok("grep", pattern="a{1000}" * 4)
    assert "1 line was too long to search with this regular expression" in result.message


def test_every_limit_has_a_maximum() -> None:
    for name, top in CONFIG_MAXIMA.items():
        value = top + 1 if isinstance(top, int) else top * 2
        with pytest.raises(ValueError, match=name):
            VfsConfig(**{name: value})
        VfsConfig(**{name: top})
    with pytest.raises(ValueError, match="grep_seconds"):
        VfsConfig(grep_seconds=0)
