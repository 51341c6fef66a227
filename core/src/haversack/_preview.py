"""Bounded previews: a short text standing for a value of any size (arguments, schemas,
messages), built in time bounded by the preview's length, not the value's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["CUT_MARK", "SCALARS", "cut", "preview", "short"]

#: Values shown whole by their repr.
SCALARS: Final = frozenset({bool, int, float, complex})
#: What replaces the end of a text cut short.
CUT_MARK: Final = "[... {} more characters not kept]"


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a mark saying how many were left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_MARK.format(len(text) - limit)


def preview(value: object, limit: int) -> str:
    """A text of about ``limit`` characters standing for ``value`` (a call's arguments, a
    schema), built in bounded time whatever its size: text cut, a mapping's values cut
    short."""
    if isinstance(value, str):
        return cut(value, limit)
    if isinstance(value, bytes):
        return cut(value[: limit + 1].decode("utf-8", "replace"), limit)
    if isinstance(value, Mapping):
        # Values cut short, then one C-level repr: cheaper than reprlib, bounded all the same.
        share = max(16, limit // max(1, min(len(value), 16)))
        shown: dict[object, object] = {}
        for key, item in value.items():
            if len(shown) == 16:
                shown["..."] = _Text(f"{len(value) - 16} more")
                break
            shown[key if type(key) is str and len(key) <= 40 else _Text(short(key, 40))] = (
                item
                if item is None or type(item) in SCALARS
                else item
                if type(item) is str and len(item) <= share
                else _Text(short(item, share))
            )
        return cut(repr(shown), limit)
    return short(value, limit)


class _Text(str):
    """A preview piece shown without quotes inside a repr."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def short(value: object, limit: int) -> str:
    """A repr of ``value`` of about ``limit`` characters at most, built in bounded time."""
    if isinstance(value, str | bytes):
        head = repr(value[:limit])
        return head if len(value) <= limit else f"{head}[... {len(value) - limit} more]"
    if value is None or type(value) in SCALARS:
        return cut(repr(value), limit)
    size = len(value) if isinstance(value, Mapping | list | tuple | set | frozenset) else None
    if size is not None:
        return f"<{type(value).__name__} of {size} items>"
    return f"<{type(value).__name__}>"
