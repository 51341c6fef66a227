"""The ``Provider`` protocol: what the loop needs from a model API, whatever its format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from haversack._deadline import Deadline
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult
    from haversack.adapters import ToolCall

    from ._records import Usage

__all__ = ["Conversation", "OnText", "Provider", "Reply"]

#: Called with each piece of text as the model produces it.
OnText = Callable[[str], None]


@dataclass(slots=True)
class Conversation:
    """The system text and the provider-format messages (or input items) so far."""

    system: str
    messages: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Reply:
    """One model response, provider-neutral: text, tool calls, usage and stop reason.

    ``truncated`` is true when the model hit its output limit; ``stop`` is the provider's
    own stop reason; ``raw`` the SDK object (``None`` for a Chat Completions stream, which
    is assembled from its chunks).
    """

    text: str
    calls: tuple[ToolCall, ...]
    usage: Usage
    stop: str
    truncated: bool
    raw: Any = None


@runtime_checkable
class Provider(Protocol):
    """A model API in one wire format. The loop calls, per run: :meth:`tools` once,
    :meth:`start` once, then per turn :meth:`complete` (or :meth:`acomplete`),
    :meth:`add_reply` and, when the model called tools, :meth:`add_results`; at the end
    :meth:`close` (or :meth:`aclose`)."""

    @property
    def name(self) -> str:
        """``openai``, ``openai-responses``, ``anthropic``..."""
        ...

    @property
    def model(self) -> str:
        """The model name sent to the API."""
        ...

    def tools(self, rendered: RenderedPrompt) -> list[dict[str, Any]]:
        """The prompt's tools in this provider's format."""
        ...

    def start(self, system: str, task: str) -> Conversation:
        """A new conversation: the system text and the user's task."""
        ...

    def complete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """Ask the model for the next turn (blocking). ``deadline`` (the run's) bounds the
        whole request, retries and stream included: past it, raise
        ``DeadlineExceededError``; any other failure is a ``ProviderError``."""
        ...

    async def acomplete(
        self,
        conversation: Conversation,
        tools: list[dict[str, Any]],
        on_text: OnText | None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """Ask the model for the next turn (async); ``deadline`` as in :meth:`complete`."""
        ...

    def add_reply(self, conversation: Conversation, reply: Reply) -> None:
        """Append the model's turn to the conversation."""
        ...

    def add_results(
        self, conversation: Conversation, results: list[tuple[ToolCall, ToolResult[Any]]]
    ) -> None:
        """Append the results of the turn's tool calls, in call order."""
        ...

    def close(self) -> None:
        """Release what :meth:`complete` opened; called at the end of every ``run``."""
        ...

    async def aclose(self) -> None:
        """Release what :meth:`acomplete` opened; called at the end of every ``arun``."""
        ...
