"""Resources: typed bindings with scopes, merged registries and managed lifetimes."""

from __future__ import annotations

from ._binding import Binding, ResourceResolver, Scope
from ._live import Resources, ToolCallScope
from ._registry import ResourceRegistry

__all__ = [
    "Binding",
    "ResourceRegistry",
    "ResourceResolver",
    "Resources",
    "Scope",
    "ToolCallScope",
]
