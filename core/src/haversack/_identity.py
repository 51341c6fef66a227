"""``ToolIdentity``: who contributed a tool and what it called it, fixed when a prompt is built."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._tool import Tool

__all__ = ["YOUR_CODE", "ToolIdentity", "resolve_name", "resolve_names"]

#: The contributor of every tool that no pack contributed (a plain ``Prompt``, or
#: ``compose(sections=...)``).
YOUR_CODE = "your code"


@dataclass(frozen=True, slots=True)
class ToolIdentity:
    """A tool as its author knows it: the ``contributor`` (a pack's name, or ``"your code"``)
    and the ``original_name`` it registered, before any ``prefix`` or ``rename``.

    Two tools of one prompt never share an identity, whatever their final names: policies,
    approval patterns and messages rely on it instead of re-matching bare names.
    """

    contributor: str
    original_name: str

    def __str__(self) -> str:
        return f"{self.original_name} (of {self.contributor})"


def resolve_name(name: str, tools: Mapping[str, Tool[Any, Any]]) -> frozenset[str]:
    """The final names of the ``tools`` (by final name) that ``name`` means.

    The one rule every name a user writes follows: the tool whose final name is ``name``,
    if there is one; otherwise every tool originally called ``name`` (before a ``prefix`` or
    ``rename``). So a final name is never shadowed by another tool's original name.
    """
    if name in tools:
        return frozenset((name,))
    return frozenset(t.name for t in tools.values() if t.original_name == name)


def resolve_names(names: Iterable[str], tools: Mapping[str, Tool[Any, Any]]) -> frozenset[str]:
    """:func:`resolve_name` of each of ``names``, together."""
    found: set[str] = set()
    for name in names:
        found |= resolve_name(name, tools)
    return frozenset(found)
