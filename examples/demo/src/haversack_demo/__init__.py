"""The scripted scenario ``haversack demo`` plays, its runner and its presentation."""

from __future__ import annotations

from ._model import Act, Scenario, Seed, Step
from ._runner import DemoOptions, run_scenario
from ._scenario import SCENARIO
from ._text import TextPrinter, compact_arguments
from ._transcript import PackLine, SandboxStatus, StepRecord, Summary, ToolTiming, Transcript

__all__ = [
    "SCENARIO",
    "Act",
    "DemoOptions",
    "PackLine",
    "SandboxStatus",
    "Scenario",
    "Seed",
    "Step",
    "StepRecord",
    "Summary",
    "TextPrinter",
    "ToolTiming",
    "Transcript",
    "compact_arguments",
    "run_scenario",
]
