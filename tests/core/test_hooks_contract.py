"""Every hook has a docstring, a documented exact signature, and a test_hook_<name> test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from haversack import MarkdownSection, compose, discover, hookspecs
from haversack._packs import _discovery
from haversack._packs._commands import COMMAND_HOOKS
from haversack._packs._contribution import HOOKS
from haversack._packs._manager import new_manager

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(new_manager().hook.__dict__.items())


def _signature(caller) -> str:
    return f"{caller.name}({', '.join(caller.spec.argnames)})"


@pytest.mark.parametrize(("name", "caller"), SPECS, ids=[n for n, _ in SPECS])
def test_hook_has_docstring_and_exact_signature_heading(name, caller):
    assert (caller.spec.function.__doc__ or "").strip(), f"{name} has no docstring"
    docs = (ROOT / "docs" / "hooks.md").read_text()
    assert f"## `{_signature(caller)}`" in docs


def test_hook_order_covers_every_spec():
    assert sorted((*HOOKS, *COMMAND_HOOKS)) == sorted(name for name, _ in SPECS)


@pytest.mark.parametrize("name", [n for n, _ in SPECS])
def test_every_hook_is_exercised_by_a_test(name):
    tests = "".join(p.read_text() for p in (ROOT / "tests" / "core").glob("test_*.py"))
    assert re.search(rf"def test_hook_{name}\w*\(", tests), f"no test_hook_{name}* test"


PLUGIN_FILES = sorted(
    [*ROOT.glob("plugins/*/src/*/plugin.py"), *ROOT.glob("examples/*/src/*/plugin.py")]
)


@pytest.mark.parametrize("path", PLUGIN_FILES, ids=lambda p: p.parent.name)
def test_plugin_modules_hold_only_hook_functions_marked_one_way(path):
    """One style in every pack: module-level ``@haversack.hookimpl`` functions, nothing else."""
    specs = {name for name, _ in SPECS}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        assert isinstance(node, ast.FunctionDef), f"{path}: {ast.unparse(node)[:60]!r}"
        assert [ast.unparse(d) for d in node.decorator_list] == ["haversack.hookimpl"], node.name
        assert node.name in specs, f"{path}: {node.name} is not a hook"


def test_every_distribution_has_a_plugin_module():
    assert len(PLUGIN_FILES) == 5


def test_hookimpl_marker_is_the_projects():
    assert hookspecs.hookimpl.project_name == hookspecs.PROJECT == _discovery.GROUP


DOC_EXAMPLE = """
from dataclasses import dataclass
from haversack import MarkdownSection, Tool, ToolResult
from haversack.hookspecs import hookimpl

def _greet(params, *, context):
    return ToolResult.ok(message="Hello!")

greet = Tool[None, None](name="greet", description="Say hello.", handler=_greet)
wave = Tool[None, None](name="wave", description="Wave.", handler=_greet)

@dataclass(frozen=True)
class GreetOptions:
    greeting: str = "Hello"

@hookimpl
def config_type():
    return GreetOptions

@hookimpl
def register_sections(register, config):
    register(MarkdownSection(
        title="Greeting", key="greeting",
        template="Call ${tool:greet} when the user arrives; say " + config.greeting + ".",
        tools=[greet],
    ))

@hookimpl
def register_tools(register):
    register(wave)
"""


def test_hook_register_sections_passes_config_and_keeps_references(site):
    site.add("greet", DOC_EXAMPLE)
    text = compose(ns="t", key="k", config={"greet": {"greeting": "Hi"}}).render().text
    assert "Call greet when the user arrives; say Hi." in text


def test_hook_register_tools_gathers_loose_tools_after_pack_sections(site):
    site.add("greet", DOC_EXAMPLE)
    prompt = compose(ns="t", key="k", sections=[MarkdownSection(title="A", key="a", template="a")])
    assert [s.key for s in prompt.sections] == ["a", "greeting", "greet"]
    assert discover(load=True)["greet"].tools == ("greet", "wave")
