"""Name uniqueness across contributors (decided by ``haversack._names``) and resource choice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from haversack._names import Claim, Claims, Clash, fix_between_contributors, within_contributor
from haversack.errors import PackLoadError

from ._contribution import Contribution
from ._report import Conflict

if TYPE_CHECKING:
    from haversack._bindings import Binding

__all__ = ["CALLER", "check_internal", "find_conflicts", "loose_section_key", "resolve_bindings"]

#: How the caller's own sections, policies and resources are named in messages.
CALLER = "your code"


def loose_section_key(pack: str) -> str:
    """The key of the section holding a pack's loose tools: the pack name as a section key."""
    key = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in pack.lower())
    return key if key[:1].isalnum() else f"pack-{key}"


def _claim(c: Contribution, claims: Claims[Contribution]) -> list[Clash[Contribution]]:
    """Record every name a contribution claims, as it will sit in the composed prompt."""
    clashes = claims.add_tree(c.sections, c.policies, owner=c)
    if c.tools:
        key = loose_section_key(c.name)
        for claim in (
            Claim("section", key, None, (key,)),
            *(Claim("tool", tool.name, tool, (key,)) for tool in c.tools),
        ):
            clash = claims.add(claim, c)
            if clash is not None:
                clashes.append(clash)
    return clashes


def check_internal(c: Contribution) -> None:
    """A contributor claiming one name twice is its own bug: ``PackLoadError``."""
    clashes = _claim(c, Claims())
    if clashes:
        claim = clashes[0][0]
        raise PackLoadError(within_contributor(c.label, claim), pack=None if c.builtin else c.name)


def _fix(kind: str, name: str, second: Contribution, first: Contribution) -> str:
    pack = second if not second.builtin else first
    return fix_between_contributors(kind, name, None if pack.builtin else pack.name)


def find_conflicts(contributions: Sequence[Contribution]) -> list[Conflict]:
    """Every clash between contributors (each already checked by :func:`check_internal`)."""
    claims: Claims[Contribution] = Claims()
    found: list[Conflict] = []
    for c in contributions:
        for claim, _, first in _claim(c, claims):
            # A nested key meets another contributor's only under a clashing parent key,
            # which is reported already.
            if claim.kind == "section" and len(claim.path) > 1:
                continue
            found.append(
                Conflict(
                    claim.kind,
                    claim.name,
                    (first.label, c.label),
                    _fix(claim.kind, claim.name, c, first),
                )
            )
    return found


def resolve_bindings(
    contributions: Sequence[Contribution],
) -> tuple[list[Binding[Any]], list[Conflict]]:
    """One binding per type, chosen as a merged registry chooses; a clash is a conflict."""
    from haversack._bindings._binding import type_name
    from haversack._bindings._registry import prevailing

    by_type: dict[type, list[tuple[Contribution, Binding[Any]]]] = {}
    for c in contributions:
        for binding in c.bindings:
            by_type.setdefault(binding.provides, []).append((c, binding))
    chosen: list[Binding[Any]] = []
    conflicts: list[Conflict] = []
    for tp, entries in by_type.items():
        winner, rival = prevailing([b for _, b in entries])
        if rival is not None:
            first = next(c for c, b in entries if b is winner)
            other = next(c for c, b in entries if b is rival)
            name = type_name(tp)
            conflicts.append(
                Conflict(
                    "resource",
                    name,
                    (first.label, other.label),
                    _fix("resource", name, other, first),
                )
            )
        chosen.append(winner)
    return chosen, conflicts
