"""``dump``: values to JSON-compatible data."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["dump"]


def dump(value: object, *, exclude_none: bool = False) -> Any:
    """Turn a dataclass (or any value pydantic understands) into JSON-compatible data.

    Dataclasses become dicts, tuples and sets become lists, enums their values, datetimes
    ISO strings. ``exclude_none`` drops fields whose value is ``None``.
    """
    from pydantic_core import to_jsonable_python

    if exclude_none:
        # pydantic-core's exclude_none skips fields of stdlib dataclasses, so drop them here.
        value = _without_none(value)
    return to_jsonable_python(value, exclude_none=exclude_none)


def _without_none(value: object) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _without_none(item)
            for f in dataclasses.fields(value)
            if (item := getattr(value, f.name)) is not None
        }
    if isinstance(value, list | tuple):
        return [_without_none(item) for item in value]
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    return value
