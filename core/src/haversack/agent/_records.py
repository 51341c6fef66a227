"""What a run produces: token usage, stop reasons, the per-turn record and the UI events."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haversack._approval import PendingApproval
    from haversack._events import ToolInvoked
    from haversack._result import ToolResult
    from haversack.adapters import ToolCall

__all__ = [
    "AgentEvent",
    "ApprovalRequested",
    "ModelTurn",
    "RunResult",
    "StopReason",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the provider reported; runs add up their turns' usage."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


class StopReason(StrEnum):
    """Why a run ended."""

    COMPLETED = "completed"  # the model answered without calling a tool
    MAX_TURNS = "max_turns"  # the turn cap was reached while the model still called tools
    TRUNCATED = "truncated"  # the model hit its output-token limit


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """One model response, recorded in the session (a LOG slice) like ``ToolInvoked``."""

    provider: str
    model: str
    index: int
    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    stop: str
    duration_s: float


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text of the current model turn as it arrives (the whole turn's text when not
    streaming)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The loop is about to run a tool call the model made."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """A policy held a call for a human; the approval callback is asked next."""

    pending: PendingApproval


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call ended; ``result.render()`` is what the model is sent."""

    call: ToolCall
    result: ToolResult[Any]


#: Everything ``on_event`` receives.
AgentEvent = TextDelta | ToolCallStarted | ApprovalRequested | ToolCallFinished | ModelTurn


@dataclass(frozen=True, slots=True)
class RunResult:
    """The end of a run: the model's last text, why it stopped, and what it cost.

    ``messages`` is the conversation in the provider's own format (ready to continue);
    ``turns`` and ``calls`` are this run's :class:`ModelTurn` and ``ToolInvoked`` records.
    """

    output: str
    stop_reason: StopReason
    usage: Usage
    turns: tuple[ModelTurn, ...]
    calls: tuple[ToolInvoked, ...]
    messages: list[Any] = field(repr=False)
