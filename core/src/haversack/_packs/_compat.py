"""Is a pack compatible with the installed core? Decided from metadata, before import."""

from __future__ import annotations

import functools

from ._discovery import Candidate, normalize

__all__ = ["core_version", "incompatibility", "requirement_on_core"]

_CORE = "haversack"


@functools.cache
def core_version() -> str:
    """The installed version of the ``haversack`` distribution."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(_CORE)
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0+unknown"


def requirement_on_core(candidate: Candidate) -> str:
    """The pack's ``Requires-Dist`` entry on haversack, or ``""`` when it declares none."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line in candidate.requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if normalize(req.name) != _CORE:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        return str(req.specifier) or "any"
    return ""


def incompatibility(candidate: Candidate) -> str:
    """Why the pack cannot run on this core (both versions named), or ``""`` if it can."""
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
