"""``HAVERSACK_TRACE=1``: print every hook call and its result to stderr."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TextIO

__all__ = ["ENV_TRACE", "Tracer"]

ENV_TRACE = "HAVERSACK_TRACE"
_MAX = 200


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _MAX else text[: _MAX - 3] + "..."


class Tracer:
    """Writes ``haversack trace: <pack>.<hook>(<args>) -> <result>`` lines when enabled.

    The core calls each pack's hook implementations itself, one pack at a time (to attribute
    contributions), never through ``pm.hook``; so it reports every call here, and pluggy's
    hook-call monitoring would never fire.
    """

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self._stream = stream

    def line(self, text: str) -> None:
        """Print one trace line (no-op when disabled)."""
        if self.enabled:
            print(f"haversack trace: {text}", file=self._stream or sys.stderr, flush=True)

    def call(self, pack: str, hook: str, kwargs: Mapping[str, object]) -> None:
        """Before a per-pack hook call."""
        if self.enabled:
            shown = ", ".join(
                f"{k}=<callback>" if k == "register" else f"{k}={_short(v)}"
                for k, v in kwargs.items()
            )
            self.line(f"{pack}.{hook}({shown})")

    def result(self, pack: str, hook: str, outcome: str) -> None:
        """After a per-pack hook call; ``outcome`` describes what was registered or raised."""
        self.line(f"{pack}.{hook} -> {outcome}")
