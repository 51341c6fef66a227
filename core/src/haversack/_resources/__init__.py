"""Live resources: the instances an opened registry builds, their scopes and lifetimes."""

from __future__ import annotations

# The declarations are the prompt model's (``haversack._bindings``); re-exported here for the
# executor, which still imports them from this package.
from haversack._bindings import Binding, ResourceRegistry, ResourceResolver, Scope

from ._live import Resources, ToolCallScope

__all__ = [
    "Binding",
    "ResourceRegistry",
    "ResourceResolver",
    "Resources",
    "Scope",
    "ToolCallScope",
]
