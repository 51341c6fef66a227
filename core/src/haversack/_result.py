"""``ToolResult``: what a tool handler returns, and the text the model sees of it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["ToolResult", "render_value"]

ResultT = TypeVar("ResultT")


@dataclass(frozen=True, slots=True)
class ToolResult(Generic[ResultT]):
    """The outcome of one tool call.

    ``message`` is a short reply for the model; ``value`` the typed payload; ``success``
    tells the executor whether to keep (``True``) or roll back (``False``) the call's
    effects; ``exclude_value_from_context`` keeps the value out of the text sent to the
    model while still recording it.
    """

    message: str
    value: ResultT | None = None
    success: bool = True
    exclude_value_from_context: bool = False

    @classmethod
    def ok(cls, value: ResultT | None = None, message: str = "OK") -> ToolResult[ResultT]:
        """A successful result carrying ``value``."""
        return cls(message=message, value=value, success=True)

    @classmethod
    def error(cls, message: str, value: ResultT | None = None) -> ToolResult[ResultT]:
        """A failed result; the executor rolls back the call's effects."""
        return cls(message=message, value=value, success=False)

    def render(self) -> str:
        """The exact text sent to the model: the message, then the rendered value."""
        if self.exclude_value_from_context:
            return self.message
        body = render_value(self.value)
        if not body:
            return self.message
        if not self.message:
            return body
        return f"{self.message}\n{body}"


def render_value(value: object) -> str:
    """Render a result value for the model.

    A value with its own ``render()`` method decides its text; a sequence of such values is
    rendered item by item, one per line; a string is used as is; anything else becomes
    compact JSON with ``None`` fields dropped.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    render = getattr(value, "render", None)
    if callable(render) and not isinstance(value, type):
        return str(render())
    if isinstance(value, Sequence) and value and all(_has_render(item) for item in value):
        return "\n".join(str(item.render()) for item in value)
    return _ENCODE(_jsonable(value))


# One encoder for every call: json.dumps with non-default options builds a new one each time.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# Per dataclass type, its field names (dataclasses.fields() rebuilds a tuple on every call).
_field_names: dict[type, tuple[str, ...]] = {}


def _has_render(item: object) -> bool:
    return callable(getattr(item, "render", None)) and not isinstance(item, type)


def _jsonable(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    # Plain dataclasses of plain fields are the common case and need no pydantic import.
    names = _field_names.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _field_names[kind] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        out = {}
        for name in names:
            item = getattr(value, name)
            if item is not None:
                out[name] = _jsonable(item)
        return out
    if isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items() if v is not None}
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, exclude_none=True)
