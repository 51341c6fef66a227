"""Strict conversion between JSON-like data and dataclasses, and JSON Schema for tools.

``parse`` validates tool arguments into a params dataclass (no coercion, unknown keys
rejected), ``dump`` turns values into JSON-compatible data, and ``schema`` produces the
self-contained JSON Schema LLM providers accept. pydantic does the work and is imported
only when one of these runs.
"""

from __future__ import annotations

from ._dump import dump
from ._parse import parse
from ._schema import schema

__all__ = ["dump", "parse", "schema"]
