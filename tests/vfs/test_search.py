"""glob and grep on the in-memory filesystem, and the public grep helper."""

from __future__ import annotations

import pytest

from haversack import GrepMatch, GrepResult
from haversack.errors import (
    FilesystemError,
    InvalidArgumentError,
    InvalidPathError,
    InvalidPatternError,
    PathKindError,
    PathNotFoundError,
)
from haversack.filesystem import GrepBudget, GrepPattern, compile_grep_pattern, grep_texts
from haversack_vfs import InMemoryFilesystem


@pytest.fixture
def fs():
    fs = InMemoryFilesystem()
    fs.write("a.py", "import os\nprint('hi')\n")
    fs.write("README.md", "# Title\nTODO: write\n")
    fs.write("src/pkg/b.py", "def f():\r\n    return 1  # TODO\r\n")
    fs.write("src/pkg/deep/c.py", "x = 1")
    fs.write("src/notes.txt", "todo later\nTODO now")
    fs.mkdir("empty")
    return fs


# -- glob ------------------------------------------------------------------------------


def test_glob_double_star_includes_root_files(fs):
    assert fs.glob("**/*.py") == ("a.py", "src/pkg/b.py", "src/pkg/deep/c.py")


def test_glob_star_is_top_level_only(fs):
    assert fs.glob("*.py") == ("a.py",)
    assert fs.glob("*") == ("README.md", "a.py")


def test_glob_relative_to_a_base_path(fs):
    assert fs.glob("*.py", path="src/pkg") == ("src/pkg/b.py",)
    assert fs.glob("**", path="/workspace/src") == (
        "src/notes.txt",
        "src/pkg/b.py",
        "src/pkg/deep/c.py",
    )
    assert fs.glob("pkg/**/*.py", path="src") == ("src/pkg/b.py", "src/pkg/deep/c.py")
    assert fs.glob("**", path="empty") == ()


def test_glob_returns_files_only_and_handles_missing_prefix(fs):
    assert fs.glob("src/*") == ("src/notes.txt",)
    assert fs.glob("nothing/**") == ()
    assert fs.glob("a.py/**") == ()


def test_glob_errors(fs):
    with pytest.raises(PathNotFoundError):
        fs.glob("*", path="nope")
    with pytest.raises(PathKindError, match="is a file"):
        fs.glob("*", path="a.py")
    with pytest.raises(InvalidPathError, match="empty"):
        fs.glob("  ")
    with pytest.raises(InvalidPathError, match="whole path segment"):
        fs.glob("**.py")


# -- grep ------------------------------------------------------------------------------


def test_grep_path_then_line_order_without_line_endings(fs):
    result = fs.grep("TODO")
    assert result == GrepResult(
        (
            GrepMatch("README.md", 2, "TODO: write"),
            GrepMatch("src/notes.txt", 2, "TODO now"),
            GrepMatch("src/pkg/b.py", 2, "    return 1  # TODO"),
        )
    )


def test_grep_anchors_are_per_line_even_with_crlf(fs):
    assert fs.grep(r"TODO$").matches[-1] == GrepMatch("src/pkg/b.py", 2, "    return 1  # TODO")
    assert [m.line for m in fs.grep(r"^def f\(\):$").matches] == ["def f():"]
    assert [m.path for m in fs.grep("^x = 1$").matches] == ["src/pkg/deep/c.py"]


def test_grep_never_matches_across_lines(fs):
    assert fs.grep(r"os\sprint").matches == ()
    assert fs.grep(r"os[^z]print").matches == ()
    assert fs.grep(r"(?s)os.print").matches == ()


def test_grep_base_path_file_and_glob(fs):
    assert {m.path for m in fs.grep("TODO", path="src").matches} == {
        "src/notes.txt",
        "src/pkg/b.py",
    }
    assert [m.path for m in fs.grep("TODO", glob="**/*.py").matches] == ["src/pkg/b.py"]
    assert [m.path for m in fs.grep("TODO", path="src", glob="*.txt").matches] == ["src/notes.txt"]
    assert fs.grep("TODO", glob="*.md").matches[0].path == "README.md"
    assert fs.grep("TODO", glob="   ").matches == fs.grep("TODO").matches
    assert [m.line_number for m in fs.grep("o", path="src/notes.txt").matches] == [1, 2]
    assert fs.grep("o", path="src/notes.txt", glob="*.py").matches == ()


def test_grep_case_insensitive_flag(fs):
    assert len(fs.grep("(?i)todo").matches) == 4


