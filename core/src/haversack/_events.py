"""``ToolInvoked``: the record published for every tool call, whatever its outcome, and
``ToolLog``: how much of those records a session keeps."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from ._preview import SCALARS as _SCALARS
from ._preview import cut as _cut
from ._preview import preview as _preview
from ._result import ToolResult

if TYPE_CHECKING:
    from ._session import Session, SliceView
    from ._session._slices import Append

__all__ = [
    "DEFAULT_LOG_ITEMS",
    "DEFAULT_LOG_PREVIEW_CHARS",
    "CallOutcome",
    "ToolInvoked",
    "ToolLog",
]

#: Tool calls a session's log keeps by default (the newest; older ones are dropped).
DEFAULT_LOG_ITEMS: Final = 1000
#: Characters of rendered text, message and arguments a logged call keeps by default.
DEFAULT_LOG_PREVIEW_CHARS: Final = 1000


class CallOutcome(StrEnum):
    """How a call ended. Everything but ``OK`` left session and resources untouched."""

    OK = "ok"
    FAILED = "failed"  # the handler returned success=False
    DENIED = "denied"  # a policy refused the call
    INVALID = "invalid"  # unknown tool or malformed arguments
    ERROR = "error"  # the handler raised
    ABORTED = "aborted"  # PromptEvaluationError / deadline: the evaluation stops
    PENDING = "pending"  # a policy asked for a human's approval; nothing ran yet


@dataclass(frozen=True, slots=True)
class ToolInvoked:
    """One tool call as it happened.

    ``params`` is the parsed params dataclass, or ``None`` when parsing failed, in which
    case ``arguments`` (always kept) shows what the model sent. ``rendered`` is the exact
    text sent back to the model. ``duration_s`` covers the whole pipeline.

    Subscribers get the complete record. The session's log keeps, by default, the bounded
    form (:meth:`compact`, ``complete=False``): outcome, timing, sizes and previews.
    """

    prompt_ns: str
    prompt_key: str
    tool_name: str
    params: Any
    arguments: str | bytes | Mapping[str, Any] | None
    result: ToolResult[Any]
    rendered: str
    outcome: CallOutcome
    call_id: str | None
    duration_s: float
    #: False for the bounded form kept in the session log: ``rendered``, ``result.message``
    #: and ``arguments`` are previews, and a large ``result.value`` or ``params`` is dropped.
    complete: bool = True
    #: Length of the full rendered text in characters; ``None`` when ``rendered`` is whole.
    rendered_chars: int | None = None

    @property
    def success(self) -> bool:
        """Whether the handler's result was a success."""
        return self.result.success

    @property
    def rendered_length(self) -> int:
        """Length of the full text sent to the model, also for a bounded record."""
        return len(self.rendered) if self.rendered_chars is None else self.rendered_chars

    def compact(self, preview_chars: int = DEFAULT_LOG_PREVIEW_CHARS) -> ToolInvoked:
        """This record with at most about ``preview_chars`` characters of each text and no
        large payloads; the record itself when it is already that small.

        The cost is bounded by ``preview_chars``, never by the size of the call's data.
        """
        rendered = self.rendered
        result = self.result
        arguments = self.arguments
        arguments_small = (
            len(arguments) <= preview_chars
            if type(arguments) is str
            else _within(arguments, preview_chars)
        )
        small = len(rendered) <= preview_chars and len(result.message) <= preview_chars
        value = result.value
        # A value rendered as JSON is all in ``rendered``, so a short text proves it small;
        # one with its own render() (or kept out of the text) may hide data: walk it.
        value_small = (
            value is None
            or (small and not result.exclude_value_from_context and _shown_whole(type(value)))
            or _within(value, preview_chars)
        )
        if small and arguments_small and value_small:
            return self
        message = result.message
        if value_small and len(message) <= preview_chars:
            kept = result  # nothing of the result itself needs cutting
        else:
            kept = ToolResult(
                message=message if len(message) <= preview_chars else _cut(message, preview_chars),
                value=value if value_small else None,
                success=result.success,
                exclude_value_from_context=result.exclude_value_from_context,
            )
        return ToolInvoked(
            self.prompt_ns,
            self.prompt_key,
            self.tool_name,
            self.params if arguments_small else None,
            arguments if arguments_small else _preview(arguments, preview_chars),
            kept,
            rendered if len(rendered) <= preview_chars else _cut(rendered, preview_chars),
            self.outcome,
            self.call_id,
            self.duration_s,
            False,
            len(rendered) if self.rendered_chars is None else self.rendered_chars,
        )


