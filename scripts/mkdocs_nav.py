"""mkdocs hook: keep only nav entries whose page exists, and expand ``dir/*.md`` globs.

Pages are written by several people at once; listing them all in ``mkdocs.yml`` up front keeps
the order in one place without breaking ``mkdocs build --strict`` while some are missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _title(path: Path, docs_dir: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").replace("_", " ").capitalize()


def _filter(items: list[Any], docs_dir: Path) -> list[Any]:
    kept: list[Any] = []
    for item in items:
        if isinstance(item, dict):
            ((title, target),) = item.items()
        else:
            title, target = None, item
        if isinstance(target, list):
            children = _filter(target, docs_dir)
            if children:
                kept.append({title: children} if title else children)
        elif isinstance(target, str) and "://" in target:
            kept.append(item)
        elif isinstance(target, str) and any(c in target for c in "*?["):
            pages = sorted(p for p in docs_dir.glob(target) if p.is_file())
            entries = [{_title(p, docs_dir): p.relative_to(docs_dir).as_posix()} for p in pages]
            if entries:
                kept.append({title: entries} if title else entries)
        elif isinstance(target, str) and (docs_dir / target).is_file():
            kept.append(item)
    return kept


def on_config(config: Any) -> Any:
    """Rewrite ``config['nav']`` before mkdocs validates it."""
    if config.get("nav"):
        config["nav"] = _filter(config["nav"], Path(config["docs_dir"]))
    return config
