"""``ToolContext``: the immutable bundle a handler receives as ``context=``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .filesystem._protocol import Filesystem

if TYPE_CHECKING:
    from ._deadline import Deadline
    from ._prompt import Prompt, RenderedPrompt
    from ._session import Session
    from ._tool import Tool

__all__ = ["ResourceLookup", "ToolContext"]

T = TypeVar("T")


class ResourceLookup(Protocol):
    """What a handler may ask of the live resources: an instance per bound type."""

    def get(self, tp: type[T], /) -> T: ...

    def get_optional(self, tp: type[T], /) -> T | None: ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a handler may use besides its params; built fresh for each call.

    ``prompt`` and ``rendered_prompt`` are what is being evaluated, ``session`` holds state
    (read and dispatch to it; it is rolled back if the call fails), ``resources`` gives
    the bound resources, ``deadline`` the evaluation's time budget (``None`` for none),
    ``tool`` the tool being called and ``call_id`` the provider's id for this call.
    """

    prompt: Prompt
    rendered_prompt: RenderedPrompt | None
    session: Session
    resources: ResourceLookup
    deadline: Deadline | None = None
    tool: Tool[Any, Any] | None = None
    call_id: str | None = None

    def tool_name(self, original: str) -> str:
        """The name that the tool originally called ``original`` has in the prompt being run.

        A composed pack may be prefixed or renamed, so a message naming another tool of the
        same pack asks here instead of spelling the original name. Unknown names come back
        unchanged. Only messages need names, so nothing is cached.
        """
        rendered = self.rendered_prompt
        tools = rendered.tools if rendered is not None else self.prompt.tools
        for candidate in tools:
            if candidate.original_name == original:
                return candidate.name
        return original

    @property
    def filesystem(self) -> Filesystem:
        """The bound workspace :class:`Filesystem`; raises ``ResourceError`` if none is."""
        return self.resources.get(Filesystem)  # type: ignore[type-abstract]
