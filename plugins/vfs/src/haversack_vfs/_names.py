"""Current names of the VFS tools: a pack's tools may be prefixed or renamed when composed."""

from __future__ import annotations

from haversack import ToolContext

__all__ = ["tool_name"]


def tool_name(context: ToolContext, original: str) -> str:
    """The name the tool originally called ``original`` has in the prompt being run.

    Only messages need names, so this is looked up on demand rather than cached.
    """
    rendered = context.rendered_prompt
    tools = rendered.tools if rendered is not None else context.prompt.tools
    for candidate in tools:
        if candidate.original_name == original:
            return candidate.name
    return original
