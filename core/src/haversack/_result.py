"""``ToolResult``: what a tool handler returns, and the text the model sees of it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Generic, TypeVar

__all__ = ["ToolResult", "render_once", "render_value"]

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
    # The text the executor rendered for the call that returned this result, kept so that
    # the log, the adapters and the CLI send that very text instead of rendering it again.
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def ok(cls, value: ResultT | None = None, message: str = "OK") -> ToolResult[ResultT]:
        """A successful result carrying ``value``."""
        return cls(message=message, value=value, success=True)

    @classmethod
    def error(cls, message: str, value: ResultT | None = None) -> ToolResult[ResultT]:
        """A failed result; the executor rolls back the call's effects."""
        return cls(message=message, value=value, success=False)

    def render(self) -> str:
        """The exact text sent to the model: the message, then the rendered value.

        For a result returned by the executor, this is the text it rendered (and logged)
        for the call, not a new rendering.
        """
        text = self._text
        return text if text is not None else _compose(self)


def render_once(result: ToolResult[Any]) -> str:
    """Render ``result`` now and keep the text on it: what :meth:`ToolResult.render` returns
    from then on. The executor calls this once per call."""
    if result.exclude_value_from_context or result.value is None:
        text = result.message
    else:
        text = _compose(result)
    object.__setattr__(result, "_text", text)
    return text


def _compose(result: ToolResult[Any]) -> str:
    message = result.message
    if result.exclude_value_from_context:
        return message
    body = render_value(result.value)
    if not body:
        return message
    if not message:
        return body
    return f"{message}\n{body}"


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
    return _encode(_plain(value))


def _plain(value: object) -> Any:
    """``serde.dump(value, exclude_none=True)``, bound on first use: rendering a prompt
    imports no serde, and an import statement on every call would cost."""
    global _plain
    from .serde._dump import _without_none

    _plain = _without_none
    return _without_none(value)


def _unencodable(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# One C encoder for every call (json.dumps and JSONEncoder.encode build one per call), with
# json.dumps(ensure_ascii=False, separators=(",", ":")) options. No circular-reference check:
# the data comes fresh from serde's dump, which builds no cycles.
_chunks: Callable[[Any, int], Any] | None = (
    None
    if c_make_encoder is None
    else c_make_encoder(None, _unencodable, encode_basestring, None, ":", ",", False, False, True)
)


def _encode(data: Any) -> str:
    if _chunks is None:  # pragma: no cover - CPython always has the C encoder
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return "".join(_chunks(data, 0))


def _has_render(item: object) -> bool:
    return callable(getattr(item, "render", None)) and not isinstance(item, type)
