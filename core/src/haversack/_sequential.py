"""``SequentialDependencyPolicy``: a tool may run only after its prerequisites succeeded."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._policy import PolicyDecision
from ._policy_state import add_policy_value, policy_values

if TYPE_CHECKING:
    from ._context import ToolContext
    from ._result import ToolResult
    from ._tool import Tool

__all__ = ["SequentialDependencyPolicy"]


class SequentialDependencyPolicy:
    """Deny a tool until each of its prerequisite tools has succeeded in this session.

    ``dependencies`` maps a tool name to the tools that must have succeeded first, e.g.
    ``{"deploy": {"build", "test"}}``. Only successful calls count, and a call that is
    later rolled back is forgotten with the rest of its effects. Names resolve within the
    policy's :meth:`~haversack.RenderedPrompt.scope` (a section's policy: its contributor's
    tools; a prompt-wide one: every tool): the tool of that final name, else those
    originally registered under it (before a ``prefix`` or ``rename``).
    """

    __slots__ = ("_dependencies", "_name", "_observed")

    def __init__(
        self,
        dependencies: Mapping[str, Iterable[str]],
        *,
        name: str = "sequential-dependency",
    ) -> None:
        self._name = name
        self._dependencies = {tool: frozenset(deps) for tool, deps in dependencies.items()}
        self._observed = (
            frozenset().union(*self._dependencies.values()) if self._dependencies else frozenset()
        )

    @property
    def name(self) -> str:
        return self._name

    def tool_names(self) -> tuple[str, ...]:
        """Every tool this policy names: when it is yours, each must mean a tool it governs,
        or the prompt is refused (see :class:`~haversack.ToolPolicy`)."""
        return tuple(sorted(self._dependencies.keys() | self._observed))

    @property
    def dependencies(self) -> Mapping[str, frozenset[str]]:
        return dict(self._dependencies)

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        required: set[str] = set()
        for name, deps in self._dependencies.items():
            if _means(self, name, tool, context):
                required |= deps
        if not required:
            return PolicyDecision.allow()
        done = policy_values(context.session, self._name)
        missing = [name for name in required if name not in done]
        if not missing:
            return PolicyDecision.allow()
        names = ", ".join(sorted(_current_name(self, context, name) for name in missing))
        return PolicyDecision.deny(
            f"{tool.name!r} needs a successful call of {names} first; call "
            f"{'it' if len(missing) == 1 else 'them'}, then retry."
        )

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        if not result.success:
            return
        for name in self._observed:
            if _means(self, name, tool, context):
                add_policy_value(context.session, self._name, name)

    def __repr__(self) -> str:
        return (
            f"SequentialDependencyPolicy(name={self._name!r}, dependencies={self._dependencies!r})"
        )


def _means(
    policy: SequentialDependencyPolicy, name: str, tool: Tool[Any, Any], context: ToolContext
) -> bool:
    rendered = context.rendered_prompt
    if rendered is None or not rendered.scope(policy):
        # Asked outside an executor, about a render it is not part of: match names bare.
        return name in (tool.name, tool.original_name)
    return tool.name in rendered.resolve(policy, name)


def _current_name(policy: SequentialDependencyPolicy, context: ToolContext, name: str) -> str:
    """The name the model knows a prerequisite by (it may have been prefixed or renamed)."""
    rendered = context.rendered_prompt
    if rendered is None or not rendered.scope(policy):
        return name
    # A prerequisite this composition does not offer is said so, never named as a tool.
    return " or ".join(sorted(rendered.resolve(policy, name))) or f"{name!r} (not offered here)"
