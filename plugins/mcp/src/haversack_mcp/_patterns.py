"""Schema ``pattern`` checks run by RE2: linear time, whatever the server's pattern."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

__all__ = ["linear_validator"]

#: RE2's memory budget per pattern (program and DFA cache): a pattern past it is not checked
#: here (the server still checks its input).
_RE2_MAX_MEM = 1 << 20
_CACHE = 256


@lru_cache(maxsize=_CACHE)
def _compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2, or ``None`` when RE2 cannot run it (lookaround,
    backreferences, over budget): such a pattern is left to the server."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.max_mem = _RE2_MAX_MEM
    options.log_errors = False
    options.never_capture = True
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None
    except Exception:  # noqa: BLE001 - e.g. an unpaired surrogate: not a usable pattern
        return None


def _found(pattern: str, text: str) -> bool:
    regex = _compiled(pattern)
    if regex is None:
        return True  # not checkable in linear time here: the server judges it
    try:
        return regex.search(text) is not None
    except Exception:  # noqa: BLE001 - text RE2 cannot encode (a lone surrogate)
        return True


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError  # type: ignore[import-untyped]

    string = validator.is_type(instance, "string") and isinstance(patrn, str)
    if string and not _found(patrn, instance):
        yield ValidationError(f"{_short(instance)} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for patrn, subschema in patterns.items():
        for key, value in instance.items():
            if _found(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [p for p in schema.get("patternProperties", {}) if isinstance(p, str)]
    extras = [
        key
        for key in instance
        if key not in properties and not any(_found(p, key) for p in patterns)
    ]
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        # jsonschema's own wording, so both checks read alike.
        names = ", ".join(_short(key) for key in sorted(extras)[:10])
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")


def _short(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def linear_validator(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with ``pattern``, ``patternProperties`` and
    ``additionalProperties`` checked by RE2 instead of Python's backtracking ``re``: a
    pattern such as ``^(a|aa)+$`` on a long argument would hold the GIL for seconds."""
    from jsonschema import validators

    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    return validators.extend(cls, {k: v for k, v in keywords.items() if k in cls.VALIDATORS})
