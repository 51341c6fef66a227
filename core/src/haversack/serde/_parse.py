"""``parse``: JSON-like data into a params dataclass, strictly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from haversack.errors import ToolValidationError

from ._core import validator_for

__all__ = ["parse"]

T = TypeVar("T")

_MAX_REPORTED = 5


def parse(tp: type[T], data: str | bytes | Mapping[str, Any]) -> T:
    """Validate ``data`` (a JSON text or an already-decoded mapping) into ``tp``.

    Strict: no ``"5"`` for ``5``, no string for a tuple, unknown keys and missing required
    fields rejected. Raises :class:`ToolValidationError` whose message names each bad field
    by its path (``steps.0.title``) and whose ``field_path`` is the first one.
    """
    if isinstance(data, Mapping):
        try:
            text: str | bytes = json.dumps(data, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ToolValidationError(f"Arguments are not JSON data: {exc}.") from exc
    elif isinstance(data, str | bytes):
        text = data
    else:
        raise ToolValidationError(f"Arguments must be a JSON object, got {type(data).__name__}.")
    from pydantic_core import ValidationError

    try:
        return validator_for(tp).validate_json(text, strict=True)  # type: ignore[no-any-return]
    except ValidationError as exc:
        raise _translate(exc, tp) from None


def _translate(exc: Any, tp: type[Any]) -> ToolValidationError:
    problems: list[str] = []
    first_path: str | None = None
    errors = exc.errors(include_url=False)
    for error in errors[:_MAX_REPORTED]:
        loc = ".".join(str(part) for part in error["loc"])
        if first_path is None:
            first_path = loc or None
        problems.append(_describe(error, loc, tp))
    if len(errors) > _MAX_REPORTED:
        problems.append(f"and {len(errors) - _MAX_REPORTED} more")
    return ToolValidationError(
        "Invalid arguments: " + "; ".join(problems) + ".", field_path=first_path
    )


def _describe(error: Any, loc: str, tp: type[Any]) -> str:
    kind = error["type"]
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        allowed = _field_names(tp) if "." not in loc else None
        hint = f" (allowed fields: {', '.join(allowed)})" if allowed else ""
        return f"unknown field '{loc}'{hint}"
    if kind in ("missing", "missing_keyword_only_argument", "missing_argument"):
        return f"missing required field '{loc}'"
    if kind in ("value_error", "assertion_error"):
        # A dataclass __post_init__ (or validator) refused the value: its words are the message.
        cause = error.get("ctx", {}).get("error")
        text = str(cause) if cause is not None else error["msg"]
        return f"field '{loc}': {text}" if loc else text
    if kind == "json_invalid":
        return f"the arguments are not valid JSON ({error['msg']})"
    if kind in ("dataclass_type", "model_type", "dataclass_exact_type") and not loc:
        return "expected a JSON object"
    given = error.get("input")
    shown = (
        repr(given)
        if isinstance(given, str | int | float | bool) or given is None
        else type(given).__name__
    )
    if isinstance(given, str) and len(shown) > 60:
        shown = shown[:57] + "...'"
    where = f"field '{loc}'" if loc else "arguments"
    return f"{where}: {error['msg']} (got {shown})"


def _field_names(tp: type[Any]) -> list[str]:
    import dataclasses

    if dataclasses.is_dataclass(tp):
        return [f.name for f in dataclasses.fields(tp)]
    return []
