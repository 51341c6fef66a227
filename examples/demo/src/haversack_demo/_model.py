"""The scenario's building blocks: scripted calls with the outcome each one should have."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Act", "Scenario", "Seed", "Step"]


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted tool call and what it must produce.

    ``expect`` holds the acceptable :class:`~haversack.CallOutcome` values (a handler may
    report a failure by returning an error or by raising: both roll back). ``contains`` and
    ``absent`` are substrings the rendered result must (not) hold, so that a call can prove
    an earlier one's effect or its rollback. ``needs`` names tools whose earlier calls this
    step depends on: when one is missing, the step is skipped too.
    """

    tool: str
    arguments: Mapping[str, Any]
    note: str
    expect: tuple[str, ...] = ("ok",)
    contains: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Seed:
    """A file already in the workspace when the session starts (a checked-out project)."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Act:
    """A titled group of steps; ``sandbox`` acts are the ones ``--no-sandbox`` skips."""

    title: str
    steps: tuple[Step, ...]
    sandbox: bool = False


@dataclass(frozen=True, slots=True)
class Scenario:
    """The whole script: the objective, the seeded files and the acts, in order.

    ``providers`` maps each tool the script calls to the pack that provides it, so that a
    skipped step can say which pack to install or enable.
    """

    title: str
    seeds: tuple[Seed, ...]
    acts: tuple[Act, ...]
    providers: Mapping[str, str] = field(default_factory=dict)

    def steps(self) -> tuple[tuple[Act, Step], ...]:
        """Every step with its act, in script order."""
        return tuple((act, step) for act in self.acts for step in act.steps)
