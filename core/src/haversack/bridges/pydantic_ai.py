"""pydantic-ai: a toolset whose calls run through a :class:`~haversack.ToolExecutor`.

Install with ``pip install 'haversack[pydantic-ai]'``. A call a Haversack policy holds for
a human becomes pydantic-ai's own deferred approval (``ApprovalRequired``): the run ends with
``DeferredToolRequests``, and the call runs when the next run gives it a
``DeferredToolResults`` approval (a denial is answered by pydantic-ai, nothing runs, and
the executor records the call as denied).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from haversack.adapters._common import pending_of, tool_definition

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from haversack._executor import ToolExecutor

__all__ = ["HaversackToolset"]

# The executor parses every call strictly and answers a bad one with a message the model can
# act on; a second validator in front of it would only answer differently.
_ANY = SchemaValidator(core_schema.any_schema())


class HaversackToolset(AbstractToolset[Any]):
    """The tools of ``executor``'s rendered prompt as a pydantic-ai toolset.

    Pass it in ``Agent(..., toolsets=[HaversackToolset(executor)])``. Every call runs through
    ``executor`` (``await executor.aexecute``): parsing, policies, rollback of a failed call,
    and the session's log; its rendered result, success or failure, is the tool's return,
    so a policy's denial reaches the model as the tool result. ``instructions`` (default on)
    gives the prompt's rendered text as the toolset's instructions, which is where the
    packs' guidance for their tools lives.

    Calls of tools not annotated ``read_only`` are marked ``sequential``, so they run in the
    model's order, as they would in Haversack's own loop.

    A call held for a human raises pydantic-ai's ``ApprovalRequired`` with the policy, its
    reason and the arguments' hash as metadata: add ``DeferredToolRequests`` to the agent's
    ``output_type`` to receive it. When a later run approves the call
    (``DeferredToolResults(approvals={call_id: True})``), the call is asked again and the
    approval answers the policies that hold it; every other policy still applies.
    """

    def __init__(
        self,
        executor: ToolExecutor,
        *,
        id: str | None = None,
        instructions: bool = True,
        max_retries: int = 1,
    ) -> None:
        self.executor = executor
        self._id = id
        self._instructions = instructions
        self._tools: dict[str, ToolsetTool[Any]] = {}
        for item in executor.rendered_prompt.tools:
            definition = tool_definition(item)
            self._tools[item.name] = ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=definition.name,
                    description=definition.description,
                    # pydantic-ai's model profiles may rewrite a schema in place; the shared
                    # one is read-only, so each toolset owns a copy (made once).
                    parameters_json_schema=copy.deepcopy(definition.parameters),
                    # Optional fields with defaults are not allowed in OpenAI's strict mode.
                    strict=False,
                    sequential=not item.annotations.read_only,
                ),
                max_retries=max_retries,
                args_validator=_ANY,
            )

    @property
    def id(self) -> str | None:
        """The id given to the constructor (for durable execution), or ``None``."""
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        """The rendered prompt's text, unless ``instructions=False``."""
        return self.executor.rendered_prompt.text if self._instructions else None

    async def for_run_step(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        """Close the held calls pydantic-ai has answered without running them (denied).

        pydantic-ai answers a denied call itself and never calls the tool again, so the
        executor would keep it pending: each is refused here with pydantic-ai's message,
        which the session's log then records as a denial.
        """
        executor = self.executor
        held = {pending.call_id: pending for pending in executor.pending}
        if held:
            for message in ctx.messages:
                for part in getattr(message, "parts", ()):
                    if isinstance(part, ToolReturnPart) and part.tool_call_id in held:
                        pending = held.pop(part.tool_call_id)
                        reason = str(part.content).strip() or "The call was denied."
                        await executor.aresume(pending.call_id, pending.deny(reason))
        return self

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """One tool per tool of the rendered prompt, built once."""
        return dict(self._tools)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run the call through the executor; its rendered result is the tool's return."""
        executor = self.executor
        result = await executor.aexecute(name, tool_args, call_id=ctx.tool_call_id)
        pending = pending_of(result)
        if pending is not None:
            if not ctx.tool_call_approved:
                raise ApprovalRequired(
                    metadata={
                        "policy": pending.policy,
                        "reason": pending.reason,
                        "arguments_hash": pending.arguments_hash,
                    }
                )
            # The human approved this call (with these arguments) through pydantic-ai.
            result = await executor.aresume(pending.call_id, pending.approve())
        return result.render()
