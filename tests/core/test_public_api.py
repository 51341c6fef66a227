"""The public surface of ``haversack``: names, homes, version, and a light import."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import haversack

REQUIRED = [
    "Section",
    "MarkdownSection",
    "Prompt",
    "RenderedPrompt",
    "Tool",
    "tool",
    "ToolResult",
    "ToolExample",
    "ToolContext",
    "HaversackError",
    "PromptValidationError",
    "PromptRenderError",
    "ToolValidationError",
    "PromptEvaluationError",
    "DeadlineExceededError",
]


def test_all_is_sorted() -> None:
    assert haversack.__all__ == sorted(haversack.__all__)


@pytest.mark.parametrize("name", haversack.__all__)
def test_every_public_name_is_importable(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from haversack import {name}", namespace)
    assert namespace[name] is getattr(haversack, name)


@pytest.mark.parametrize("name", REQUIRED)
def test_required_names_exist(name: str) -> None:
    assert name in haversack.__all__


# Classes and functions; type aliases (typing objects) have no module of their own.
DEFINED = [
    name
    for name in haversack.__all__
    if isinstance(getattr(haversack, name), type) or inspect.isfunction(getattr(haversack, name))
]


@pytest.mark.parametrize("name", DEFINED)
def test_public_classes_show_a_public_module(name: str) -> None:
    module = getattr(haversack, name).__module__
    if module.startswith("haversack.errors"):
        assert module == "haversack.errors"  # the error tree's own public home
    elif module.startswith("haversack.filesystem"):
        assert module == "haversack.filesystem"  # the filesystem contract's public home
    else:
        assert module == "haversack", f"{name} shows {module}"


def test_model_classes_show_the_package() -> None:
    for cls in (haversack.Prompt, haversack.MarkdownSection, haversack.Tool, haversack.ToolResult):
        assert cls.__module__ == "haversack"


def test_version_matches_the_distribution() -> None:
    assert haversack.__version__ == importlib.metadata.version("haversack")


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = haversack.nope


def test_serde_exposes_parse_dump_schema() -> None:
    serde = importlib.import_module("haversack.serde")
    assert serde.__all__ == ["dump", "parse", "schema", "shared_schema"]
    for name in serde.__all__:
        assert callable(getattr(serde, name))


def test_import_haversack_does_not_import_pydantic() -> None:
    code = (
        "import sys, haversack, haversack.serde, haversack.errors\n"
        "roots = {m.split('.')[0] for m in sys.modules}\n"
        "heavy = sorted(roots & {'pydantic', 'pydantic_core'})\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


def test_filesystem_contract_has_one_public_home() -> None:
    """The protocol and its helpers live in ``haversack.filesystem``; the top level re-exports
    the protocol's names from there."""
    from haversack import filesystem

    assert haversack.Filesystem is filesystem.Filesystem
    assert haversack.normalize_path is filesystem.normalize_path
    assert filesystem.__all__ == sorted(filesystem.__all__)
    for name in filesystem.__all__:
        value = getattr(filesystem, name)
        if isinstance(value, type) or inspect.isfunction(value):
            assert value.__module__ == "haversack.filesystem", name


#: The core, every pack and the demo: each keeps one list of public names, its lazy-export table.
PACKAGES = (
    "haversack",
    "haversack_vfs",
    "haversack_planning",
    "haversack_podman",
    "haversack_mcp",
    "haversack_demo",
)


def _type_checking_imports(package: ModuleType) -> dict[str, str]:
    """``name -> module`` of the ``if TYPE_CHECKING:`` imports of a package's ``__init__``."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
                for alias in stmt.names:
                    # ``X as X`` is what marks a name re-exported for mypy --strict and pyright.
                    assert alias.asname == alias.name, f"import {alias.name} as itself"
                    found[alias.name] = "." * stmt.level + (stmt.module or "")
    return found


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checkers_see_exactly_the_lazy_export_table(name: str) -> None:
    package = importlib.import_module(name)
    assert _type_checking_imports(package) == package._EXPORTS


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_the_lazy_export_table(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__ == sorted(package._EXPORTS)


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from haversack import *", namespace)
    names = {name for name in namespace if name != "__builtins__"}
    assert names == set(haversack._EXPORTS)
