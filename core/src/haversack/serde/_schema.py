"""``schema``: self-contained JSON Schema for a tool's params."""

from __future__ import annotations

import copy
from typing import Any

from haversack.errors import PromptValidationError

from ._core import core_schema_for
from ._frozen import freeze

__all__ = ["schema", "shared_schema"]

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def schema(tp: type[Any] | None) -> dict[str, Any]:
    """A JSON Schema for params type ``tp`` that LLM providers accept.

    Field descriptions come from ``field(metadata={"description": ...})``; required fields,
    defaults and enums are kept; every object has ``additionalProperties: false``; nested
    dataclasses are inlined (no ``$ref`` / ``$defs``); pydantic's ``title`` noise and the
    dataclasses' docstrings (written for developers, not for the model) are dropped.
    ``None`` (a tool without params) gives an empty object schema. A recursive dataclass
    cannot be inlined and raises :class:`PromptValidationError`. Returns a fresh copy the
    caller may modify.
    """
    if tp is None:
        return copy.deepcopy(_EMPTY_OBJECT)
    import pickle  # here, not at import: ``import haversack.serde`` stays light

    frozen = _frozen.get(tp)
    if frozen is None:
        frozen = _frozen[tp] = pickle.dumps(_cached_schema(tp), pickle.HIGHEST_PROTOCOL)
    # A fresh copy on every call (the caller may modify it) is what provider adapters pay
    # per request: unpickling our own cached bytes costs about a sixth of copy.deepcopy.
    result: dict[str, Any] = pickle.loads(frozen)  # noqa: S301 - bytes this module pickled
    return result


def shared_schema(tp: type[Any] | None) -> dict[str, Any]:
    """The same schema as :func:`schema`, as one shared, read-only structure (no copy).

    For code that only reads or serialises the schema, such as the provider adapters, which
    send it with every request: every call returns the same object, whose dicts and lists
    raise ``TypeError`` on any change (so no caller can alter what the next one gets), and
    whose copies (``copy.deepcopy``, pickle) are plain, mutable ones.
    """
    if tp is None:
        return _EMPTY_SHARED
    found = _shared.get(tp)
    if found is None:
        found = _shared[tp] = freeze(_cached_schema(tp))
    return found


_cache: dict[type[Any], dict[str, Any]] = {}
_frozen: dict[type[Any], bytes] = {}
_shared: dict[type[Any], dict[str, Any]] = {}
_EMPTY_SHARED: dict[str, Any] = freeze(_EMPTY_OBJECT)
_DATA_KEYS = frozenset({"default", "const", "enum", "examples"})


def _cached_schema(tp: type[Any]) -> dict[str, Any]:
    found = _cache.get(tp)
    if found is not None:
        return found
    from pydantic.json_schema import GenerateJsonSchema

    raw = GenerateJsonSchema(ref_template="#/$defs/{model}").generate(
        core_schema_for(tp), mode="validation"
    )
    defs = raw.pop("$defs", {})
    # pydantic turns a dataclass's docstring into its object's "description". Docstrings are
    # written for developers (reST markup, internal names that a rename makes wrong), so they
    # are not sent: the tool's description and the fields' metadata speak to the model.
    for target in (raw, *defs.values()):
        if isinstance(target, dict):
            target.pop("description", None)
    result = _inline(raw, defs, tp, ())
    if not isinstance(result, dict):  # pragma: no cover - a dataclass always gives an object
        raise PromptValidationError("Params schema is not an object.", dataclass_type=tp)
    _cache[tp] = result
    return result


def _inline(node: Any, defs: dict[str, Any], tp: type[Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, tp, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in stack:
            raise PromptValidationError(
                f"Params type {tp.__qualname__} is recursive (through {name}); tool parameter "
                "schemas must be finite to be inlined.",
                dataclass_type=tp,
            )
        target = _inline(defs[name], defs, tp, (*stack, name))
        extra = {
            k: copy.deepcopy(v) if k in _DATA_KEYS else _inline(v, defs, tp, stack)
            for k, v in node.items()
            if k != "$ref"
        }
        return {**target, **extra}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYS:  # instance data, not schema: a default's "title" key is kept
            out[key] = copy.deepcopy(value)
            continue
        if key == "title" and not isinstance(value, dict):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs, tp, stack) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, tp, stack)
    return out
