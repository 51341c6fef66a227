"""The scripted scenario ``haversack demo`` plays, its runner and its presentation.

Names are imported on first use (PEP 562): loading the entry point (``plugin``) for the
command list must not load the scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haversack.lazy import lazy_exports

# For type checkers only: each public name imported as itself (``X as X``), which marks it
# re-exported under mypy --strict and pyright; a test checks this list against ``_EXPORTS``.
if TYPE_CHECKING:
    from ._model import Act as Act
    from ._model import Scenario as Scenario
    from ._model import Seed as Seed
    from ._model import Step as Step
    from ._runner import DemoOptions as DemoOptions
    from ._runner import run_scenario as run_scenario
    from ._scenario import SCENARIO as SCENARIO
    from ._text import TextPrinter as TextPrinter
    from ._text import compact_arguments as compact_arguments
    from ._transcript import PackLine as PackLine
    from ._transcript import SandboxStatus as SandboxStatus
    from ._transcript import StepRecord as StepRecord
    from ._transcript import Summary as Summary
    from ._transcript import ToolTiming as ToolTiming
    from ._transcript import Transcript as Transcript

_EXPORTS: dict[str, str] = {
    "Act": "._model",
    "DemoOptions": "._runner",
    "PackLine": "._transcript",
    "SCENARIO": "._scenario",
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

# Derived from the table so there is no third list to keep; hidden from type checkers, which
# take the ``X as X`` imports above (a computed ``__all__`` would make every name private).
if not TYPE_CHECKING:
    __all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
