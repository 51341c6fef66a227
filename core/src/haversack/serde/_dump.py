"""``dump``: values to JSON-compatible data (the one home of that conversion)."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["dump"]


def dump(value: object, *, exclude_none: bool = False) -> Any:
    """Turn a dataclass (or any value pydantic understands) into JSON-compatible data.

    Dataclasses become dicts, tuples and sets become lists, enums their values, datetimes
    ISO strings. ``exclude_none`` drops fields whose value is ``None`` (what a tool result
    shows the model).
    """
    if exclude_none:
        return _without_none(value)
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


# Per dataclass type, its field names (dataclasses.fields() rebuilds a tuple on every call).
_field_names: dict[type, tuple[str, ...]] = {}


def _without_none(value: Any) -> Any:
    """``value`` as JSON-compatible data without ``None`` fields, in one walk.

    Plain data (dataclasses of strings, numbers, lists, dicts: every tool result's usual
    shape) is converted here without importing pydantic; anything else is left to it.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    names = _field_names.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _field_names[kind] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        out = {}
        for name in names:
            item = getattr(value, name)
            if item is None:
                continue
            field_kind = type(item)
            out[name] = (
                item
                if field_kind is str
                or field_kind is int
                or field_kind is float
                or field_kind is bool
                else _without_none(item)
            )
        return out
    if isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_without_none(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _without_none(v) for k, v in value.items() if v is not None}
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, exclude_none=True)
