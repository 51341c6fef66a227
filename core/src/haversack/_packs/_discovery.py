"""Find packs from installed distributions' entry points, without importing them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint

__all__ = ["GROUP", "Candidate", "LightEntryPoint", "normalize", "scan"]

#: The entry-point group of packs; the entry-point name is the pack name.
GROUP = "haversack"

#: Where to look for distributions; ``None`` means ``sys.path``. Tests point it at a folder
#: of fake ``*.dist-info`` directories.
search_path: list[str] | None = None

_NORMALIZE = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """PEP 503 normalisation, so ``Haversack_VFS`` and ``haversack-vfs`` match."""
    return _NORMALIZE.sub("-", name).lower()


class LightEntryPoint:
    """An entry point rebuilt from the discovery cache, loadable without importlib.metadata."""

    __slots__ = ("group", "name", "value")

    def __init__(self, name: str, value: str, group: str) -> None:
        self.name = name
        self.value = value
        self.group = group

    def __repr__(self) -> str:
        return f"LightEntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"

    def load(self) -> Any:
        """Import ``module`` and resolve ``:attr.path``, as ``EntryPoint.load`` does."""
        import importlib

        match = _ENTRY_POINT_VALUE.match(self.value)
        if match is None:
            raise ValueError(f"Malformed entry point value {self.value!r} for {self.name!r}")
        obj: Any = importlib.import_module(match["module"])
        for attr in (match["attr"] or "").split("."):
            if attr:
                obj = getattr(obj, attr)
        return obj


#: ``module[:attr.path] [extras]``, the pattern ``importlib.metadata.EntryPoint`` uses.
_ENTRY_POINT_VALUE = re.compile(
    r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pack's entry point and the distribution that declares it (nothing imported yet)."""

    name: str
    module: str
    distribution: str
    version: str
    requires: tuple[str, ...]
    entry_point: EntryPoint | LightEntryPoint
    #: Filled from the discovery cache: the requirement on the core and the verdict.
    core_spec: str | None = None
    verdict: str | None = None

    @property
    def label(self) -> str:
        """``pack 'vfs' (haversack-vfs 0.1.0)``."""
        return f"pack {self.name!r} ({self.distribution} {self.version})"


def scan() -> list[Candidate]:
    """Every ``haversack`` entry point of every distribution, in pack-name order.

    A distribution found twice on the path (the same folder listed twice, or a lib/lib64
    symlink) is taken once, the first one, as ``import`` would. Only the ``METADATA`` of
    distributions that declare a pack is read, and only its header.
    """
    from importlib.metadata import distributions

    dists = distributions() if search_path is None else distributions(path=search_path)
    seen: set[str] = set()
    found: list[Candidate] = []
    for dist in dists:
        key = _dist_key(dist)
        if key in seen:
            continue
        seen.add(key)
        eps = [ep for ep in dist.entry_points if ep.group == GROUP]
        if not eps:
            continue
        name, version, requires = _header(dist)
        for ep in eps:
            found.append(Candidate(ep.name, ep.value, name, version, requires, ep))
    found.sort(key=lambda c: (c.name, c.distribution))
    return found


def _dist_key(dist: Distribution) -> str:
    # ``_normalized_name`` comes from the folder name (no file read); it is what
    # importlib.metadata.entry_points() itself deduplicates on.
    key = getattr(dist, "_normalized_name", None)
    if isinstance(key, str):
        return key
    return normalize(dist.metadata["Name"] or "")


def _header(dist: Distribution) -> tuple[str, str, tuple[str, ...]]:
    """Name, Version and Requires-Dist from the METADATA header (no full email parse)."""
    name = version = ""
    requires: list[str] = []
    for line in _header_lines(dist):
        if not line:
            break  # the body (long description) starts after the first blank line
        key, _, value = line.partition(":")
        if key == "Name":
            name = value.strip()
        elif key == "Version":
            version = value.strip()
        elif key == "Requires-Dist":
            requires.append(value.strip())
    return name or "unknown", version or "unknown", tuple(requires)


def _header_lines(dist: Distribution) -> list[str]:
    # A wheel's METADATA can carry a long README after the header; read only the header.
    # os.path and one open() rather than pathlib and is_file(): this runs once per pack on
    # every uncached listing, and the stat and path objects were most of its cost.
    folder = getattr(dist, "_path", None)
    if folder is not None:
        lines = []
        try:
            path = os.path.join(os.fspath(folder), "METADATA")
            # errors="replace": one bad byte in a third party's metadata must not stop listing.
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line in ("\n", "\r\n"):
                        break
                    lines.append(line.rstrip("\r\n"))
        except (OSError, TypeError):
            pass  # not a folder of files (a zip, an egg): ask the distribution
        else:
            return lines
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    return text.splitlines()
