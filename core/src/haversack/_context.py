"""``ToolContext``: the immutable bundle a handler receives as ``context=``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._filesystem import Filesystem

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

    @property
    def filesystem(self) -> Filesystem:
        """The bound workspace :class:`Filesystem`; raises ``ResourceError`` if none is."""
        return self.resources.get(Filesystem)  # type: ignore[type-abstract]
