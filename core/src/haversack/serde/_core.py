"""Cached strict pydantic-core validators for dataclasses that forbid unknown keys."""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_core import CoreSchema, SchemaValidator

__all__ = ["core_schema_for", "validator_for"]

_lock = threading.Lock()
# Plain dicts rather than functools.cache: types are the keys and the caches are unbounded
# on purpose (one entry per params type in the process).
_schemas: dict[type[Any], CoreSchema] = {}
_validators: dict[type[Any], SchemaValidator] = {}


def core_schema_for(tp: type[Any]) -> CoreSchema:
    """The core schema of ``tp`` with ``extra="forbid"`` on every dataclass in it.

    pydantic refuses a config for stdlib dataclasses and would otherwise read one from an
    attribute on the user's class; editing a copy of the schema leaves user classes alone.
    """
    found = _schemas.get(tp)
    if found is not None:
        return found
    from pydantic import TypeAdapter

    with _lock:
        schema = copy.deepcopy(TypeAdapter(tp).core_schema)
        _forbid_extra(schema)
        _schemas[tp] = schema
    return schema


def validator_for(tp: type[Any]) -> SchemaValidator:
    """A strict validator for ``tp`` (built once per type)."""
    found = _validators.get(tp)
    if found is None:
        from pydantic_core import SchemaValidator

        found = _validators[tp] = SchemaValidator(core_schema_for(tp))
    return found


def _forbid_extra(node: Any) -> None:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "dataclass-args":
            node["extra_behavior"] = "forbid"  # what the validator enforces
        elif kind == "dataclass":
            # what the JSON Schema generator reads to emit additionalProperties: false
            node["config"] = {**node.get("config", {}), "extra_fields_behavior": "forbid"}
        for value in node.values():
            _forbid_extra(value)
    elif isinstance(node, list):
        for value in node:
            _forbid_extra(value)
