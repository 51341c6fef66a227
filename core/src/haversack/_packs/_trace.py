"""``HAVERSACK_TRACE=1``: print every hook call and its result to stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import pluggy

__all__ = ["ENV_TRACE", "Tracer"]

ENV_TRACE = "HAVERSACK_TRACE"
_MAX = 200


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _MAX else text[: _MAX - 3] + "..."


class Tracer:
    """Writes ``haversack trace: <pack>.<hook>(<args>) -> <result>`` lines when enabled.

    The core calls registration hooks one pack at a time (to attribute contributions), so it
    prints those calls itself; calls made through ``pm.hook`` are reported by pluggy's
    ``add_hookcall_monitoring`` in the same format.
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

    def install(self, pm: pluggy.PluginManager) -> Callable[[], None] | None:
        """Monitor ``pm.hook`` calls with pluggy's ``add_hookcall_monitoring``."""
        if not self.enabled:
            return None

        def before(name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            plugins = ", ".join(impl.plugin_name for impl in impls)
            self.line(
                f"[{plugins}].{name}({', '.join(f'{k}={_short(v)}' for k, v in kwargs.items())})"
            )

        def after(outcome: Any, name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            exc = outcome.exception
            self.line(
                f"{name} -> {'raised ' + _short(exc) if exc else _short(outcome.get_result())}"
            )

        return pm.add_hookcall_monitoring(before, after)
