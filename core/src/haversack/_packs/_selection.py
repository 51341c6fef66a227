"""Which packs to load: allowlists and denylists from code, environment and config file."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._discovery import Candidate, normalize

__all__ = ["Selection", "closest", "env_flag"]

ENV_ALLOW = "HAVERSACK_PACKS"
ENV_DENY = "HAVERSACK_DISABLE"


def env_flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """``1``/``true``/``yes``/``on`` (any case) in the environment variable ``name``."""
    value = (os.environ if environ is None else environ).get(name, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class Selection:
    """An optional allowlist and a denylist of pack or distribution names.

    The allowlist comes from the first of: the ``packs=`` argument, ``HAVERSACK_PACKS``, the
    config file's ``packs``/``enable`` list. A set-but-empty allowlist selects nothing.
    Denylists add up: ``exclude=``, ``HAVERSACK_DISABLE`` and the file's ``disable``; ``*``
    disables every pack. Names match the entry-point (pack) name or the distribution name.
    """

    allow: tuple[str, ...] | None = None
    allow_source: str = ""
    deny: tuple[str, ...] = ()
    #: Where each denylist entry came from, in ``deny`` order (for messages).
    deny_sources: tuple[str, ...] = ()

    @classmethod
    def resolve(
        cls,
        *,
        packs: Sequence[str] | None,
        exclude: Iterable[str],
        file_packs: Sequence[str] | None,
        file_disable: Iterable[str],
        file_label: str,
        environ: Mapping[str, str] | None = None,
    ) -> Selection:
        """Combine the three sources as documented on the class."""
        env = os.environ if environ is None else environ
        allow: tuple[str, ...] | None = None
        source = ""
        if packs is not None:
            if isinstance(packs, str):
                packs = _split(packs)
            allow, source = tuple(packs), "packs= (--pack)"
        elif ENV_ALLOW in env:
            allow, source = _split(env[ENV_ALLOW]), ENV_ALLOW
        elif file_packs is not None:
            allow, source = tuple(file_packs), file_label
        if isinstance(exclude, str):
            exclude = _split(exclude)
        sources = (
            (tuple(exclude), "exclude= (--disable)"),
            (_split(env.get(ENV_DENY, "")), ENV_DENY),
            (tuple(file_disable), f"{file_label} disable"),
        )
        deny = tuple(name for names, _ in sources for name in names)
        where = tuple(label for names, label in sources for _ in names)
        return cls(allow, source, deny, where)

    def why_not(self, candidate: Candidate) -> str:
        """Why ``candidate`` is left out, or ``""`` when it is selected."""
        names = {candidate.name, normalize(candidate.distribution)}
        if "*" in self.deny:
            return "all packs are disabled ('*' in the denylist)"
        hit = next((d for d in self.deny if d in names or normalize(d) in names), None)
        if hit is not None:
            return f"disabled by name {hit!r}"
        if self.allow is None:
            return ""
        if any(a in names or normalize(a) in names for a in self.allow):
            return ""
        return f"not in the allowlist from {self.allow_source}"

    def unknown(self, candidates: Sequence[Candidate]) -> list[str]:
        """Allow- and denylisted names that match no installed pack (each a problem
        sentence): a misspelt deny entry would otherwise silently leave the pack on."""
        known = {c.name for c in candidates} | {normalize(c.distribution) for c in candidates}
        installed = ", ".join(sorted({c.name for c in candidates})) or "none"

        def missing(name: str) -> bool:
            return name not in known and normalize(name) not in known

        found = [
            f"{self.allow_source} names {name!r}, but no installed pack or distribution is "
            f"called that{closest(name, known)} (installed packs: {installed}); install it or "
            "fix the spelling."
            for name in self.allow or ()
            if missing(name)
        ]
        sources = self.deny_sources or ("the denylist",) * len(self.deny)
        found += [
            f"{source} names {name!r} to disable, but no installed pack or distribution is "
            f"called that{closest(name, known)} (installed packs: {installed}), so it would "
            "disable nothing; fix the spelling or remove it."
            for name, source in zip(self.deny, sources, strict=False)
            if name != "*" and missing(name)
        ]
        return found

    def names(self, candidate: Candidate) -> bool:
        """Whether the allowlist names ``candidate`` (by pack or distribution name)."""
        if not self.allow:
            return False
        names = {candidate.name, normalize(candidate.distribution)}
        return any(a in names or normalize(a) in names for a in self.allow)


def closest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'sqlite'?)`` for the installed name nearest a typo, else ``""``."""
    import difflib  # only for a message

    match = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""
