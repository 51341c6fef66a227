"""Open every resource of a composed prompt once, so what cannot open is told up front."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from haversack.errors import HaversackError, ResourceError

if TYPE_CHECKING:
    from haversack._bindings import ResourceRegistry
    from haversack._prompt import Prompt

__all__ = ["ResourceProblem", "check_resources", "resource_error_line"]


@dataclass(frozen=True, slots=True)
class ResourceProblem:
    """A resource of the prompt that cannot be built (or closed): which, and why, in a line.

    ``message`` is the root cause as its factory said it (the fix included when the pack
    gives one), without the chain of bindings around it.
    """

    resource: str
    message: str
    closing: bool = False

    @property
    def line(self) -> str:
        """``resource Filesystem cannot open: Host mount './x' is missing ...``."""
        verb = "cannot close" if self.closing else "cannot open"
        return f"resource {self.resource} {verb}: {self.message}"


def check_resources(prompt: Prompt) -> tuple[ResourceProblem, ...]:
    """Build every resource bound to ``prompt`` (then close it); one problem per failure.

    Singletons are built as an evaluation would build them, ``TOOL_CALL`` and
    ``PROTOTYPE`` resources inside one tool-call scope each. Building starts whatever a
    resource starts (a sandbox container, a database connection): this is a real check, as
    slow as the first call of a session.
    """
    from haversack._bindings import Scope

    registry: ResourceRegistry | None = prompt.resources
    if registry is None or not len(registry):
        return ()
    problems: list[ResourceProblem] = []
    live = registry.open()
    try:
        for binding in registry.bindings:
            name = binding.provides.__qualname__
            try:
                if binding.scope is Scope.SINGLETON:
                    live.get(binding.provides)
                else:
                    with live.tool_call():
                        live.get(binding.provides)
            except HaversackError as exc:
                problems.append(ResourceProblem(name, root_message(exc)))
    finally:
        try:
            live.close()
        except ResourceError as exc:
            problems.append(ResourceProblem("(closing)", root_message(exc), closing=True))
    return tuple(problems)


def root_message(exc: BaseException) -> str:
    """The innermost cause's message on one line: what the failing factory itself said."""
    cause: BaseException = exc
    seen = {id(cause)}
    while cause.__cause__ is not None and id(cause.__cause__) not in seen:
        cause = cause.__cause__
        seen.add(id(cause))
    text = " ".join(str(cause).split())
    if cause is not exc and not isinstance(cause, HaversackError):
        text = f"{type(cause).__name__}: {text}"
    return text or type(cause).__name__


def resource_error_line(exc: ResourceError) -> str:
    """A :class:`ResourceError` raised while opening, as one line naming the resource."""
    name = _resource_of(exc)
    return f"resource {name} cannot open: {root_message(exc)}" if name else root_message(exc)


def _resource_of(exc: ResourceError) -> str:
    # "The binding Filesystem from factory ... failed": the qualname follows "binding".
    words = str(exc).split()
    if len(words) > 2 and words[0] == "The" and words[1] == "binding":
        return words[2]
    return ""
