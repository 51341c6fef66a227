"""The project's one glob dialect: each rule of ``haversack.filesystem`` pinned."""

from __future__ import annotations

import pytest

from haversack.errors import InvalidPathError
from haversack.filesystem import GlobMatcher, compile_glob


def matches(pattern: str, paths: list[str]) -> list[str]:
    matcher = compile_glob(pattern)
    return [p for p in paths if matcher.match(p)]


PATHS = [
    "a.py",
    "b.txt",
    ".env",
    "src/a.py",
    "src/pkg/b.py",
    "src/pkg/deep/c.py",
    "srcx/d.py",
    "docs/index.md",
]


def test_star_does_not_cross_slash():
    assert matches("*.py", PATHS) == ["a.py"]
    assert matches("src/*.py", PATHS) == ["src/a.py"]


def test_star_matches_leading_dot():
    assert matches("*", PATHS) == ["a.py", "b.txt", ".env"]
    assert matches(".*", PATHS) == [".env"]


def test_question_mark_is_one_character_and_never_slash():
    assert matches("?.py", PATHS) == ["a.py"]
    assert compile_glob("a?b").match("a/b") is False
    assert compile_glob("a?b").match("axb") is True


def test_double_star_matches_zero_or_more_directories():
    assert matches("**/*.py", PATHS) == [
        "a.py",
        "src/a.py",
        "src/pkg/b.py",
        "src/pkg/deep/c.py",
        "srcx/d.py",
    ]
    assert matches("src/**/*.py", PATHS) == ["src/a.py", "src/pkg/b.py", "src/pkg/deep/c.py"]
    assert matches("src/**/deep/*.py", PATHS) == ["src/pkg/deep/c.py"]
    assert matches("**/pkg/**/*.py", PATHS) == ["src/pkg/b.py", "src/pkg/deep/c.py"]


def test_trailing_double_star_matches_everything_below_but_not_the_directory():
    assert matches("src/**", [*PATHS, "src"]) == [
        "src/a.py",
        "src/pkg/b.py",
        "src/pkg/deep/c.py",
    ]


def test_lone_double_star_matches_everything():
    assert matches("**", PATHS) == PATHS


def test_repeated_double_star_collapses():
    assert matches("**/**/*.py", PATHS) == matches("**/*.py", PATHS)
    assert matches("src/**/**", PATHS) == matches("src/**", PATHS)


def test_double_star_inside_a_segment_is_rejected():
    for pattern in ("**.py", "a**", "src/**x/*.py"):
        with pytest.raises(InvalidPathError, match="whole path segment"):
            compile_glob(pattern)


def test_character_classes():
    paths = ["a1", "b2", "c3", "]x", "-", "a-"]
    assert matches("[ab]?", paths) == ["a1", "b2", "a-"]
    assert matches("[a-b][0-9]", paths) == ["a1", "b2"]
    assert matches("[!a]?", paths) == ["b2", "c3", "]x"]
    assert matches("[^a]?", paths) == ["b2", "c3", "]x"]
    assert matches("[]]x", paths) == ["]x"]
    assert matches("[-]", paths) == ["-"]
    assert matches("a[-]", paths) == ["a-"]


def test_brackets_make_metacharacters_literal():
    paths = ["a*b", "axb", "a?b", "[x]"]
    assert matches("a[*]b", paths) == ["a*b"]
    assert matches("a[?]b", paths) == ["a?b"]
    assert matches("[[]x]", paths) == ["[x]"]


def test_backslash_is_an_ordinary_character():
    assert compile_glob("a\\b").match("a\\b")
    assert not compile_glob("a\\*").match("a*")  # the star is still a wildcard after '\'
    assert compile_glob("a\\*").match("a\\xyz")


def test_regex_characters_are_literal():
    paths = ["a.b", "axb", "a+b", "(x)", "a$", "a{1}"]
    assert matches("a.b", paths) == ["a.b"]
    assert matches("a+b", paths) == ["a+b"]
    assert matches("(x)", paths) == ["(x)"]
    assert matches("a$", paths) == ["a$"]
    assert matches("a{1}", paths) == ["a{1}"]


def test_negated_class_never_matches_slash():
    assert not compile_glob("a[!x]b").match("a/b")


def test_unclosed_class_is_rejected():
    with pytest.raises(InvalidPathError, match="never closed"):
        compile_glob("a[bc")
    with pytest.raises(InvalidPathError, match="never closed"):
        compile_glob("a[b/c]")  # a class cannot span segments


def test_reversed_range_is_rejected():
    with pytest.raises(InvalidPathError, match="reversed"):
        compile_glob("[z-a]")


def test_pattern_is_normalised_like_a_path():
    for spelling in ("/workspace/src/*.py", "./src/*.py", "src//*.py", " src/*.py ", "/src/*.py"):
        assert compile_glob(spelling).pattern == "src/*.py"
        assert compile_glob(spelling).match("src/a.py")


def test_dot_dot_and_empty_patterns_are_rejected():
    with pytest.raises(InvalidPathError, match=r"'\.\.'"):
        compile_glob("../*.py")
    for empty in ("", "   ", "/", "/workspace"):
        with pytest.raises(InvalidPathError, match="empty"):
            compile_glob(empty)


def test_non_string_pattern_is_rejected():
    with pytest.raises(InvalidPathError, match="string"):
        compile_glob(3)  # type: ignore[arg-type]


def test_whole_path_must_match():
    assert not compile_glob("src").match("src/a.py")
    assert not compile_glob("a.py").match("x/a.py")
    assert not compile_glob("*.py").match("a.pyc")


def test_case_sensitive_and_unicode():
    assert not compile_glob("*.PY").match("a.py")
    assert compile_glob("dé*/ü?.txt").match("déjà/üx.txt")


def test_prefix_is_the_literal_leading_directories():
    assert compile_glob("src/pkg/**/*.py").prefix == "src/pkg"
    assert compile_glob("src/a.py").prefix == "src"
    assert compile_glob("*.py").prefix == ""
    assert compile_glob("src/*/x.py").prefix == "src"
    assert compile_glob("**").prefix == ""


def test_compile_is_cached_and_matcher_is_callable():
    matcher = compile_glob("**/*.md")
    assert compile_glob("**/*.md") is matcher
    assert isinstance(matcher, GlobMatcher)
    assert list(filter(matcher, PATHS)) == ["docs/index.md"]
    assert "**/*.md" in repr(matcher)


def test_hostile_patterns_match_quickly():
    # A naive translation backtracks exponentially on these; this test just has to finish.
    assert not compile_glob("*a*a*a*a*a*a*a*a*a*a*a*b").match("a" * 255)
    deep = "/".join(["a"] * 32)
    assert not compile_glob("**/a/**/a/**/a/**/a/**/a/**/a/**/b").match(deep)
    assert compile_glob("**/a/**/a/**/a/**/a/**/a/**/a/**/a").match(deep)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*a*b", "xaybab", True),
        ("*a*b", "xayba", False),
        ("a*", "a", True),
        ("*", "", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/x/y/bc", False),
        ("a/**/b*/c", "a/b1/b2/c", True),
        ("**/b/c", "b/c", True),
        ("**/b/c", "x/b/b/c", True),
    ],
)
def test_greedy_translation_agrees_with_the_rules(pattern, path, expected):
    assert compile_glob(pattern).match(path) is expected
