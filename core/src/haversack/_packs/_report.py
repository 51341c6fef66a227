"""``PackInfo`` and ``PackReport``: what was found, what loaded, and what went wrong."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from haversack._names import between_contributors

__all__ = ["FAILED", "Conflict", "PackInfo", "PackReport", "PackStatus"]

#: ``loaded``: imported and its hooks ran; ``not-imported``: selected and compatible but only
#: listed; ``disabled``: left out by selection; ``incompatible``: its ``Requires-Dist`` on
#: haversack excludes the installed core; ``broken``: its import or a hook failed;
#: ``misconfigured``: the options you gave it are wrong (your mistake, not the pack's);
#: ``timed-out``: its import did not finish within the listing commands' time budget.
PackStatus = Literal[
    "loaded", "not-imported", "disabled", "incompatible", "broken", "misconfigured", "timed-out"
]

#: The statuses that make a report not ``ok``.
FAILED: tuple[str, ...] = ("broken", "incompatible", "misconfigured", "timed-out")


@dataclass(frozen=True, slots=True)
class PackInfo:
    """One pack (or built-in plugin) and what it contributes.

    The contribution fields are filled only for ``loaded`` packs. ``token_estimate`` is
    ``len(json(name, description, parameter schema)) / 4`` summed over the pack's tools: a
    rough guide to the context a pack's tool definitions cost, not a tokenizer count.
    ``tokens_saved`` is the same estimate for the tools its ``tools``/``exclude_tools``
    options dropped (``None`` when nothing was dropped or no estimate was asked for).
    """

    name: str
    distribution: str
    version: str
    status: PackStatus
    reason: str = ""
    module: str = ""
    requires: str = ""
    builtin: bool = False
    sections: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    token_estimate: int | None = None
    tokens_saved: int | None = None
    removed_tools: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``pack 'vfs' (haversack-vfs 0.1.0)``: how messages name this pack."""
        if self.builtin:
            return self.name
        return f"pack {self.name!r} ({self.distribution} {self.version})"

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form (used by ``haversack packs --json``)."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "reason": self.reason,
            "module": self.module,
            "requires": self.requires,
            "builtin": self.builtin,
            "sections": list(self.sections),
            "tools": list(self.tools),
            "policies": list(self.policies),
            "resources": list(self.resources),
            "token_estimate": self.token_estimate,
            "tokens_saved": self.tokens_saved,
            "removed_tools": list(self.removed_tools),
        }


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two contributors claim one name of one ``kind`` (pack, section, tool, policy, resource)."""

    kind: str
    name: str
    contributors: tuple[str, str]
    hint: str

    @property
    def message(self) -> str:
        """The full sentence, as :class:`~haversack.errors.NameConflictError` carries it."""
        first, second = self.contributors
        return between_contributors(self.kind, self.name, first, second, self.hint)

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "kind": self.kind,
            "name": self.name,
            "contributors": list(self.contributors),
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class PackReport:
    """The packs found, in name order, with conflicts and configuration problems.

    Iterating yields the :class:`PackInfo` entries; ``report["vfs"]`` finds one by name.
    """

    packs: tuple[PackInfo, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    problems: tuple[str, ...] = field(default=())

    def __iter__(self) -> Iterator[PackInfo]:
        return iter(self.packs)

    def __len__(self) -> int:
        return len(self.packs)

    def __getitem__(self, name: str) -> PackInfo:
        for info in self.packs:
            if info.name == name:
                return info
        raise KeyError(name)

    @property
    def ok(self) -> bool:
        """No selected pack in a :data:`FAILED` status, no conflict, no configuration problem."""
        bad = any(p.status in FAILED for p in self.packs)
        return not (bad or self.conflicts or self.problems)

    def visible(self, *, include_builtin: bool = False) -> tuple[PackInfo, ...]:
        """The packs to list: built-in plugins only when asked."""
        return tuple(p for p in self.packs if include_builtin or not p.builtin)

    def as_dict(self, *, include_builtin: bool = False) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "packs": [p.as_dict() for p in self.visible(include_builtin=include_builtin)],
            "conflicts": [c.as_dict() for c in self.conflicts],
            "problems": list(self.problems),
            "ok": self.ok,
        }
