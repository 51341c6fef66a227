"""The ``@tool`` decorator: a :class:`Tool` built from a handler function's signature,
type annotations and docstring."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from ._result import ToolResult
from ._tool import SIGNATURE_HELP, Tool, ToolAnnotations, ToolExample
from .errors import PromptValidationError

__all__ = ["tool"]

HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])


@overload
def tool(fn: Callable[..., Any], /) -> Tool[Any, Any]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Sequence[ToolExample[Any, Any]] = (),
    annotations: ToolAnnotations | None = None,
) -> Callable[[Callable[..., Any]], Tool[Any, Any]]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    examples: Sequence[ToolExample[Any, Any]] = (),
    annotations: ToolAnnotations | None = None,
) -> Tool[Any, Any] | Callable[[Callable[..., Any]], Tool[Any, Any]]:
    """Build a :class:`Tool` from a handler function.

    The name defaults to the function's name, the description to the first paragraph of its
    docstring, and the params and result types come from the annotations of its positional
    parameter and its ``ToolResult[...]`` return type. Use bare (``@tool``) or with
    arguments (``@tool(name="x")``).
    """

    def build(func: Callable[..., Any]) -> Tool[Any, Any]:
        tool_name = name if name is not None else getattr(func, "__name__", "")
        params_type, result_type = _types_from_annotations(func, tool_name)
        text = description if description is not None else _first_paragraph(func, tool_name)
        return Tool[params_type, result_type](  # type: ignore[valid-type]
            name=tool_name,
            description=text,
            handler=func,
            examples=examples,
            annotations=annotations or ToolAnnotations(),
        )

    return build(fn) if fn is not None else build


def _first_paragraph(func: Callable[..., Any], tool: str) -> str:
    doc = inspect.getdoc(func)
    if not doc:
        raise PromptValidationError(
            "@tool needs a docstring (its first paragraph becomes the description) or an "
            "explicit description=.",
            tool_name=tool,
        )
    return " ".join(doc.split("\n\n", 1)[0].split())


def _types_from_annotations(func: Callable[..., Any], tool: str) -> tuple[Any, Any]:
    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:  # NameError, TypeError: unresolvable forward references
        raise PromptValidationError(
            f"Cannot resolve the annotations of {func.__qualname__}: {exc}.", tool_name=tool
        ) from exc
    try:
        first = next(
            p
            for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
    except StopIteration:
        raise PromptValidationError(
            f"{func.__qualname__} takes no positional params argument; it must be "
            f"{SIGNATURE_HELP}.",
            tool_name=tool,
        ) from None
    if first.name not in hints:
        raise PromptValidationError(
            f"Annotate the params argument {first.name!r} of {func.__qualname__} with a "
            "dataclass (or None).",
            tool_name=tool,
        )
    returned = hints.get("return")
    if typing.get_origin(returned) is not ToolResult:
        raise PromptValidationError(
            f"Annotate the return type of {func.__qualname__} as ToolResult[ResultType].",
            tool_name=tool,
        )
    (result_type,) = typing.get_args(returned)
    return hints[first.name], result_type
