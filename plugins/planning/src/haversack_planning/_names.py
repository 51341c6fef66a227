"""Current names of the planning tools: packs may be prefixed or renamed when composed."""

from __future__ import annotations

from haversack import ToolContext

__all__ = ["name_resolver"]


def name_resolver(context: ToolContext) -> _Resolver:
    """A function from a tool's original name to its name in the prompt being run."""
    return _Resolver(context)


class _Resolver:
    # Only error messages need names, so the lookup is lazy and not cached.
    __slots__ = ("_context",)

    def __init__(self, context: ToolContext) -> None:
        self._context = context

    def __call__(self, original: str) -> str:
        rendered = self._context.rendered_prompt
        tools = rendered.tools if rendered is not None else self._context.prompt.tools
        for candidate in tools:
            if candidate.original_name == original:
                return candidate.name
        return original