@dataclass(frozen=True, slots=True)
class ToolLog:
    """How much of each call a session's ``ToolInvoked`` log keeps.

    ``max_items``: the log keeps the newest calls only (``None``: every call, unbounded).
    ``preview_chars``: each call is kept in its bounded form (:meth:`ToolInvoked.compact`);
    ``None`` keeps full records (results, rendered text and arguments: opt-in, as memory then
    grows with what the tools return). The defaults keep memory per session flat: about
    ``max_items x (preview_chars x 3 + 1 KB)`` at most.
    """

    max_items: int | None = DEFAULT_LOG_ITEMS
    preview_chars: int | None = DEFAULT_LOG_PREVIEW_CHARS

    def __post_init__(self) -> None:
        for name in ("max_items", "preview_chars"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(
                    f"ToolLog.{name} must be a positive integer or None, got {value!r}."
                )

    def install(self, session: Session) -> None:
        """Make ``session`` record ``ToolInvoked`` events this way (the last install wins)."""
        if self.preview_chars is None:
            from ._session import append

            session.register_log(ToolInvoked, append, max_items=self.max_items)
        else:
            session.register_log(
                ToolInvoked, _compacting(self.preview_chars), max_items=self.max_items
            )


@cache
def _compacting(
    preview_chars: int,
) -> Callable[[SliceView[ToolInvoked], ToolInvoked], Append[ToolInvoked]]:
    """The log reducer keeping each event's bounded form (one function per preview size)."""
    from ._session._slices import Append

    def compact(view: SliceView[ToolInvoked], event: ToolInvoked) -> Append[ToolInvoked]:
        try:
            return Append(event.compact(preview_chars))
        except Exception:  # noqa: BLE001 - odd arguments (a Mapping that raises) must not
            # fail the call being recorded: keep the record without them.
            bare = dataclasses.replace(event, params=None, arguments=None)
            return Append(bare.compact(preview_chars))

    compact.__qualname__ = f"ToolLog(preview_chars={preview_chars})"
    return compact


def _within(value: object, budget: int) -> bool:
    """Whether ``value`` holds roughly at most ``budget`` characters of data.

    Walks strings, bytes, containers and dataclasses, stopping as soon as the count passes
    ``budget``: the cost is O(budget), whatever the value's size (cycles included).
    """
    kind = type(value)
    if value is None or kind in _SCALARS:
        return True
    if kind is str or kind is bytes:
        return len(value) <= budget  # type: ignore[arg-type]
    used = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        used += 8  # every object costs something, so cycles end too
        if kind is str or kind is bytes or kind is bytearray:
            used += len(item)  # type: ignore[arg-type]
        elif item is None or kind in _SCALARS:
            pass
        elif kind is dict:  # the usual arguments: strings and numbers, counted in place
            used += 16 * len(item)  # type: ignore[arg-type]
            if used > budget:
                return False
            for key, entry in item.items():  # type: ignore[attr-defined]
                used += len(key) if type(key) is str else 8
                if type(entry) is str:
                    used += len(entry)
                elif entry is not None and type(entry) not in _SCALARS:
                    stack.append(entry)
        else:
            names = _FIELD_NAMES.get(kind)
            if names is None:
                names = _field_names(kind)
            if names:  # a dataclass (the usual result value): its fields
                for name in names:
                    stack.append(getattr(item, name))
            elif isinstance(item, Mapping):
                used += 16 * len(item)
                if used <= budget:
                    for key, entry in item.items():
                        stack.append(key)
                        stack.append(entry)
            elif isinstance(item, list | tuple | set | frozenset):
                used += 8 * len(item)
                if used <= budget:
                    stack.extend(item)
            else:
                used += 56  # an object of unknown size: counted as a small one
        if used > budget:
            return False
    return True


# Per value type: does render_value show all of it (compact JSON), or may it hide data?
_WHOLE: dict[type, bool] = {}


def _shown_whole(kind: type) -> bool:
    whole = _WHOLE.get(kind)
    if whole is None:
        # Strings are shown as they are; sequences may be rendered item by item.
        whole = kind is str or not (
            callable(getattr(kind, "render", None)) or issubclass(kind, list | tuple)
        )
        _WHOLE[kind] = whole
    return whole


# Per type, its dataclass field names (() for other types): fields() rebuilds a tuple per call.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = (
        tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else ()
    )
    _FIELD_NAMES[kind] = names
    return names
