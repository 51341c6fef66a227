"""Is a pack compatible with the installed core? Decided from metadata, before import."""

from __future__ import annotations

import re

from ._discovery import Candidate, normalize

__all__ = ["core_version", "incompatibility", "prime_core_version", "requirement_on_core"]

_CORE = "haversack"


_known: list[str] = []


def core_version() -> str:
    """The installed version of the ``haversack`` distribution."""
    if _known:
        return _known[0]
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(_CORE)
    except PackageNotFoundError:  # running from a source tree without metadata
        found = "0+unknown"
    _known[:] = [found]
    return found


def prime_core_version(version: str) -> None:
    """Take the core version from the discovery cache (its key covers the core's install)."""
    if not _known:
        _known.append(version)


def requirement_on_core(candidate: Candidate) -> str:
    """The pack's ``Requires-Dist`` specifier on haversack, ``any`` without one, or ``""``.

    Parsed with a small pattern rather than ``packaging.requirements`` (whose import costs
    more than the whole scan); markers, rare here, are evaluated with ``packaging.markers``.
    """
    if candidate.core_spec is not None:
        return candidate.core_spec
    for line in candidate.requires:
        match = _REQUIREMENT.match(line)
        if match is None or normalize(match["name"]) != _CORE:
            continue
        marker = (match["marker"] or "").strip()
        if marker and not _marker_applies(marker):
            continue
        return match["spec"].strip().strip("()").replace(" ", "") or "any"
    return ""


_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?"
    r"\s*(?P<spec>[^;@]*)(?:;(?P<marker>.*))?$"
)


def _marker_applies(marker: str) -> bool:
    from packaging.markers import InvalidMarker, Marker

    try:
        return Marker(marker).evaluate({"extra": ""})
    except InvalidMarker:
        return True


def incompatibility(candidate: Candidate) -> str:
    """Why the pack cannot run on this core (both versions named), or ``""`` if it can."""
    if candidate.verdict is not None:
        return candidate.verdict
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    spec = requirement_on_core(candidate)
    if spec in ("", "any"):
        return ""
    installed = core_version()
    try:
        ok = SpecifierSet(spec).contains(Version(installed), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return ""
    if ok:
        return ""
    return (
        f"{candidate.distribution} {candidate.version} requires haversack{spec}, but "
        f"haversack {installed} is installed; install a release of {candidate.distribution} "
        f"that supports haversack {installed}, or disable the pack."
    )
