"""Built-in plugins: core behaviour delivered through the same hooks as packs.

They are registered like entry-point packs but are hidden from pack listings unless asked
for (``haversack packs --all``, ``PackReport.visible(include_builtin=True)``).
"""

from __future__ import annotations

from ._caller import CallerContributions

__all__ = ["CallerContributions"]
