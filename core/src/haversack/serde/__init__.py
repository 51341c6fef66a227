"""Strict conversion between JSON-like data and dataclasses, and JSON Schema for tools.

``parse`` validates tool arguments into a params dataclass (no coercion, unknown keys
rejected), ``dump`` turns values into JSON-compatible data, and ``schema`` produces the
self-contained JSON Schema LLM providers accept (``shared_schema``: the same, shared and
read-only, without the per-call copy). pydantic does the work and is imported
only when one of these runs.
"""

from __future__ import annotations

from ._dump import dump
from ._parse import parse
from ._schema import schema, shared_schema

__all__ = ["dump", "parse", "schema", "shared_schema"]
