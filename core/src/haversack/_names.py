"""Name uniqueness: the names a prompt's parts claim, when two claims clash, and the wording.

A prompt's own validation, a pack's check of what it contributes, and the pack system's
conflict report between contributors all decide here, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ._policy import ToolPolicy
    from ._section import Section

__all__ = [
    "Claim",
    "Claims",
    "between_contributors",
    "claims",
    "fix_between_contributors",
    "in_prompt",
    "within_contributor",
]

OwnerT = TypeVar("OwnerT")


@dataclass(frozen=True, slots=True)
class Claim:
    """One name of one ``kind`` (``"section"``, ``"tool"``, ``"policy"``) claimed by ``part``.

    ``path`` is the section that declares it, from the root (a section's own path; ``()``
    for a prompt-wide policy). ``part`` is ``None`` for a section the core makes itself.
    """

    kind: str
    name: str
    part: object
    path: tuple[str, ...]

    @property
    def scope(self) -> tuple[str, ...]:
        """Where the name must be unique: a section key among its siblings (under its parent);
        tool and policy names in the whole prompt."""
        return self.path[:-1] if self.kind == "section" else ()

    @property
    def where(self) -> str:
        """The declaring section as messages name it."""
        return ".".join(self.path) or "<prompt>"


def claims(
    sections: Sequence[Section[Any]],
    policies: Sequence[ToolPolicy] = (),
    *,
    parent: tuple[str, ...] = (),
) -> Iterator[Claim]:
    """Every name ``sections`` (their keys, tools, policies and children, depth-first) and the
    prompt-wide ``policies`` claim, in prompt order."""
    for policy in policies:
        yield Claim("policy", policy.name, policy, parent)
    for section in sections:
        path = (*parent, section.key)
        yield Claim("section", section.key, section, path)
        for policy in section.policies:
            yield Claim("policy", policy.name, policy, path)
        for tool in section.tools:
            yield Claim("tool", tool.name, tool, path)
        yield from claims(section.children, parent=path)


class Claims(Generic[OwnerT]):
    """The first claim of every name, with who made it: the one rule of what clashes.

    Two claims of one kind and name in one scope clash, except one policy object governing
    several sections (the same object, not merely an equal name).
    """

    __slots__ = ("_first",)

    def __init__(self) -> None:
        self._first: dict[tuple[str, tuple[str, ...], str], tuple[Claim, OwnerT]] = {}

    def add(self, claim: Claim, owner: OwnerT) -> tuple[Claim, OwnerT] | None:
        """Record ``claim``; return the earlier claim (and its owner) it clashes with, if any."""
        key = (claim.kind, claim.scope, claim.name)
        first = self._first.get(key)
        if first is None:
            self._first[key] = (claim, owner)
            return None
        if claim.kind == "policy" and first[0].part is claim.part:
            return None
        return first


# ---------------------------------------------------------------------------------- wording
def in_prompt(first: Claim, second: Claim) -> str:
    """The sentence for two clashing claims inside one prompt's section tree."""
    if first.kind == "tool":
        return (
            f"Tool name {first.name!r} is declared twice: in section {first.where!r} and in "
            f"section {second.where!r}. Tool names must be unique in a prompt."
        )
    if first.kind == "policy":
        return (
            f"Two different policies are named {first.name!r} (in {first.where!r} and in "
            f"{second.where!r}); policy names must be unique."
        )
    return f"Two sibling sections share the key {first.name!r}; sibling keys must be unique."


def within_contributor(label: str, claim: Claim) -> str:
    """The sentence for a pack (or the caller) claiming one name twice: its own mistake."""
    loose = claim.kind == "section" and claim.part is None
    return (
        f"{label} contributes two {claim.kind}s named {claim.name!r}; "
        + ("its loose tools go in a section keyed by the pack name. " if loose else "")
        + "Names must be unique within the prompt."
    )


def between_contributors(kind: str, name: str, first: str, second: str, fix: str) -> str:
    """The sentence for two contributors claiming one name, with how to fix it."""
    return (
        f"Two contributors claim the {kind} name {name!r}: {first} and {second}. "
        f"Names are never renamed silently. {fix}"
    )


def fix_between_contributors(kind: str, name: str, pack: str | None) -> str:
    """How to resolve a clash in which ``pack`` is a pack (``None``: only the caller's code)."""
    if pack is None:
        return "Rename one of them."
    drop = f"or leave one pack out (HAVERSACK_DISABLE={pack}, or compose(exclude=[{pack!r}]))."
    if kind == "tool":
        return (
            f'To fix it, give one pack a prefix: [tool.haversack.packs.{pack}] prefix = "{pack}_" '
            f'(or rename = {{ {name} = "{pack}_{name}" }}), {drop}'
        )
    if kind == "resource":
        return (
            "To fix it, mark one binding default=True, "
            + drop.removeprefix("or ")
            + " To override a pack's resource, use prompt.bind(resources=...) after composing."
        )
    return f"To fix it, rename your own {kind}, {drop}"
