"""The scripted scenario ``haversack demo`` plays, its runner and its presentation.

Names are imported on first use (PEP 562): loading the entry point (``plugin``) for the
command list must not load the scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

if TYPE_CHECKING:
    from ._model import Act, Scenario, Seed, Step
    from ._runner import DemoOptions, run_scenario
    from ._scenario import SCENARIO
    from ._text import TextPrinter, compact_arguments
    from ._transcript import PackLine, SandboxStatus, StepRecord, Summary, ToolTiming, Transcript

_EXPORTS: dict[str, str] = {
    "SCENARIO": "._scenario",
    "Act": "._model",
    "DemoOptions": "._runner",
    "PackLine": "._transcript",
    "SandboxStatus": "._transcript",
    "Scenario": "._model",
    "Seed": "._model",
    "Step": "._model",
    "StepRecord": "._transcript",
    "Summary": "._transcript",
    "TextPrinter": "._text",
    "ToolTiming": "._transcript",
    "Transcript": "._transcript",
    "compact_arguments": "._text",
    "run_scenario": "._runner",
}

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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
