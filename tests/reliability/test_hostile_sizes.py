"""Hostile sizes against the file and planning tools: every call does bounded work (issue 14).

Each tool gets the issue's cases (a 100,000-character grep pattern, a replace_all that would
grow a file past its limit, an ambiguous 500,000-character old_string, huge plan text) plus
hypothesis-generated sizes around every limit. On top of the usual checks (a ``ToolResult``,
an error with a message, a failed call leaving no state) each call must stay within two
deterministic bounds, so a quadratic loop or an unbounded allocation fails the family without
any timing:

* Python memory (``tracemalloc`` peak) under a few times the largest file plus the arguments;
* C-level calls (``sys.setprofile``) under a budget linear in the workspace's files: the
  uncapped ambiguity count made one ``str.find`` per occurrence (500,000 of them).
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import Filesystem

from ._harness import PODMAN_PACKS, Figure, Harness, budget, compose_all

MIB = 1024 * 1024
FILE_BYTES = 2 * MIB
DIR_FILES = 1500
CONFIG: dict[str, dict[str, Any]] = {
    "vfs": {
        "max_file_bytes": FILE_BYTES,
        "max_write_bytes": MIB // 2,
        "max_pattern_chars": 1000,
        "grep_scan_bytes": 8 * MIB,
        "read_before_write": False,
    }
}
#: C calls one tool call may make: a few dozen per workspace file, plus a fixed allowance.
WORK_PER_FILE = 40
WORK_FIXED = 40_000


def _harness() -> Harness:
    h = Harness(compose_all(exclude=sorted(PODMAN_PACKS), config=CONFIG))
    fs: Filesystem = h.executor.resources.get(Filesystem)  # type: ignore[type-abstract]
    fs.write("a.txt", "a" * (FILE_BYTES // 2))
    fs.write("line.txt", "a" * (FILE_BYTES - 1) + "\n")
    fs.write("lines.txt", "ab\n" * (FILE_BYTES // 3))
    for index in range(DIR_FILES):
        fs.write(f"d/{'a' * 60}{index}", "a\n")
    h.ok("planning_setup_plan", {"objective": "sizes", "steps": ["one"]})
    h.mark_baseline()
    return h


class _Meter:
    """Counts C calls and traces Python memory around one call."""

    def __init__(self) -> None:
        self.calls = 0

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            self.calls += 1

    def run(self, h: Harness, figure: Figure, tool: str, arguments: Any, label: str) -> None:
        size = sum(len(v) for v in arguments.values() if isinstance(v, str))
        size += sum(len(s) for v in arguments.values() if isinstance(v, list) for s in v)
        memory_bound = 6 * FILE_BYTES + 4 * size + 8 * MIB
        work_bound = WORK_PER_FILE * (DIR_FILES + 10) + WORK_FIXED
        self.calls = 0
        tracemalloc.start()
        sys.setprofile(self._profile)
        try:
            h.hostile(figure, tool, arguments, label)
        finally:
            sys.setprofile(None)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        figure.check(
            peak <= memory_bound,
            f"{tool} given {label}: {peak / MIB:.1f} MiB of memory "
            f"(bound {memory_bound / MIB:.1f})",
        )
        figure.check(
            self.calls <= work_bound,
            f"{tool} given {label}: {self.calls} C calls (bound {work_bound})",
        )


#: The issue's cases and the worst the limits allow, per tool.
FIXED: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "grep": [
        ("a 100,000-char literal", {"pattern": "a" * 100_000}),
        ("a 1,000-char literal over a 2 MiB line", {"pattern": "a" * 1000}),
        ("a DFA-hostile regex", {"pattern": "(?:a|b)*a(?:a|b){20}c"}),
        ("a large RE2 program", {"pattern": "[ab]{999}c"}),
        ("a pattern matching every line", {"pattern": "a", "max_matches": 10**9}),
        ("a huge glob", {"pattern": "a", "glob": "*a" * 600}),
    ],
    "edit_file": [
        (
            "replace_all growth past the file limit",
            {"path": "a.txt", "old_string": "a", "new_string": "b" * 2048, "replace_all": True},
        ),
        (
            "an ambiguous 500,000-char old_string",
            {"path": "a.txt", "old_string": "a" * 500_000, "new_string": "b"},
        ),
        (
            "a replace_all up to the limit",
            {"path": "a.txt", "old_string": "a", "new_string": "bb", "replace_all": True},
        ),
    ],
    "read_file": [
        ("the middle of 700,000 lines", {"path": "lines.txt", "offset": 350_000}),
        ("a 2 MiB line", {"path": "line.txt"}),
        ("a huge limit", {"path": "lines.txt", "limit": 10**12}),
    ],
    "write_file": [
        ("content over the write limit", {"path": "w.txt", "content": "w" * MIB}),
        ("content at the write limit", {"path": "w.txt", "content": "w" * (MIB // 2)}),
    ],
    "glob": [
        ("a 2,000-char pattern", {"pattern": "*" * 2000}),
        ("the longest segment of stars", {"pattern": "d/" + "*a" * 127 + "b"}),
    ],
    "ls": [("a directory of 1,500 entries", {"path": "d"})],
    "rm": [("a directory of 1,500 files", {"path": "d"})],
    "planning_setup_plan": [
        ("a 3 MB 'ab ab ...' objective", {"objective": "ab " * 1_000_000}),
        ("a 3 MB step title", {"objective": "o", "steps": ["ab " * 1_000_000]}),
        ("1,000 steps", {"objective": "o", "steps": ["s"] * 1000}),
    ],
    "planning_add_step": [("10,000 titles", {"steps": ["t" * 200] * 10_000})],
}


def _sizes(tool: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    n = st.integers(min_value=0, max_value=3000)
    if tool == "grep":
        return st.tuples(
            st.sampled_from(["a", "ab", "(?:a|b)", "[ab]", "."]), n, st.booleans()
        ).map(lambda t: (f"{t[0]!r} x {t[1]}", {"pattern": t[0] * t[1] + ("c" if t[2] else "")}))
    if tool == "edit_file":
        return st.tuples(st.integers(1, FILE_BYTES // 2), st.integers(0, 4096), st.booleans()).map(
            lambda t: (
                f"old {t[0]}, new {t[1]}, replace_all {t[2]}",
                {
                    "path": "a.txt",
                    "old_string": "a" * t[0],
                    "new_string": "b" * t[1],
                    "replace_all": t[2],
                },
            )
        )
    if tool == "read_file":
        return st.tuples(
            st.sampled_from(["lines.txt", "line.txt", "a.txt"]),
            st.integers(0, 10**9),
            st.one_of(st.none(), st.integers(1, 10**9)),
        ).map(
            lambda t: (
                f"{t[0]} offset {t[1]} limit {t[2]}",
                {"path": t[0], "offset": t[1] % 800_000, "limit": t[2]},
            )
        )
    if tool == "write_file":
        return st.integers(0, MIB).map(
            lambda k: (f"{k} bytes", {"path": "w.txt", "content": "w" * k})
        )
    if tool == "glob":
        return st.tuples(st.sampled_from(["*a", "?", "**/", "[ab]"]), n).map(
            lambda t: (f"{t[0]!r} x {t[1]}", {"pattern": t[0] * t[1] + "b"})
        )
    if tool.startswith("planning_"):
        return st.tuples(st.integers(0, 200_000), st.integers(0, 3000)).map(
            lambda t: (
                f"objective {t[0]}, {t[1]} steps",
                {"objective": "ab " * (t[0] // 3) + "o", "steps": ["s"] * t[1]},
            )
        )
    return st.just(("the big directory", {"path": "d"}))


TOOLS = tuple(FIXED)


@pytest.fixture
def harness() -> Iterator[Harness]:
    h = _harness()
    yield h
    h.close()


@pytest.mark.parametrize("tool", TOOLS)
def test_hostile_sizes(tool: str, harness: Harness, figure) -> None:
    fig = figure("hostile-arguments", f"hostile sizes: {tool}")
    meter = _Meter()
    for label, arguments in FIXED[tool]:
        meter.run(harness, fig, tool, arguments, label)
    name = "planning_setup_plan" if tool.startswith("planning_") else tool

    @settings(
        max_examples=budget(8, 60),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=_sizes(tool))
    def fuzz(case: tuple[str, dict[str, Any]]) -> None:
        label, arguments = case
        meter.run(harness, fig, name, arguments, label)

    fuzz()
    fig.note("bounds", f"memory 6 x {FILE_BYTES // MIB} MiB + 4 x arguments + 8 MiB; C calls")
    fig.assert_clean()
