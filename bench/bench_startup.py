"""Interpreter start-up: ``import haversack`` must stay light (pydantic is imported lazily)."""

from __future__ import annotations

from _harness import Result, interpreter, measure_process, result

SUITE = "startup"


def run(quick: bool) -> list[Result]:
    """Time a bare interpreter start and one that imports each distribution's package."""
    repeats = 5 if quick else 30
    python = interpreter()
    bare = measure_process([python, "-c", "pass"], repeats=repeats)
    floor = ("python -c pass", bare)
    return [
        result(SUITE, "python -c pass", bare, notes="the floor: interpreter start and exit"),
        result(
            SUITE,
            "python -c 'import haversack'",
            measure_process([python, "-c", "import haversack"], repeats=repeats),
            floor=floor,
            max_ratio=4,
            notes="pydantic and pluggy must not be imported here",
        ),
    ]
