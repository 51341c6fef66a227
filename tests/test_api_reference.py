"""The API reference (docs/api.md) documents every public name of every public package.

A name counts as documented when the page has a ``::: package.Name`` entry for it (or for the
same object under another public package), when a ``::: package`` module entry covers it (a
class or function in that package's literal ``__all__``: mkdocstrings renders those), or, for a
constant or type alias, when some docs page names it in backticks.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGES = (
    "haversack",
    "haversack.errors",
    "haversack.filesystem",
    "haversack.agent",
    "haversack.server",
    "haversack.testing",
    "haversack.adapters",
    "haversack.adapters.openai",
    "haversack.adapters.anthropic",
    "haversack.adapters.mcp",
    "haversack.hookspecs",
    "haversack.reducers",
    "haversack.serde",
    "haversack.lazy",
    "haversack.cli",
    "haversack_planning",
    "haversack_vfs",
    "haversack_podman",
    "haversack_mcp",
    "haversack_demo",
)


def _documented() -> tuple[set[str], str]:
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^::: ([\w.]+)\s*$", page, re.MULTILINE))
    everything = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    return entries, everything


@cache
def _literal_all(package: str) -> bool:
    """Whether ``package`` spells ``__all__`` as a literal list: only then can mkdocstrings
    (which reads the source, not the running module) render its members from a module entry."""
    source = inspect.getsource(importlib.import_module(package))
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return isinstance(node.value, ast.List)
    return False


def _covered(package: str, name: str, entries: set[str], text: str) -> bool:
    obj = getattr(importlib.import_module(package), name)
    if f"{package}.{name}" in entries:
        return True
    rendered = inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj)
    for entry in entries:
        module, _, attr = entry.rpartition(".")
        if entry in PACKAGES and rendered and _literal_all(entry):
            owner = importlib.import_module(entry)
            if name in owner.__all__ and getattr(owner, name) is obj:
                return True
        elif (
            module in PACKAGES
            and attr == name
            and rendered
            and getattr(importlib.import_module(module), attr, None) is obj
        ):
            return True
    return not rendered and (f"`{name}`" in text or f"`{package}.{name}`" in text)


def test_every_public_name_is_in_the_reference():
    entries, text = _documented()
    missing = [
        f"{package}.{name}"
        for package in PACKAGES
        for name in importlib.import_module(package).__all__
        if not _covered(package, name, entries, text)
    ]
    assert missing == [], (
        f"{len(missing)} public names are not documented: add a '::: name' entry to "
        f"docs/api.md (or name the constant in a docs page): {missing}"
    )


def test_every_reference_entry_names_something_real():
    entries, _ = _documented()
    for entry in entries:
        module, _, attr = entry.rpartition(".")
        if entry in PACKAGES:
            continue
        assert module in PACKAGES, f"docs/api.md documents {entry} outside a public package"
        assert hasattr(importlib.import_module(module), attr), f"{entry} does not exist"
