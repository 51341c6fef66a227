"""``dump``: values to JSON-compatible data."""

from __future__ import annotations

from typing import Any

__all__ = ["dump"]


def dump(value: object, *, exclude_none: bool = False) -> Any:
    """Turn a dataclass (or any value pydantic understands) into JSON-compatible data.

    Dataclasses become dicts, tuples and sets become lists, enums their values, datetimes
    ISO strings. ``exclude_none`` drops fields whose value is ``None``.
    """
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, exclude_none=exclude_none)
