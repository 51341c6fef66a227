"""``parse``: JSON-like data into a params dataclass, strictly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from haversack.errors import ToolValidationError

from ._core import validator_for

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

__all__ = ["parse", "parse_as", "prepare"]

T = TypeVar("T")

_MAX_REPORTED = 5


def parse(tp: type[T], data: str | bytes | Mapping[str, Any]) -> T:
    """Validate ``data`` (a JSON text or an already-decoded mapping) into ``tp``.

    Strict: no ``"5"`` for ``5``, no string for a tuple, unknown keys and missing required
    fields rejected. Raises :class:`ToolValidationError` whose message names each bad field
    by its path (``steps.0.title``) and whose ``field_path`` is the first one.
    """
    return parse_as(tp, data, "Invalid arguments")


def parse_as(
    tp: type[T],
    data: str | bytes | Mapping[str, Any],
    heading: str,
    *,
    noun: str = "field",
    listing: str = "allowed",
) -> T:
    """:func:`parse`, with every refusal worded ``"{heading}: {what is wrong}."``.

    The caller names what is parsed once (the executor: ``Invalid arguments for 'greet'``;
    a pack's options: ``noun="option", listing="valid"``, giving ``unknown option 'rot'
    (valid options: root, depth; did you mean 'root'?)``), so no one rewrites the message
    afterwards.
    """
    if type(data) is dict:
        fast = _fast_parse(tp, data)
        if fast is not _NO_FAST:
            return fast  # type: ignore[no-any-return]
    if isinstance(data, Mapping):
        try:
            text: str | bytes = json.dumps(data, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise ToolValidationError(f"{heading}: they are not JSON data ({exc}).") from exc
    elif isinstance(data, str | bytes):
        text = data
    else:
        raise ToolValidationError(
            f"{heading}: they must be a JSON object, got {type(data).__name__}."
        )
    try:
        return validator_for(tp).validate_json(text, strict=True)  # type: ignore[no-any-return]
    except Exception as exc:
        if not _is_validation_error(exc):
            raise
        if not isinstance(data, str | bytes) and _json_invalid(exc):
            # json.dumps output is valid JSON except for the escape of a lone surrogate: the
            # caller sent no JSON, so do not tell them their JSON is malformed.
            raise ToolValidationError(
                f"{heading}: a string value is not valid Unicode (it contains a lone "
                "surrogate such as \\ud800); send text as proper UTF-8."
            ) from None
        raise _translate(exc, tp, heading, noun, listing) from None


def prepare(tp: type[Any]) -> SchemaValidator | None:
    """Build now what parsing ``tp`` needs (its validator, the mapping fast path's field
    kinds), so that the first call pays nothing; returns the validator. A type pydantic
    refuses gives ``None``: parsing it reports the problem, as it would have without this."""
    try:
        validator = validator_for(tp)
    except Exception:  # noqa: BLE001 - the call reports it
        return None
    if tp not in _fast_kinds:
        _fast_kinds[tp] = _kinds_of(tp)
    return validator


def _json_invalid(exc: Any) -> bool:
    return any(error["type"] == "json_invalid" for error in exc.errors(include_url=False))


def _is_validation_error(exc: Exception) -> bool:
    # Imported on the error path only: an import statement on every call costs measurably.
    from pydantic_core import ValidationError

    return isinstance(exc, ValidationError)


# --------------------------------------------------------------------------- mapping fast path
# A decoded mapping used to go through json.dumps + validate_json(strict=True). For the common
# flat params dataclass (fields of type str, int, bool, optionally nullable, with or without a
# default) and a plain dict whose values already have exactly those types, that round trip is
# an identity: the JSON text decodes back to the same values. Then pydantic's Python validator
# builds the same instance without the round trip (lax mode only so that it accepts a dict for
# the dataclass; every value already has the exact type, so there is nothing to coerce). Any
# other shape, any value of another type and any validation failure take the JSON path, so
# accepted inputs, values and error messages are exactly the JSON path's.

_NO_FAST = object()
_INT_LIMIT = 1 << 63  # far below the int-to-str digit limit json.dumps would hit
_BASE_KINDS: dict[str, type] = {"str": str, "int": int, "bool": bool}
_FIELD_KEYS = frozenset({"type", "name", "schema", "init", "kw_only", "metadata"})
_CONFIG_KEYS = frozenset({"extra_fields_behavior", "title"})
_fast_kinds: dict[type[Any], dict[str, tuple[type, ...]] | None] = {}


def _fast_parse(tp: type[Any], data: dict[Any, Any]) -> Any:
    try:
        kinds = _fast_kinds[tp]
    except KeyError:
        kinds = _fast_kinds[tp] = _kinds_of(tp)
    except TypeError:  # an unhashable "type": the JSON path reports it
        return _NO_FAST
    if kinds is None:
        return _NO_FAST
    for key, value in data.items():
        allowed = kinds.get(key) if type(key) is str else None
        kind = type(value)
        if allowed is None or kind not in allowed:
            return _NO_FAST
        if kind is str:
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:  # lone surrogates: not valid JSON once dumped
                    return _NO_FAST
        elif kind is int and not -_INT_LIMIT < value < _INT_LIMIT:
            return _NO_FAST
    try:
        return validator_for(tp).validate_python(data, strict=False)
    except Exception:  # noqa: BLE001 - the JSON path gives the exact error (or value)
        return _NO_FAST


def _kinds_of(tp: type[Any]) -> dict[str, tuple[type, ...]] | None:
    """Per field, the exact value types the fast path accepts; ``None`` if not eligible."""
    from ._core import core_schema_for

    try:
        schema = core_schema_for(tp)
    except Exception:  # noqa: BLE001 - not a params type we can inspect: use the JSON path
        return None
    if schema.get("type") != "dataclass" or not set(schema.get("config", {})) <= _CONFIG_KEYS:
        return None
    args = schema.get("schema", {})
    if (
        args.get("type") != "dataclass-args"
        or args.get("collect_init_only")
        or args.get("computed_fields")
        or args.get("extra_behavior") != "forbid"
    ):
        return None
    kinds: dict[str, tuple[type, ...]] = {}
    for fld in args.get("fields", ()):
        if not set(fld) <= _FIELD_KEYS or fld.get("type") != "dataclass-field":
            return None
        if fld.get("init") is not True:
            return None
        node = fld["schema"]
        if node.get("type") == "default":
            if set(node) != {"type", "schema", "default"}:
                return None
            node = node["schema"]
        allowed: tuple[type, ...] = ()
        if node.get("type") == "nullable" and set(node) == {"type", "schema"}:
            allowed = (type(None),)
            node = node["schema"]
        if set(node) != {"type"} or node["type"] not in _BASE_KINDS:
            return None
        kinds[fld["name"]] = (_BASE_KINDS[node["type"]], *allowed)
    return kinds


def _translate(
    exc: Any, tp: type[Any], heading: str, noun: str, listing: str
) -> ToolValidationError:
    problems: list[str] = []
    first_path: str | None = None
    errors = exc.errors(include_url=False)
    for error in errors[:_MAX_REPORTED]:
        loc = ".".join(str(part) for part in error["loc"])
        if first_path is None:
            first_path = loc or None
        problems.append(_describe(error, loc, tp, noun, listing))
    if len(errors) > _MAX_REPORTED:
        problems.append(f"and {len(errors) - _MAX_REPORTED} more")
    return ToolValidationError(f"{heading}: " + "; ".join(problems) + ".", field_path=first_path)


def _describe(error: Any, loc: str, tp: type[Any], noun: str, listing: str) -> str:
    kind = error["type"]
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        allowed = _field_names(tp) if "." not in loc else []
        return f"unknown {noun} '{loc}'{_unknown_hint(loc, allowed, noun, listing)}"
    if kind in ("missing", "missing_keyword_only_argument", "missing_argument"):
        return f"missing required {noun} '{loc}'"
    if kind in ("value_error", "assertion_error"):
        # A dataclass __post_init__ (or validator) refused the value: its words are the message.
        cause = error.get("ctx", {}).get("error")
        text = str(cause) if cause is not None else error["msg"]
        return f"{noun} '{loc}': {text}" if loc else text
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
    where = f"{noun} '{loc}'" if loc else "arguments"
    return f"{where}: {error['msg']} (got {shown})"


def _unknown_hint(name: str, allowed: list[str], noun: str, listing: str) -> str:
    """`` (allowed fields: a, b; did you mean 'a'?)``: the valid names and the closest one."""
    if not allowed:
        return ""
    import difflib  # only for a refusal

    close = difflib.get_close_matches(name, allowed, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else ""
    return f" ({listing} {noun}s: {', '.join(allowed)}{guess})"


def _field_names(tp: type[Any]) -> list[str]:
    import dataclasses

    if dataclasses.is_dataclass(tp):
        return [f.name for f in dataclasses.fields(tp)]
    return []
