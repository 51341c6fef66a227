"""Resource declarations: typed bindings, their scopes, and the registry a prompt carries.

This is part of the prompt model: it says what a tool may ask for and how each thing is made.
Making them (live instances, scopes, closing) is the runtime's, in ``haversack._resources``;
:meth:`ResourceRegistry.open` is the one door from here to there.
"""

from __future__ import annotations

from ._binding import Binding, ResourceResolver, Scope
from ._registry import ResourceRegistry, as_registry

__all__ = ["Binding", "ResourceRegistry", "ResourceResolver", "Scope", "as_registry"]
