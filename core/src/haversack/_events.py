"""``ToolInvoked``: the record published for every tool call, whatever its outcome."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ._result import ToolResult

__all__ = ["CallOutcome", "ToolInvoked"]


class CallOutcome(StrEnum):
    """How a call ended. Everything but ``OK`` left session and resources untouched."""

    OK = "ok"
    FAILED = "failed"  # the handler returned success=False
    DENIED = "denied"  # a policy refused the call
    INVALID = "invalid"  # unknown tool or malformed arguments
    ERROR = "error"  # the handler raised
    ABORTED = "aborted"  # PromptEvaluationError / deadline: the evaluation stops
    PENDING = "pending"  # a policy asked for a human's approval; nothing ran yet


@dataclass(frozen=True, slots=True)
class ToolInvoked:
    """One tool call as it happened.

    ``params`` is the parsed params dataclass, or ``None`` when parsing failed, in which
    case ``arguments`` (always kept) shows what the model sent. ``rendered`` is the exact
    text sent back to the model. ``duration_s`` covers the whole pipeline.
    """

    prompt_ns: str
    prompt_key: str
    tool_name: str
    params: Any
    arguments: str | bytes | Mapping[str, Any] | None
    result: ToolResult[Any]
    rendered: str
    outcome: CallOutcome
    call_id: str | None
    duration_s: float

    @property
    def success(self) -> bool:
        return self.result.success
