"""The ``ToolPolicy`` protocol and ``PolicyDecision``: rules on when a tool may run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._context import ToolContext
    from ._result import ToolResult
    from ._tool import Tool

__all__ = ["PolicyDecision", "ToolPolicy"]


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """A policy's verdict on one call: allow, deny, or ask a human first.

    ``reason`` is shown to the model on denial and to the human asked for approval.
    ``needs_approval`` (only with ``allowed=False``) means "not without a human's yes":
    the executor holds the call as pending instead of refusing it.
    """

    allowed: bool
    reason: str = ""
    needs_approval: bool = False

    @classmethod
    def allow(cls) -> PolicyDecision:
        """Let the call run (as far as this policy is concerned)."""
        return _ALLOW

    @classmethod
    def deny(cls, reason: str) -> PolicyDecision:
        """Refuse the call; ``reason`` tells the model why and what to do instead."""
        if not reason.strip():
            raise ValueError("A denial needs a reason the model can act on.")
        return cls(allowed=False, reason=reason)

    @classmethod
    def ask(cls, reason: str) -> PolicyDecision:
        """Hold the call until a human approves, denies or edits it; nothing runs meanwhile."""
        if not reason.strip():
            raise ValueError("A request for approval needs a reason the human can judge.")
        return cls(allowed=False, reason=reason, needs_approval=True)


_ALLOW = PolicyDecision(allowed=True)


@runtime_checkable
class ToolPolicy(Protocol):
    """A rule consulted before a tool runs and told about every successful call.

    ``name`` is unique within a prompt. ``check`` runs before the handler for every tool the
    policy governs (the tools of the section it is attached to, or all tools for a
    prompt-wide policy); every governing policy must allow. ``on_result`` runs after every
    successful call of any tool in the prompt, so a policy can track tools of other
    sections. Policies keep their state in ``context.session`` so that a rolled-back call
    leaves no trace in it.

    A policy that names tools by glob patterns may also define ``tool_patterns() ->
    Iterable[str]`` (as :class:`~haversack.ApprovalPolicy` does): when the prompt is built,
    each pattern must match the final or original name of a tool the policy may name (every
    tool for a prompt-wide policy, its contributor's for a section's), else the prompt is
    refused. A pattern that matches nothing never silently allows. Likewise a policy that
    names tools exactly may define ``tool_names() -> Iterable[str]`` (as
    :class:`~haversack.ReadBeforeWritePolicy` and :class:`~haversack.SequentialDependencyPolicy`
    do): for a policy of yours (prompt-wide, or on your own sections) each name must be the
    final or original name of a tool it governs, else the prompt is refused naming the closest
    tools. A pack's own section policy is not held to it: your ``exclude_tools`` may remove a
    tool it names.
    """

    @property
    def name(self) -> str: ...

    def check(
        self, tool: Tool[Any, Any], params: Any, *, context: ToolContext
    ) -> PolicyDecision: ...

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None: ...
