"""What every provider format shares: one tool's definition, reading a tool call, running
the calls of one model response and the approval a call awaits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from haversack import serde
from haversack._approval import PendingApproval
from haversack._tool import Tool

if TYPE_CHECKING:
    from haversack._executor import ToolExecutor
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult

__all__ = [
    "NO_APPROVER",
    "ToolCall",
    "aexecute_calls",
    "chat_tool_calls_of",
    "field_of",
    "asks_approval",
    "function_calls_of",
    "pending_of",
    "run_together",
    "tool_definition",
    "tool_uses_of",
]


#: What the model is told about a held call that no one is there to answer.
NO_APPROVER = (
    "No one is available to approve this call, so it was not run. Do not retry it; "
    "finish without it or tell the user what you would have done."
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A provider-neutral tool call: the call id, the tool name and its arguments."""

    call_id: str | None
    name: str
    arguments: str | Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as every provider describes it: name, description and parameter schema."""

    name: str
    description: str
    parameters: dict[str, Any]


def tool_definition(tool: Tool[Any, Any]) -> ToolDefinition:
    """The provider-neutral definition of ``tool``.

    Its ``parameters`` is the shared, read-only schema (:func:`haversack.serde.shared_schema`):
    adapters send it with every request, and copying it was most of their cost. Take
    ``copy.deepcopy(...)`` of it to change it.
    """
    return ToolDefinition(tool.name, tool.description, serde.shared_schema(tool.params_type))


def field_of(obj: object, *names: str) -> Any:
    """Read the first present field of an SDK object or a dict (SDK objects use attributes)."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    raise KeyError(f"tool call has none of the fields {', '.join(names)}: {obj!r}")


def _optional(obj: object, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def chat_tool_calls_of(response: object) -> list[Any]:
    """The ``tool_calls`` of a ``ChatCompletion`` (first choice), of its message, or of a
    dict of either; an empty list when the model called no tool."""
    choices = _optional(response, "choices")
    message = _optional(choices[0], "message") if choices else response
    return list(_optional(message, "tool_calls") or ())


def function_calls_of(response: object) -> list[Any]:
    """The ``function_call`` items of a Responses ``Response`` (or of its ``output`` list)."""
    output = response if isinstance(response, list | tuple) else _optional(response, "output")
    return [item for item in output or () if _optional(item, "type") == "function_call"]


def tool_uses_of(message: object) -> list[Any]:
    """The ``tool_use`` blocks of an Anthropic ``Message`` (or of its ``content`` list)."""
    content = message if isinstance(message, list | tuple) else _optional(message, "content")
    return [block for block in content or () if _optional(block, "type") == "tool_use"]


def run_together(rendered: RenderedPrompt, calls: Sequence[ToolCall]) -> bool:
    """Whether the calls of one model response run concurrently: several, every one of a
    tool annotated ``read_only``, at least two of them with async handlers, and distinct
    call ids.

    Sync handlers run to completion once started, so calls of sync tools alone gain nothing
    from running together and would pay for the tasks (about twice the cost of running
    them in turn); a held call is found by its id, so one id must not be held twice
    at once.
    """
    if len(calls) < 2 or len({call.call_id for call in calls}) < len(calls):
        return False
    awaited = 0
    for call in calls:
        tool = rendered.tool(call.name) if isinstance(call.name, str) else None
        if tool is None or not tool.annotations.read_only:
            return False
        awaited += tool.is_async
    return awaited >= 2


async def aexecute_calls(
    executor: ToolExecutor, calls: Sequence[ToolCall]
) -> list[ToolResult[Any]]:
    """Run the calls of one model response; results in call order.

    When :func:`run_together` allows it they run concurrently in one transaction turn
    (``ToolExecutor.aexecute_many``: a failing one affects no other, and the session
    records them in a fixed order whatever order they finish in: the calls refused before
    running, such as malformed ones, then the calls that ran, each group in call order);
    otherwise one at a time, in order, each a transaction of its own.
    """
    if run_together(executor.rendered_prompt, calls):
        return await executor.aexecute_many([(c.name, c.arguments, c.call_id) for c in calls])
    return [await executor.aexecute(c.name, c.arguments, call_id=c.call_id) for c in calls]


def pending_of(result: ToolResult[Any]) -> PendingApproval | None:
    """The approval ``result`` awaits (a policy held the call and nothing ran), or ``None``."""
    value = result.value
    return value if not result.success and isinstance(value, PendingApproval) else None


def asks_approval(rendered: RenderedPrompt, item: Tool[Any, Any]) -> bool:
    """Whether an :class:`~haversack.ApprovalPolicy` governing ``item`` holds every call of
    it for a human: what a framework that asks before running a tool must be told.

    An approval policy decides by the tool alone (its name or annotations), so the answer
    is known before any call; other policies may still ask about a particular call.
    """
    from typing import cast

    from haversack._approval import ApprovalPolicy
    from haversack._context import ToolContext

    for policy in rendered.policies_for(item.name):
        # ApprovalPolicy.check reads neither the parameters nor the context.
        if (
            isinstance(policy, ApprovalPolicy)
            and policy.check(item, None, context=cast(ToolContext, None)).needs_approval
        ):
            return True
    return False
