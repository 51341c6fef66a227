"""Interpreter start-up: ``import haversack`` must stay light (pydantic is imported lazily)."""

from __future__ import annotations

from _harness import Result, interpreter, measure_process, result

SUITE = "startup"
API_IMPORT = "from haversack import Prompt, MarkdownSection, Tool, ToolExecutor, Session"


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
            notes="names load on first use (PEP 562): pydantic and pluggy are not imported",
        ),
        result(
            SUITE,
            f"python -c '{API_IMPORT}'",
            measure_process([python, "-c", API_IMPORT], repeats=repeats),
            floor=floor,
            notes="the model and runtime a program uses (no target in the issue; reported)",
        ),
    ]
