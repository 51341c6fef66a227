"""What the demo recorded: one record per scripted step, the summary, the JSON form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PackLine", "SandboxStatus", "StepRecord", "Summary", "ToolTiming", "Transcript"]

#: Outcomes after which the executor restored the session and resources.
ROLLED_BACK = frozenset({"failed", "error"})


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One scripted step as it went: run (with its outcome) or skipped (with the reason)."""

    index: int
    act: str
    tool: str
    arguments: Mapping[str, Any]
    note: str
    expected: tuple[str, ...]
    skipped: str | None = None
    outcome: str | None = None
    result: str = ""
    duration_s: float = 0.0
    problems: tuple[str, ...] = ()

    @property
    def ran(self) -> bool:
        """The call went to the executor."""
        return self.skipped is None

    @property
    def as_expected(self) -> bool:
        """Skipped, or ran with an expected outcome and the expected result text."""
        return not self.problems

    @property
    def rolled_back(self) -> bool:
        """The call failed after the executor's snapshot, so its effects were undone."""
        return self.outcome in ROLLED_BACK

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "index": self.index,
            "act": self.act,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "note": self.note,
            "expected": list(self.expected),
            "status": "ran" if self.ran else "skipped",
            "skip_reason": self.skipped,
            "outcome": self.outcome,
            "rolled_back": self.rolled_back,
            "result": self.result,
            "duration_ms": round(self.duration_s * 1000, 3),
            "as_expected": self.as_expected,
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class PackLine:
    """One installed pack as the demo found it."""

    name: str
    distribution: str
    version: str
    status: str
    reason: str = ""
    tools: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "reason": self.reason,
            "tools": list(self.tools),
        }


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether the sandbox act runs, and why not."""

    enabled: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolTiming:
    """Calls of one tool and the time they took (whole executor pipeline)."""

    tool: str
    calls: int
    total_s: float

    @property
    def mean_s(self) -> float:
        """Mean time per call."""
        return self.total_s / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts over the steps that ran, per-tool timings and the total time."""

    calls: int
    ok: int
    denied: int
    rolled_back: int
    other: int
    skipped: int
    unexpected: int
    timings: tuple[ToolTiming, ...]
    total_s: float

    @classmethod
    def of(cls, steps: tuple[StepRecord, ...], total_s: float) -> Summary:
        """Summarise ``steps``; ``total_s`` is the wall time of the whole run."""
        ran = [s for s in steps if s.ran]
        per_tool: dict[str, list[float]] = {}
        for step in ran:
            per_tool.setdefault(step.tool, []).append(step.duration_s)
        ok = sum(s.outcome == "ok" for s in ran)
        denied = sum(s.outcome == "denied" for s in ran)
        rolled_back = sum(s.rolled_back for s in ran)
        return cls(
            calls=len(ran),
            ok=ok,
            denied=denied,
            rolled_back=rolled_back,
            other=len(ran) - ok - denied - rolled_back,
            skipped=len(steps) - len(ran),
            unexpected=sum(not s.as_expected for s in steps),
            timings=tuple(ToolTiming(t, len(d), sum(d)) for t, d in per_tool.items()),
            total_s=total_s,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "calls": self.calls,
            "ok": self.ok,
            "denied": self.denied,
            "failed_rolled_back": self.rolled_back,
            "other": self.other,
            "skipped": self.skipped,
            "unexpected": self.unexpected,
            "per_tool": {
                t.tool: {
                    "calls": t.calls,
                    "total_ms": round(t.total_s * 1000, 3),
                    "mean_ms": round(t.mean_s * 1000, 3),
                }
                for t in self.timings
            },
            "total_ms": round(self.total_s * 1000, 3),
        }


@dataclass(slots=True)
class Transcript:
    """Everything the demo shows, filled in as it runs."""

    title: str
    packs: tuple[PackLine, ...] = ()
    prompt_text: str = ""
    tools: tuple[tuple[str, str], ...] = ()  # (name, compact signature)
    sandbox: SandboxStatus = field(default_factory=lambda: SandboxStatus(enabled=False))
    steps: list[StepRecord] = field(default_factory=list)
    summary: Summary | None = None

    @property
    def ok(self) -> bool:
        """Every step behaved as scripted."""
        return all(s.as_expected for s in self.steps)

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form (``haversack demo --json``)."""
        return {
            "title": self.title,
            "packs": [p.as_dict() for p in self.packs],
            "prompt": {
                "text": self.prompt_text,
                "tools": [{"name": n, "signature": s} for n, s in self.tools],
            },
            "sandbox": {"enabled": self.sandbox.enabled, "reason": self.sandbox.reason},
            "steps": [s.as_dict() for s in self.steps],
            "summary": self.summary.as_dict() if self.summary else None,
            "ok": self.ok,
        }
