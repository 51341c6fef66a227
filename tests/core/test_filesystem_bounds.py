"""The shared filesystem helpers bound their cost before doing the work (issue 14)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from haversack.errors import (
    FilesystemLimitError,
    InvalidArgumentError,
    InvalidPathError,
    InvalidPatternError,
)
from haversack.filesystem import (
    MATCH_COUNT_CAP,
    GrepBudget,
    compile_glob,
    compile_grep_pattern,
    count_occurrences,
    grep_texts,
    line_window,
    replace_exact,
    replaced_size,
)


def _peak(work: Callable[[], Any]) -> int:
    """Peak bytes traced while ``work`` runs (its exception, if any, is swallowed)."""
    tracemalloc.start()
    try:
        work()
    except Exception:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


# -- edit ---------------------------------------------------------------------------------


def test_replace_all_growth_is_refused_before_the_result_is_built() -> None:
    content = "a" * 100_000
    with pytest.raises(FilesystemLimitError, match="20100000 bytes; the limit for one file"):
        replace_exact(
            content, "a", "b" * 201, replace_all=True, where="f", path="f", max_bytes=1 << 20
        )
    # Building the 20 MB result first would trace at least that much.
    peak = _peak(
        lambda: replace_exact(
            content, "a", "b" * 201, replace_all=True, where="f", path="f", max_bytes=1 << 20
        )
    )
    assert peak < 1 << 20


def test_replace_exact_default_limit_is_the_per_file_limit() -> None:
    # 1 MB x 2048 would need 2 GiB; the default refuses it arithmetically.
    with pytest.raises(FilesystemLimitError, match="the limit for one file is 16777216"):
        replace_exact("a" * 1_000_000, "a", "b" * 2048, replace_all=True, where="f", path="f")


def test_replaced_size_is_arithmetic() -> None:
    assert replaced_size(10, 3, 1, 4) == 19
    assert replaced_size(10, 3, 4, 1) == 1


def test_ambiguous_counting_stops_at_the_cap() -> None:
    content = "a" * 1000
    assert count_occurrences(content, "a" * 10) == (MATCH_COUNT_CAP, False)
    assert count_occurrences("xaxax", "a") == (2, True)
    assert count_occurrences("a" * MATCH_COUNT_CAP, "a") == (MATCH_COUNT_CAP, True)
    with pytest.raises(InvalidArgumentError, match=f"occurs at least {MATCH_COUNT_CAP} times"):
        replace_exact(content, "a" * 10, "b", replace_all=False, where="f", path="f")
    with pytest.raises(InvalidArgumentError, match="occurs 2 times"):
        replace_exact("xaxax", "a", "b", replace_all=False, where="f", path="f")


def test_ambiguous_long_old_string_costs_a_capped_number_of_finds() -> None:
    # 500 k overlapping occurrences of a 500 k text: uncapped counting is quadratic (60 s+).
    content = "a" * 1_000_000
    with pytest.raises(InvalidArgumentError, match="at least"):
        replace_exact(content, "a" * 500_000, "b", replace_all=False, where="f", path="f")


# -- read windows -------------------------------------------------------------------------


def test_line_window_does_not_split_the_file_into_lines() -> None:
    text = "ab\n" * 500_000  # splitting would make 500 k strings (~25 MB)
    assert line_window(text, 250_000, 2) == ("ab\nab\n", 500_000)
    assert _peak(lambda: line_window(text, 250_000, 2)) < 64 * 1024


@pytest.mark.parametrize("offset", [0, 1, 2, 5, 9])
@pytest.mark.parametrize("limit", [None, 1, 3])
def test_line_window_keeps_endings(offset: int, limit: int | None) -> None:
    text = "a\r\n\nb\nc\r\n\r\nd"
    lines = text.splitlines(keepends=True)
    end = len(lines) if limit is None else offset + limit
    assert line_window(text, offset, limit) == ("".join(lines[offset:end]), len(lines))


# -- patterns -----------------------------------------------------------------------------


def test_grep_pattern_length_is_capped_with_a_clear_message() -> None:
    with pytest.raises(InvalidPatternError, match="100000 characters long; the limit is 1000"):
        compile_grep_pattern("a" * 100_000)
    assert compile_grep_pattern("a" * 100_000, max_chars=100_000).is_literal


def test_glob_pattern_length_is_capped() -> None:
    with pytest.raises(InvalidPathError, match="5000 characters long; the limit is 1000"):
        compile_glob("*" * 5000)
    assert compile_glob("a" * 200 + "*", max_chars=300).match("a" * 200 + "b")


def test_long_plain_text_patterns_skip_the_regex_engine() -> None:
    assert compile_grep_pattern("hello world, " * 3).is_literal
    assert not compile_grep_pattern("hello world").is_literal  # short: RE2's DFA is faster
    assert not compile_grep_pattern("hello.world, " * 3).is_literal
    # The case the issue timed at 44 s on RE2: a long literal that matches a long line.
    line = "a" * 100_000
    found = grep_texts(compile_grep_pattern(line, max_chars=100_000), [("f", line + "\n")])
    assert [m.line_number for m in found.matches] == [1]


# -- the work budget ------------------------------------------------------------------------


def _files(count: int, size: int) -> Iterator[tuple[str, str]]:
    for index in range(count):
        yield f"f{index:03}", ("x" * (size - 1) + "\n")


def test_grep_stops_at_the_byte_budget_with_partial_results() -> None:
    budget = GrepBudget(max_scan_bytes=10_000)
    found = grep_texts("x", _files(100, 1000), max_matches=1000, budget=budget)
    assert len(found.matches) == 10
    assert found.scanned_bytes == 10_000
    assert found.stopped.startswith("stopped after scanning 10000 bytes in 11 file(s)")
    assert "narrow the path or glob" in found.stopped


def test_grep_stops_at_the_time_budget() -> None:
    ticks = iter(range(1000))
    budget = GrepBudget(max_seconds=3, clock=lambda: float(next(ticks)))
    found = grep_texts("x", _files(100, 100), max_matches=1000, budget=budget)
    # The clock advances one second per check: the start, then one check per chunk.
    assert len(found.matches) == 3
    assert "the 3-second budget" in found.stopped


def test_complete_search_has_no_stop_reason() -> None:
    found = grep_texts("x", _files(3, 10))
    assert (len(found.matches), found.stopped, found.skipped_lines) == (3, "", 0)
    assert found.scanned_files == 3


def test_regex_over_an_over_long_line_is_skipped_and_counted() -> None:
    pattern = compile_grep_pattern("a" * 999 + ".")
    assert pattern.chunk_bytes < 20_000
    text = "b\n" + "a" * 100_000 + "\nab\n"
    found = grep_texts(pattern, [("f", text)])
    assert found.skipped_lines == 1
    assert found.matches == ()
    # A plain-text pattern searches it.
    assert grep_texts("a" * 999, [("f", text)]).matches[0].line_number == 2


def test_matching_lines_are_kept_to_a_bounded_head() -> None:
    budget = GrepBudget(max_line_bytes=10)
    (match,) = grep_texts("x", [("f", "é" * 20 + "x\n")], budget=budget).matches
    assert match.line == "é" * 5
    assert match.cut_bytes == 31


def test_grep_budget_validates() -> None:
    with pytest.raises(ValueError, match="max_seconds"):
        GrepBudget(max_seconds=0)
    with pytest.raises(ValueError, match="max_scan_bytes"):
        GrepBudget(max_scan_bytes=0)


def test_re2_program_too_large_is_refused_clearly() -> None:
    with pytest.raises(InvalidPatternError, match="search engine's 4 MiB budget"):
        compile_grep_pattern("\\pL{1000}" * 10, max_chars=10_000)
    # Below the memory cap a large program only shrinks the chunk a search covers at once.
    big = compile_grep_pattern("[a-z]{1000}" * 40, max_chars=10_000)
    assert big.cost > 40_000
    assert big.chunk_bytes * big.cost <= 1 << 24
