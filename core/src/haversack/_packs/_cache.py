"""A discovery cache: the scan and compatibility verdicts, keyed on what installs change.

A warm hit reads one small JSON file and stats the search path: it imports neither
``importlib.metadata`` nor ``packaging``. The key is the interpreter plus, for every search
path entry, its listing of ``*.dist-info``/``*.egg-info``/``*.egg-link``/``*.pth`` names with
their mtimes (and each ``entry_points.txt``'s), so installing, removing or upgrading a
distribution (the core included: its ``.dist-info`` name carries its version) changes the
key. Any problem with the cache file (missing, corrupt, unwritable) silently falls back to
a fresh scan.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
from typing import Any

from . import _compat, _discovery
from ._discovery import Candidate, LightEntryPoint

__all__ = [
    "ENV_CACHE_DIR",
    "ENV_NO_CACHE",
    "cache_dir",
    "cache_file",
    "disabled",
    "install_key",
    "read_json",
    "scan",
    "write_json",
]

ENV_CACHE_DIR = "HAVERSACK_CACHE_DIR"
ENV_NO_CACHE = "HAVERSACK_NO_CACHE"
_FORMAT = 1
_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth")
#: An mtime this close to now may still change within the same clock tick (like git's
#: "racy" index entries): a key holding one is not stored, so a cache is never trusted
#: for a folder that is being written to right now.
_RACY_NS = 2_000_000_000
#: Files kept in the cache folder (one per interpreter and search path); the least recently
#: written beyond this are removed when a new one is stored, so the folder stays small.
MAX_FILES = 32


def cache_dir() -> str:
    """``$HAVERSACK_CACHE_DIR``, else ``$XDG_CACHE_HOME/haversack``, else ``~/.cache/haversack``."""
    explicit = os.environ.get(ENV_CACHE_DIR, "")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME", "") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "haversack")


def disabled() -> bool:
    """``$HAVERSACK_NO_CACHE`` is set: every cache of this folder is bypassed."""
    return os.environ.get(ENV_NO_CACHE, "").strip() not in ("", "0")


def install_key() -> tuple[list[Any], bool]:
    """What installs change (see the module docstring) and whether it is too recent to trust.

    Other caches of this folder key on it too: what is cached is then redone after any
    install, upgrade or removal on the search path.
    """
    return _key()


def cache_file(kind: str) -> str:
    """The cache file of ``kind`` (``discovery``, ``schemas``) for this interpreter and path."""
    return _file(kind)


def scan() -> list[Candidate]:
    """:func:`haversack._packs._discovery.scan`, served from the cache when it is current."""
    if disabled():
        return _discovery.scan()
    try:
        key, racy = _key()
        path = _file()
    except (OSError, ValueError):
        return _discovery.scan()
    cached = _load(path, key)
    if cached is not None:
        return cached
    found = _discovery.scan()
    if racy:
        return found
    # The verdicts are worked out once, stored, and returned with the candidates, so the
    # compose that asked does not parse the requirements again.
    judged = [_judged(c) for c in found]
    _store(path, key, judged)
    return judged


def _judged(candidate: Candidate) -> Candidate:
    """``candidate`` with its requirement on the core and its verdict filled in."""
    with_spec = dataclasses.replace(candidate, core_spec=_compat.requirement_on_core(candidate))
    return dataclasses.replace(with_spec, verdict=_compat.incompatibility(with_spec))


def _entries() -> list[str]:
    entries = sys.path if _discovery.search_path is None else _discovery.search_path
    return [entry or os.getcwd() for entry in entries]


def _file(kind: str = "discovery") -> str:
    import zlib

    # One file per interpreter and path, so projects run side by side do not evict each other.
    ident = "\0".join([sys.executable, *_entries()])
    tag = zlib.crc32(ident.encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir(), f"{kind}-{tag:08x}.json")


def _key() -> tuple[list[Any], bool]:
    """The cache key and whether any mtime in it is too recent to trust."""
    newest = 0
    parts: list[Any] = []
    for entry in _entries():
        folder = entry
        try:
            scanner = os.scandir(folder)
        except NotADirectoryError:  # a zip file on the path
            try:
                st = os.stat(folder)
            except OSError:
                parts.append([entry, None])
                continue
            newest = max(newest, st.st_mtime_ns)
            parts.append([entry, st.st_mtime_ns, st.st_size])
            continue
        except OSError:
            parts.append([entry, None])
            continue
        listing = []
        with scanner:
            for item in scanner:
                if not item.name.endswith(_SUFFIXES):
                    continue
                mtime = item.stat().st_mtime_ns
                newest = max(newest, mtime)
                row: list[Any] = [item.name, mtime]
                if item.name.endswith(".dist-info"):
                    try:
                        eps = os.stat(os.path.join(item.path, "entry_points.txt")).st_mtime_ns
                    except OSError:
                        row.append(None)
                    else:
                        newest = max(newest, eps)
                        row.append(eps)
                listing.append(row)
        listing.sort()
        parts.append([entry, listing])
    key = [_FORMAT, sys.executable, sys.version, parts]
    return key, newest > time.time_ns() - _RACY_NS


def _load(path: str, key: list[Any]) -> list[Candidate] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if data["key"] != key:
            return None
        rows = data["candidates"]
        found = []
        for row in rows:
            stamp = row["metadata_mtime"]
            if stamp is not None and os.stat(row["metadata"]).st_mtime_ns != stamp:
                return None
            found.append(
                Candidate(
                    row["name"],
                    row["module"],
                    row["distribution"],
                    row["version"],
                    tuple(row["requires"]),
                    LightEntryPoint(row["name"], row["module"], _discovery.GROUP),
                    core_spec=row["core_spec"],
                    verdict=row["verdict"],
                )
            )
        _compat.prime_core_version(data["core_version"])
        return found
    except Exception:  # noqa: BLE001 - a corrupt or foreign file is simply not a hit
        return None


def _store(path: str, key: list[Any], found: list[Candidate]) -> None:
    """Write ``found`` (judged: see :func:`_judged`) under ``key``; never raises."""
    try:
        rows = []
        for c in found:
            metadata, stamp = _metadata_stamp(c)
            rows.append(
                {
                    "name": c.name,
                    "module": c.module,
                    "distribution": c.distribution,
                    "version": c.version,
                    "requires": list(c.requires),
                    "metadata": metadata,
                    "metadata_mtime": stamp,
                    "core_spec": c.core_spec,
                    "verdict": c.verdict,
                }
            )
        payload = {"key": key, "core_version": _compat.core_version(), "candidates": rows}
    except Exception:  # noqa: BLE001 - a candidate we cannot describe: the scan result still stands
        return
    write_json(path, payload)


def read_json(path: str) -> Any:
    """The JSON value in ``path``, or ``None`` if it is missing or not JSON (never raises)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def write_json(path: str, payload: object) -> None:
    """Replace ``path`` with ``payload`` atomically and prune its kind; never raises."""
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(folder, os.path.basename(path).partition("-")[0] + "-")
    except Exception:  # noqa: BLE001 - unwritable cache folder, full disk...: nothing is cached
        return


def _prune(folder: str, prefix: str = "discovery-") -> None:
    """Remove the least recently written ``prefix*.json`` files beyond :data:`MAX_FILES`."""
    stamped = []
    with os.scandir(folder) as listing:
        for item in listing:
            if item.name.startswith(prefix) and item.name.endswith(".json"):
                with contextlib.suppress(OSError):
                    stamped.append((item.stat().st_mtime_ns, item.path))
    stamped.sort(reverse=True)
    for _, old in stamped[MAX_FILES:]:
        with contextlib.suppress(OSError):  # a concurrent process may have removed it
            os.unlink(old)


def _metadata_stamp(candidate: Candidate) -> tuple[str | None, int | None]:
    folder = getattr(candidate.entry_point, "dist", None)
    folder = getattr(folder, "_path", None)
    if folder is None:
        return None, None
    path = os.path.join(os.fspath(folder), "METADATA")
    try:
        return path, os.stat(path).st_mtime_ns
    except OSError:
        return path, None
