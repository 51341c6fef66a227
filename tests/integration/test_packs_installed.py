"""Real installs: the core and throwaway packs in a fresh virtual environment, driven by
subprocess through ``compose`` and the ``haversack`` command."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

# Re-exported: the reliability suite reuses the environment helpers from this module.
from .conftest import FIXTURES, ROOT, Venv

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FIXTURES", "ROOT", "Venv"]


def test_packs_reports_every_status(venv: Venv) -> None:
    result = venv.cli("packs", "--json")
    assert result.returncode == 0, result.stderr
    packs = {p["name"]: p for p in json.loads(result.stdout)["packs"]}
    assert packs["good"]["status"] == "loaded"
    assert packs["good"]["distribution"] == "hvit-good"
    assert packs["good"]["token_estimate"] > 0
    assert packs["broken"]["status"] == "broken"
    assert "hvit_this_module_does_not_exist" in packs["broken"]["reason"]
    assert packs["incompatible"]["status"] == "incompatible"
    assert "haversack<0.0.1" in packs["incompatible"]["reason"]
    assert "haversack 0.1.0 is installed" in packs["incompatible"]["reason"]


def test_discover_imports_no_pack(venv: Venv) -> None:
    result = venv.script(
        "import sys; from haversack import discover\n"
        "r = discover(); assert len(r) == 7, r\n"
        "assert not [m for m in sys.modules if m.startswith('hvit_')]\n"
        "assert 'pluggy' not in sys.modules\n"
    )
    assert result.returncode == 0, result.stderr


def test_compose_raises_for_the_clash_naming_both(venv: Venv) -> None:
    result = venv.script(
        "from haversack import compose\n"
        "from haversack.errors import NameConflictError\n"
        "try:\n    compose(ns='t', key='k')\n"
        "except NameConflictError as e:\n    print(e.kind, e.name, '|'.join(e.contributors))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "tool fetch pack 'clasha' (hvit-clash-a 0.3.0)|pack 'clashb' (hvit-clash-b 0.3.0)"
    )
    assert "left out pack 'broken'" in result.stderr


def test_compose_with_exclusion_fail_soft(venv: Venv) -> None:
    result = venv.script(
        "from haversack import compose\n"
        "p = compose(ns='t', key='k', exclude=['clashb', 'store'],\n"
        "            config={'good': {'greeting': 'Hi'}})\n"
        "r = p.render(); print([t.name for t in r.tools]); print(r.text)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "['fetch', 'greet']" in result.stdout  # packs in name order: clasha, good
    assert "Hi! Use greet to greet people." in result.stdout


def test_prefix_from_pyproject_resolves_the_clash(venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.haversack]\ndisable = ["broken", "incompatible", "store"]\n\n'
        '[tool.haversack.packs.clashb]\nprefix = "b_"\n\n'
        '[tool.haversack.packs.good]\ngreeting = "Howdy"\n'
    )
    result = venv.cli("render", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["tools"] == ["fetch", "b_fetch", "greet"]
    assert "Howdy!" in data["text"]
    assert result.stderr == ""  # nothing left out: the broken and incompatible are disabled


def test_call_a_tool(venv: Venv) -> None:
    result = venv.cli("call", "greet", '{"name": "Ada"}', "-p", "good")
    assert (result.returncode, result.stdout) == (0, "Hello, Ada!\n"), result.stderr
    result = venv.cli("call", "greet", "{}", "-p", "good")
    assert result.returncode == 1
    assert "missing required field 'name'" in result.stdout


def test_check_for_ci(venv: Venv) -> None:
    result = venv.cli("check")
    assert result.returncode == 1
    assert "pack 'broken' (hvit-broken 0.3.0) is broken" in result.stdout
    assert "is incompatible" in result.stdout
    assert "tool name 'fetch'" in result.stdout
    good = venv.cli("check", "-p", "good", "--strict")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "OK (1 loaded: good; 0 errors)" in good.stdout


def test_strict_env_and_trace(venv: Venv) -> None:
    strict = venv.cli("render", "-p", "good", "-p", "broken", HAVERSACK_STRICT="1")
    assert strict.returncode == 2
    assert strict.stderr.startswith("haversack: error: pack 'broken' (hvit-broken 0.3.0)")
    assert "Traceback" not in strict.stderr
    traced = venv.cli("render", HAVERSACK_PACKS="good", HAVERSACK_TRACE="1")
    assert traced.returncode == 0
    assert (
        "haversack trace: good.config_type -> <class 'hvit_good.plugin.Options'>" in traced.stderr
    )
    assert "haversack trace: good.register_sections -> 1 registered: greeting" in traced.stderr


def test_python_dash_m(venv: Venv) -> None:
    result = venv.run(venv.python, "-m", "haversack", "tools", "--json", "-p", "good")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["parameters"]["required"] == ["name"]
