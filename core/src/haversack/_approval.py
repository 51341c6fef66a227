"""Human approval of tool calls: the pending call, the human's answer and a ready policy."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ._arguments import Arguments
from ._policy import PolicyDecision

if TYPE_CHECKING:
    from ._context import ToolContext
    from ._result import ToolResult
    from ._tool import Tool

__all__ = ["Approval", "ApprovalPolicy", "ApprovalVerdict", "PendingApproval", "arguments_hash"]


class RawArguments(str):
    """Arguments that are not JSON: the text as given (bytes decoded with replacement)."""

    __slots__ = ()


def decode_arguments(arguments: Arguments) -> Any:
    """The object a call's arguments mean (``{}`` for none), or :class:`RawArguments`
    holding their text when they are not JSON: the one reading that the approval hash and
    what a person is shown both start from."""
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes):
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            text = arguments if isinstance(arguments, str) else arguments.decode(errors="replace")
            return RawArguments(text)
        return {} if decoded is None else decoded
    return arguments


def arguments_hash(arguments: Arguments) -> str:
    """A stable SHA-256 of a call's arguments: JSON text and mappings that mean the same
    object (whatever the key order or spacing) hash the same."""
    import hashlib  # only held calls need it; OpenSSL's bindings are slow to load

    decoded = decode_arguments(arguments)
    if isinstance(decoded, RawArguments):
        return hashlib.sha256(b"raw:" + decoded.encode()).hexdigest()
    canonical = json.dumps(
        decoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class ApprovalVerdict(StrEnum):
    """What the human answered about a pending call."""

    APPROVE = "approve"
    DENY = "deny"
    EDIT = "edit"


@dataclass(frozen=True, slots=True)
class Approval:
    """A human's answer to a :class:`PendingApproval`, given to ``ToolExecutor.resume``.

    Build one with :meth:`approve`, :meth:`deny` or :meth:`edit` (or the same methods of
    the pending call). An approval that carries ``arguments_hash`` covers exactly those
    arguments, one that names a ``call_id`` exactly that held call, one that names a
    ``tool_name`` exactly that tool: if the pending call differs in any of them, the
    approval is void and the call is refused. The methods of :class:`PendingApproval` fill
    all three in, so the approval of ``read_file(x)`` never runs a held ``rm(x)``.
    """

    verdict: ApprovalVerdict
    reason: str = ""
    arguments: Arguments = None
    arguments_hash: str | None = None
    call_id: str | None = None
    tool_name: str | None = None

    @classmethod
    def approve(
        cls,
        arguments_hash: str | None = None,
        *,
        call_id: str | None = None,
        tool_name: str | None = None,
    ) -> Approval:
        """Run the call as the model made it (only with this hash, call id and tool, when
        given)."""
        return cls(
            ApprovalVerdict.APPROVE,
            arguments_hash=arguments_hash,
            call_id=call_id,
            tool_name=tool_name,
        )

    @classmethod
    def deny(cls, reason: str) -> Approval:
        """Refuse the call; ``reason`` is what the model is told."""
        if not reason.strip():
            raise ValueError("A denial needs a reason the model can act on.")
        return cls(ApprovalVerdict.DENY, reason=reason)

    @classmethod
    def edit(cls, arguments: Arguments) -> Approval:
        """Run the call with these arguments instead (parsed as strictly as the model's)."""
        return cls(ApprovalVerdict.EDIT, arguments=arguments)


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A call a policy held for a human: nothing ran, nothing changed.

    ``arguments`` is what the model sent and ``arguments_hash`` its :func:`arguments_hash`;
    ``policy`` and ``reason`` say who asked and why. The executor's result for the call is a
    failed :class:`~haversack.ToolResult` whose ``value`` is this object.
    """

    call_id: str
    tool_name: str
    arguments: Arguments
    arguments_hash: str
    policy: str
    reason: str

    def approve(self) -> Approval:
        """An approval of exactly this call: its id, its tool and these arguments."""
        return Approval.approve(self.arguments_hash, call_id=self.call_id, tool_name=self.tool_name)

    def deny(self, reason: str) -> Approval:
        """A denial; ``reason`` is what the model is told."""
        return dataclasses.replace(
            Approval.deny(reason), call_id=self.call_id, tool_name=self.tool_name
        )

    def edit(self, arguments: Arguments) -> Approval:
        """Run this call (this id, this tool) with ``arguments`` instead."""
        return dataclasses.replace(
            Approval.edit(arguments), call_id=self.call_id, tool_name=self.tool_name
        )

    def render(self) -> str:
        """One line for a human: the tool, its arguments and why approval is needed."""
        return f"{self.tool_name}({_short(self.arguments)}) needs approval: {self.reason}"


def _short(arguments: Arguments, limit: int = 200) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, bytes):
        text = arguments.decode(errors="replace")
    elif isinstance(arguments, str):
        text = arguments
    else:
        text = json.dumps(arguments, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ApprovalPolicy:
    """Ask a human before tools whose name matches ``tools`` (``fnmatch`` globs), and, with
    ``not_read_only=True``, before every tool not annotated ``read_only``.

    Patterns match the tool's final name (what the model calls it, after a pack's prefix or
    rename) or its original name (what its pack registered): either spelling asks, the safe
    direction. Every pattern must match at least one tool the policy governs: one matching
    nothing is refused when the prompt is built (:class:`~haversack.errors.PromptValidationError`
    naming the closest tools), never silently left to allow. A call the human approved runs
    through every other policy as usual.
    """

    __slots__ = ("_name", "_not_read_only", "_patterns")

    def __init__(
        self,
        tools: Iterable[str] = (),
        *,
        not_read_only: bool = False,
        name: str = "approval",
    ) -> None:
        patterns = (tools,) if isinstance(tools, str) else tuple(tools)
        if not patterns and not not_read_only:
            raise ValueError(
                "ApprovalPolicy would never ask: give tool name patterns (tools=['shell_*']) "
                "or not_read_only=True."
            )
        self._patterns = patterns
        self._not_read_only = not_read_only
        self._name = name

    @property
    def name(self) -> str:
        """The policy's name, unique within a prompt."""
        return self._name

    def tool_patterns(self) -> tuple[str, ...]:
        """The globs this policy names tools by: each must match a tool, or the prompt is
        refused (see :class:`~haversack.ToolPolicy`)."""
        return self._patterns

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        """Ask when the tool matches a pattern, or mutates and ``not_read_only`` is set."""
        from fnmatch import fnmatchcase

        for pattern in self._patterns:
            if fnmatchcase(tool.name, pattern) or fnmatchcase(tool.original_name, pattern):
                return PolicyDecision.ask(f"{tool.name!r} matches {pattern!r}")
        if self._not_read_only and not tool.annotations.read_only:
            return PolicyDecision.ask(f"{tool.name!r} is not read-only")
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        """Nothing to record: every call is judged on its own."""
