"""Apply a pack's ``prefix`` and ``rename`` options to every tool it contributes."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from haversack.errors import PackConfigError, PromptValidationError

if TYPE_CHECKING:
    from haversack._section import Section
    from haversack._tool import Tool

    from ._config import PackOptions
    from ._contribution import Contribution

__all__ = ["all_tools", "apply_names"]


def all_tools(contribution: Contribution) -> Iterator[Tool[Any, Any]]:
    """Every tool of a contribution in prompt order: its section trees, then loose tools."""
    for section in contribution.sections:
        yield from _section_tools(section)
    yield from contribution.tools


def _section_tools(section: Section[Any]) -> Iterator[Tool[Any, Any]]:
    yield from section.tools
    for child in section.children:
        yield from _section_tools(child)


def apply_names(contribution: Contribution, options: PackOptions) -> None:
    """Rename the contribution's tools in place: ``rename`` first, else ``prefix``.

    The renamed tool keeps its ``original_name``, so ``${tool:name}`` in section text still
    resolves. A ``rename`` key that is not one of the pack's tools is a configuration error.
    """
    if not options.prefix and not options.rename:
        return
    name = contribution.name
    known = {t.name for t in all_tools(contribution)}
    unknown = sorted(set(options.rename) - known)
    if unknown:
        raise PackConfigError(
            f"rename for pack {name!r} ({options.source}) mentions {unknown[0]!r}, which is not "
            f"one of its tools: {', '.join(sorted(known)) or 'none'}.",
            pack=name,
        )

    def renamed(tool: Tool[Any, Any]) -> Tool[Any, Any]:
        new = options.rename.get(tool.name) or options.prefix + tool.name
        if new == tool.name:
            return tool
        try:
            return dataclasses.replace(tool, name=new, original_name=tool.original_name)
        except PromptValidationError as exc:
            raise PackConfigError(
                f"Cannot rename tool {tool.name!r} of pack {name!r} to {new!r} "
                f"({options.source}): {exc}",
                pack=name,
            ) from None

    def section(node: Section[Any]) -> Section[Any]:
        tools = tuple(renamed(t) for t in node.tools)
        children = tuple(section(c) for c in node.children)
        if tools == node.tools and children == node.children:
            return node
        clone = copy.copy(node)
        clone.tools = tools
        clone.children = children
        return clone

    contribution.tools[:] = [renamed(t) for t in contribution.tools]
    contribution.sections[:] = [section(s) for s in contribution.sections]
