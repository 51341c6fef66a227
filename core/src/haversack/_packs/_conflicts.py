"""Global name uniqueness across contributors, with a fix suggested for each clash."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from haversack.errors import PackLoadError

from ._contribution import Contribution
from ._rename import all_tools
from ._report import Conflict

if TYPE_CHECKING:
    from haversack._bindings import Binding
    from haversack._section import Section

__all__ = ["CALLER", "find_conflicts", "loose_section_key", "resolve_bindings", "check_internal"]

#: How the caller's own sections, policies and resources are named in messages.
CALLER = "your code"


def loose_section_key(pack: str) -> str:
    """The key of the section holding a pack's loose tools: the pack name as a section key."""
    key = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in pack.lower())
    return key if key[:1].isalnum() else f"pack-{key}"


def _policies(section: Section[Any]) -> Iterator[Any]:
    yield from section.policies
    for child in section.children:
        yield from _policies(child)


def _claims(c: Contribution) -> Iterator[tuple[str, str, object]]:
    """``(kind, name, object)`` for every name a contribution claims."""
    for section in c.sections:
        yield "section", section.key, section
    if c.tools:
        yield "section", loose_section_key(c.name), None
    for tool in all_tools(c):
        yield "tool", tool.name, tool
    for policy in c.policies:
        yield "policy", policy.name, policy
    for section in c.sections:
        for policy in _policies(section):
            yield "policy", policy.name, policy


def check_internal(c: Contribution) -> None:
    """A contributor claiming one name twice is its own bug: ``PackLoadError``."""
    seen: dict[tuple[str, str], object] = {}
    for kind, name, obj in _claims(c):
        other = seen.get((kind, name))
        if (kind, name) in seen and not (kind == "policy" and other is obj):
            raise PackLoadError(
                f"{c.label} contributes two {kind}s named {name!r}; "
                + (
                    ""
                    if kind != "section" or obj is not None
                    else "its loose tools go in a section keyed by the pack name. "
                )
                + "Names must be unique within the prompt.",
                pack=None if c.builtin else c.name,
            )
        seen[(kind, name)] = obj


def _hint(kind: str, name: str, second: Contribution, first: Contribution) -> str:
    pack = second if not second.builtin else first
    p = pack.name
    drop = f"or leave one pack out (HAVERSACK_DISABLE={p}, or compose(exclude=[{p!r}]))."
    if pack.builtin:
        return "Rename one of them."
    if kind == "tool":
        return (
            f'To fix it, give one pack a prefix: [tool.haversack.packs.{p}] prefix = "{p}_" '
            f'(or rename = {{ {name} = "{p}_{name}" }}), {drop}'
        )
    if kind == "resource":
        return (
            "To fix it, mark one binding default=True, "
            + drop.removeprefix("or ")
            + " To override a pack's resource, use prompt.bind(resources=...) after composing."
        )
    return f"To fix it, rename your own {kind}, {drop}"


def find_conflicts(contributions: Sequence[Contribution]) -> list[Conflict]:
    """Every cross-contributor clash of section keys, tool names and policy names."""
    owners: dict[tuple[str, str], tuple[Contribution, object]] = {}
    found: list[Conflict] = []
    for c in contributions:
        for kind, name, obj in _claims(c):
            owner = owners.get((kind, name))
            if owner is None:
                owners[(kind, name)] = (c, obj)
                continue
            first, first_obj = owner
            if first is c or (kind == "policy" and first_obj is obj):
                continue
            found.append(Conflict(kind, name, (first.label, c.label), _hint(kind, name, c, first)))
    return found


def resolve_bindings(
    contributions: Sequence[Contribution],
) -> tuple[list[Binding[Any]], list[Conflict]]:
    """One binding per type: a non-default beats defaults; two distinct of a rank clash."""
    from haversack._bindings._binding import type_name

    by_type: dict[type, list[tuple[Contribution, Binding[Any]]]] = {}
    for c in contributions:
        for binding in c.bindings:
            by_type.setdefault(binding.provides, []).append((c, binding))
    chosen: list[Binding[Any]] = []
    conflicts: list[Conflict] = []
    for tp, entries in by_type.items():
        strong = [e for e in entries if not e[1].default] or entries
        first_c, first_b = strong[0]
        for other_c, other_b in strong[1:]:
            if other_b != first_b:
                conflicts.append(
                    Conflict(
                        "resource",
                        type_name(tp),
                        (first_c.label, other_c.label),
                        _hint("resource", type_name(tp), other_c, first_c),
                    )
                )
                break
        chosen.append(first_b)
    return chosen, conflicts
