"""Token estimates of tool definitions, with the parameter schemas they need cached on disk.

A schema is built by pydantic, whose import costs several times a listing's other work, so
``haversack packs`` would pay it on every run for figures that change only when code does.
The schemas are kept next to the discovery cache, in a file keyed like it on what installs
change; each entry also carries a stamp of the source files that can change it without an
install (the params type's top-level package and the core, for editable installs). A miss,
a stale entry or a params type that is not a module-level class is built as before.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from . import _cache

__all__ = ["token_estimate"]

#: ``json.dumps(serde.schema(None))``: a tool without params, known without building it.
_EMPTY_OBJECT = '{"type":"object","properties":{},"additionalProperties":false}'
_FORMAT = 1
#: As for the discovery cache: a source file this recent may still change within the
#: clock's tick, so a stamp holding it is not stored.
_RACY_NS = 2_000_000_000
#: Stamps of source folders, taken once per process (the walk costs about a millisecond).
_folder_stamps: dict[str, list[int]] = {}


def token_estimate(tools: Sequence[Any]) -> int:
    """``len(json(name, description, schema)) / 4`` summed: a rough context-cost guide."""
    texts = _schema_texts([tool.params_type for tool in tools])
    total = 0
    for tool in tools:
        head = json.dumps(
            {"name": tool.name, "description": tool.description}, separators=(",", ":")
        )
        # The same text as json.dumps({..., "parameters": schema}) with these separators.
        definition = f'{head[:-1]},"parameters":{texts[tool.params_type]}}}'
        total += len(definition) // 4
    return total


def _schema_texts(types: Sequence[type[Any] | None]) -> dict[type[Any] | None, str]:
    """Compact JSON of each type's schema, from the cache file where it is current."""
    texts: dict[type[Any] | None, str] = {None: _EMPTY_OBJECT}
    wanted = [tp for tp in dict.fromkeys(types) if tp is not None]
    if not wanted:
        return texts
    if _cache.disabled():
        texts.update((tp, _build(tp)) for tp in wanted)
        return texts
    key, racy = _cache.install_key()
    path = _cache.cache_file("schemas")
    data = _cache.read_json(path)
    entries: dict[str, Any] = {}
    if isinstance(data, dict) and data.get("format") == _FORMAT and data.get("key") == key:
        found = data.get("schemas")
        entries = found if isinstance(found, dict) else {}
    changed = False
    for tp in wanted:
        name, stamp = _name(tp), _stamp(tp)
        entry = entries.get(name) if name is not None else None
        if isinstance(entry, dict) and entry.get("stamp") == stamp and stamp is not None:
            text = entry.get("schema")
            if isinstance(text, str):
                texts[tp] = text
                continue
        texts[tp] = _build(tp)
        if name is not None and stamp is not None and not racy and not _recent(stamp):
            entries[name] = {"stamp": stamp, "schema": texts[tp]}
            changed = True
    if changed:
        _cache.write_json(path, {"format": _FORMAT, "key": key, "schemas": entries})
    return texts


def _build(tp: type[Any]) -> str:
    from haversack import serde  # imports pydantic when it builds a schema

    return json.dumps(serde.schema(tp), separators=(",", ":"))


def _name(tp: type[Any]) -> str | None:
    """``module:qualname`` when that finds ``tp`` again, else ``None`` (not cached).

    Classes made at run time (``json_schema_params``, a class in a function) share a name
    with others or carry their schema in memory, so only module-level classes are cached.
    """
    module = sys.modules.get(getattr(tp, "__module__", ""))
    qualname = getattr(tp, "__qualname__", "")
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not tp or module is None or not getattr(module, "__file__", None):
        return None
    return f"{tp.__module__}:{qualname}"


def _stamp(tp: type[Any]) -> list[Any] | None:
    """What can change the schema without an install: the params type's file, and the
    newest mtime, count and total size of the ``.py`` files of its top-level package and of
    the core (where ``serde`` builds it). ``None`` when they cannot be read."""
    stamp: list[Any] = [getattr(sys.modules.get(tp.__module__), "__file__", None)]
    for module in (sys.modules.get(tp.__module__.partition(".")[0]), sys.modules.get("haversack")):
        file = getattr(module, "__file__", None)
        if not file:
            return None
        folder = os.path.dirname(file) if os.path.basename(file) == "__init__.py" else file
        found = _folder_stamp(folder)
        if found is None:
            return None
        stamp += found
    return stamp


def _folder_stamp(folder: str) -> list[int] | None:
    found = _folder_stamps.get(folder)
    if found is not None:
        return found
    newest = count = size = 0
    try:
        if os.path.isfile(folder):  # a single-module distribution
            st = os.stat(folder)
            newest, count, size = st.st_mtime_ns, 1, st.st_size
        pending = [] if count else [folder]
        while pending:
            with os.scandir(pending.pop()) as listing:
                for item in listing:
                    if item.is_dir(follow_symlinks=False):
                        if item.name != "__pycache__":
                            pending.append(item.path)
                    elif item.name.endswith(".py"):
                        st = item.stat()
                        newest = max(newest, st.st_mtime_ns)
                        count += 1
                        size += st.st_size
    except OSError:
        return None
    found = _folder_stamps[folder] = [newest, count, size]
    return found


def _recent(stamp: list[Any]) -> bool:
    """A stamp holding an mtime from the last clock ticks (see :data:`_RACY_NS`)."""
    newest = max(stamp[1], stamp[4])
    return bool(newest > time.time_ns() - _RACY_NS)
