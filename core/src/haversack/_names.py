"""Name uniqueness: the names a prompt's parts claim, when two claims clash, and the wording.

A prompt's own validation, a pack's check of what it contributes, and the pack system's
conflict report between contributors all decide here, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:
    from ._policy import ToolPolicy
    from ._section import Section

__all__ = [
    "Claim",
    "Claims",
    "Clash",
    "between_contributors",
    "fix_between_contributors",
    "in_prompt",
    "within_contributor",
]

OwnerT = TypeVar("OwnerT")


class Claim(NamedTuple):
    """One name of one ``kind`` (``"section"``, ``"tool"``, ``"policy"``) claimed by ``part``.

    ``path`` is the section that declares it, from the root (a section's own path; ``()``
    for a prompt-wide policy). ``part`` is ``None`` for a section the core makes itself.
    """

    # A tuple, not a dataclass: a prompt of a thousand tools makes a thousand of these.
    kind: str
    name: str
    part: object
    path: tuple[str, ...]

    @property
    def where(self) -> str:
        """The declaring section as messages name it."""
        return ".".join(self.path) or "<prompt>"


#: A clash: the new claim, the earlier claim it clashes with, and who made the earlier one.
Clash = tuple[Claim, Claim, OwnerT]


class Claims(Generic[OwnerT]):
    """The first claim of every name, with who made it: the one rule of what clashes.

    Section keys must be unique among siblings; tool and policy names in the whole prompt.
    Two claims of one name clash, except one policy object governing several sections (the
    same object, not merely an equal name).
    """

    __slots__ = ("_first",)

    def __init__(self) -> None:
        # kind -> name (for a section: (parent path, key)) -> (part, path, owner). Plain
        # tuples: a prompt of a thousand tools records a thousand of these.
        self._first: dict[str, dict[object, tuple[object, tuple[str, ...], OwnerT]]] = {
            "section": {},
            "tool": {},
            "policy": {},
        }

    def add(self, claim: Claim, owner: OwnerT) -> Clash[OwnerT] | None:
        """Record one claim; return the clash it makes, if any."""
        found: list[Clash[OwnerT]] = []
        self._record(claim.kind, claim.name, claim.part, claim.path, owner, found)
        return found[0] if found else None

    def add_tree(
        self,
        sections: Sequence[Section[Any]],
        policies: Sequence[ToolPolicy] = (),
        *,
        owner: OwnerT,
        parent: tuple[str, ...] = (),
    ) -> list[Clash[OwnerT]]:
        """Record every name ``sections`` (their keys, policies, tools and children,
        depth-first) and the prompt-wide ``policies`` claim; return the clashes in prompt
        order."""
        found: list[Clash[OwnerT]] = []
        record = self._record
        for policy in policies:
            record("policy", policy.name, policy, parent, owner, found)

        def visit(items: Sequence[Section[Any]], parent: tuple[str, ...]) -> None:
            for section in items:
                path = (*parent, section.key)
                record("section", section.key, section, path, owner, found)
                for policy in section.policies:
                    record("policy", policy.name, policy, path, owner, found)
                for tool in section.tools:
                    record("tool", tool.name, tool, path, owner, found)
                visit(section.children, path)

        visit(sections, parent)
        return found

    def _record(
        self,
        kind: str,
        name: str,
        part: object,
        path: tuple[str, ...],
        owner: OwnerT,
        found: list[Clash[OwnerT]],
    ) -> None:
        table = self._first[kind]
        key: object = (path[:-1], name) if kind == "section" else name
        first = table.get(key)
        if first is None:
            table[key] = (part, path, owner)
        elif not (kind == "policy" and first[0] is part):
            found.append(
                (Claim(kind, name, part, path), Claim(kind, name, first[0], first[1]), first[2])
            )


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