def test_grep_truncates_only_when_more_matches_exist():
    fs = InMemoryFilesystem()
    fs.write("f", "x\n" * 5)
    assert fs.grep("x", max_matches=5) == GrepResult(
        tuple(GrepMatch("f", n, "x") for n in range(1, 6)), truncated=False
    )
    capped = fs.grep("x", max_matches=3)
    assert [m.line_number for m in capped.matches] == [1, 2, 3]
    assert capped.truncated


def test_grep_empty_matches_count_lines_not_the_end(fs):
    fs.write("e", "")
    fs.write("two", "a\n\nb\n")
    assert [m.line_number for m in fs.grep("", path="two").matches] == [1, 2, 3]
    assert [m.line_number for m in fs.grep("^$", path="two").matches] == [2]
    assert fs.grep("", path="e").matches == ()
    assert [m.line_number for m in fs.grep("x*$", path="src/notes.txt").matches] == [1, 2]


def test_grep_text_anchors_use_the_exact_line_path(fs):
    assert [m.line for m in fs.grep(r"\Aimport").matches] == ["import os"]
    assert [m.path for m in fs.grep(r"TODO\z").matches] == ["src/pkg/b.py"]
    assert [m.line for m in fs.grep(r"(?-m)^print").matches] == ["print('hi')"]


def test_grep_unicode_lines(fs):
    fs.write("u.txt", "café\n漢字 🎉\r\nplain")
    assert fs.grep("漢.", path="u.txt").matches == (GrepMatch("u.txt", 2, "漢字 🎉"),)
    assert fs.grep("^caf.$", path="u.txt").matches == (GrepMatch("u.txt", 1, "café"),)


def test_grep_invalid_patterns_explain_the_syntax(fs):
    for bad in ("(unclosed", "[z-a]", r"(a)\1", "(?=x)", r"a\Z"):
        with pytest.raises(InvalidPatternError, match="RE2 syntax") as info:
            fs.grep(bad)
        assert isinstance(info.value, FilesystemError)
    with pytest.raises(InvalidArgumentError, match="max_matches"):
        fs.grep("x", max_matches=0)
    with pytest.raises(PathNotFoundError):
        fs.grep("x", path="nope")


def test_hostile_regex_completes():
    # Exponential for a backtracking engine; RE2 is linear. No timing assertion: it returns.
    fs = InMemoryFilesystem()
    fs.write("evil.txt", "a" * 100_000 + "!\n" + ("a" * 5000 + "\n") * 20)
    assert fs.grep("(a+)+$", max_matches=1000).matches[0].line_number == 2
    assert fs.grep("(a|aa)+b").matches == ()
    assert fs.grep("(x+x+)+y").matches == ()


def test_public_helper_works_on_any_texts():
    pattern = compile_grep_pattern("b")
    assert isinstance(pattern, GrepPattern)
    assert compile_grep_pattern("b") is pattern
    assert list(pattern.search_lines("a\nb\r\ncb")) == [(2, "b"), (3, "cb")]
    consumed = []

    def texts():  # endless: grep_texts must stop reading once the cap is exceeded
        number = 0
        while True:
            number += 1
            consumed.append(number)
            yield f"f{number}", "b\n" + "x" * 600_000 + "\nb\n"

    result = grep_texts("b", texts(), max_matches=3)
    assert result.truncated
    assert [(m.path, m.line_number) for m in result.matches] == [("f1", 1), ("f1", 3), ("f2", 1)]
    assert consumed == [1, 2]
    assert "GrepPattern('b')" in repr(pattern)


def test_many_texts_keep_paths_and_line_numbers_apart():
    texts = [("empty", ""), ("nl", "\n"), ("a", "a\r\nb"), ("blank", "\n\nz\n"), ("end", "z")]
    assert [(m.path, m.line_number, m.line) for m in grep_texts("^$", texts).matches] == [
        ("nl", 1, ""),
        ("blank", 1, ""),
        ("blank", 2, ""),
    ]
    assert [(m.path, m.line_number) for m in grep_texts("z$", texts).matches] == [
        ("blank", 3),
        ("end", 1),
    ]
    assert [(m.path, m.line_number) for m in grep_texts(r"\Az", texts).matches] == [
        ("blank", 3),
        ("end", 1),
    ]
    many = [(f"f{i}", "hit\n" * 3) for i in range(2000)]
    # A clock that stands still: this pins the bookkeeping, not the time budget, which a
    # loaded machine would otherwise exhaust partway.
    result = grep_texts("hit", many, max_matches=10_000, budget=GrepBudget(clock=lambda: 0.0))
    assert len(result.matches) == 6000
    assert result.matches[-1] == GrepMatch("f1999", 3, "hit")
