"""Drop single tools of a pack: its ``tools`` (keep only) and ``exclude_tools`` options."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from haversack.errors import PackConfigError

from ._config import PackOptions
from ._contribution import Contribution
from ._rename import all_tools

if TYPE_CHECKING:
    from haversack._section import Section
    from haversack._tool import Tool

__all__ = ["filter_tools"]


def filter_tools(contribution: Contribution, options: PackOptions) -> list[Tool[Any, Any]]:
    """Remove the tools the options leave out, in place; returns the removed tools.

    Patterns are shell globs (``grep*``) matched against the tools' names as the pack
    registers them (before ``prefix``/``rename``). A pattern matching none of the pack's
    tools is a :class:`PackConfigError` naming the pack's tools, so a typo never silently
    keeps (or drops) a tool.
    """
    if options.tools is None and not options.exclude_tools:
        return []
    names = [t.name for t in all_tools(contribution)]
    for option, patterns in (
        ("tools", options.tools or ()),
        ("exclude_tools", options.exclude_tools),
    ):
        _check_known(contribution.name, option, patterns, names, options.source)
    keep = {
        n
        for n in names
        if (options.tools is None or _matches(n, options.tools))
        and not _matches(n, options.exclude_tools)
    }
    if len(keep) == len(names):
        return []
    removed = [t for t in all_tools(contribution) if t.name not in keep]

    def section(node: Section[Any]) -> Section[Any]:
        tools = tuple(t for t in node.tools if t.name in keep)
        children = tuple(section(c) for c in node.children)
        if tools == node.tools and children == node.children:
            return node
        clone = copy.copy(node)
        clone.tools = tools
        clone.children = children
        return clone

    contribution.tools[:] = [t for t in contribution.tools if t.name in keep]
    contribution.sections[:] = [section(s) for s in contribution.sections]
    return removed


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def _check_known(
    pack: str, option: str, patterns: Sequence[str], names: Sequence[str], source: str
) -> None:
    for pattern in patterns:
        if any(fnmatchcase(n, pattern) for n in names):
            continue
        import difflib  # only for a message

        close = difflib.get_close_matches(pattern, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise PackConfigError(
            f"{option} for pack {pack!r} ({source}) names {pattern!r}{hint}, which matches none "
            f"of its tools: {', '.join(sorted(names)) or 'none'}.",
            pack=pack,
        )
