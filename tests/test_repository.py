"""Repository plumbing: version agreement, the developer commands, the benchmark report."""

from __future__ import annotations

import json
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECK = runpy.run_path(str(ROOT / "scripts" / "check_versions.py"))


def _copy_tree(tmp_path: Path) -> Path:
    """Copy what the version check reads (VERSION and the pyproject files) into ``tmp_path``."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(ROOT / "VERSION", root / "VERSION")
    for pyproject in CHECK["pyproject_files"](ROOT):
        target = root / pyproject.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(pyproject, target)
    return root


def test_repository_versions_agree():
    assert CHECK["check"](ROOT) == []


def test_every_distribution_is_checked():
    checked = {p.relative_to(ROOT).as_posix() for p in CHECK["pyproject_files"](ROOT)}
    assert {"core/pyproject.toml", "plugins/vfs/pyproject.toml"} <= checked
    packs = len(list((ROOT / "plugins").glob("*/pyproject.toml")))
    examples = len(list((ROOT / "examples").glob("*/pyproject.toml")))
    assert len(checked) == 2 + packs + examples


def test_copy_of_repository_passes(tmp_path):
    assert CHECK["check"](_copy_tree(tmp_path)) == []


def test_project_version_disagreement_names_the_file(tmp_path):
    root = _copy_tree(tmp_path)
    pyproject = root / "plugins" / "vfs" / "pyproject.toml"
    text = pyproject.read_text()
    version = (root / "VERSION").read_text().strip()
    pyproject.write_text(text.replace(f'version = "{version}"', 'version = "9.9.9"', 1))

    problems = CHECK["check"](root)

    assert len(problems) == 1
    assert "plugins/vfs/pyproject.toml" in problems[0]
    assert "9.9.9" in problems[0]


def test_pin_disagreement_is_reported(tmp_path):
    root = _copy_tree(tmp_path)
    pyproject = root / "plugins" / "podman" / "pyproject.toml"
    version = (root / "VERSION").read_text().strip()
    text = pyproject.read_text()
    assert f'"haversack-vfs=={version}"' in text
    pyproject.write_text(text.replace(f'"haversack-vfs=={version}"', '"haversack-vfs>=0.0.1"'))

    problems = CHECK["check"](root)

    assert len(problems) == 1
    assert "plugins/podman/pyproject.toml" in problems[0]
    assert "haversack-vfs" in problems[0]


def test_version_file_change_flags_every_distribution(tmp_path):
    root = _copy_tree(tmp_path)
    (root / "VERSION").write_text("0.2.0\n")
    problems = CHECK["check"](root)
    assert len(problems) >= len(CHECK["pyproject_files"](root))


def test_script_exits_non_zero_with_message(tmp_path, capsys):
    root = _copy_tree(tmp_path)
    (root / "core" / "pyproject.toml").write_text(
        (root / "core" / "pyproject.toml").read_text().replace("version = ", "version = '1' #", 1)
    )
    assert CHECK["main"]([str(root)]) == 1
    assert "core/pyproject.toml" in capsys.readouterr().err


def test_readme_opens_with_the_two_commands_ci_runs():
    lines = [line for line in (ROOT / "README.md").read_text().splitlines() if line.strip()]
    assert lines[0].startswith("```")
    assert [line.split("#")[0].strip() for line in lines[1:3]] == ["./dev demo", "./dev test"]
    assert "./dev test" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("script", ["dev", ".ci/run"])
def test_shell_scripts_parse(script):
    assert (ROOT / script).stat().st_mode & 0o111, f"{script} is not executable"
    subprocess.run(["bash", "-n", str(ROOT / script)], check=True)


def test_dev_help_lists_commands():
    out = subprocess.run(
        [str(ROOT / "dev"), "help"], check=True, capture_output=True, text=True
    ).stdout
    for command in ("demo", "test", "setup", "bench"):
        assert f"\n  {command} " in out


def test_performance_page_is_generated_from_results(tmp_path):
    bench = str(ROOT / "bench")
    sys.path.insert(0, bench)
    try:
        run = runpy.run_path(str(ROOT / "bench" / "run.py"))
        harness = sys.modules["_harness"]
        sample = harness.Sample((0.001, 0.002, 0.003))
        floor = harness.Sample((0.001, 0.001, 0.001))
        results = [
            harness.result("demo", "floor", floor),
            harness.result("demo", "slow", sample, floor=("floor", floor), max_ratio=1.5),
        ]
        run["write_results"]("demo", results, quick=True, results_dir=tmp_path)
        text = run["render_markdown"](tmp_path)
    finally:
        sys.path.remove(bench)
    stored = json.loads((tmp_path / "demo.json").read_text())
    assert stored["results"][1]["passed"] is False
    assert "## demo" in text
    assert "| slow | 2 ms |" in text
    assert "2.00x" in text
    assert "**MISS**" in text


def test_committed_performance_page_matches_results():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        run = runpy.run_path(str(ROOT / "bench" / "run.py"))
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert (ROOT / "docs" / "performance.md").read_text() == run["render_markdown"](), (
        "docs/performance.md is stale: run ./dev bench (or python bench/run.py) and commit it"
    )


def _private_core_modules() -> set[str]:
    """Top-most private modules and packages of ``haversack`` (``haversack._x``,
    ``haversack.filesystem._y``): what a pack must never import."""
    base = ROOT / "core" / "src"
    found: set[str] = set()
    for path in (base / "haversack").rglob("*"):
        if "__pycache__" in path.parts or path.name.startswith("__"):
            continue
        if path.is_file() and path.suffix != ".py":
            continue
        if not path.name.startswith("_"):
            continue
        found.add(".".join(path.relative_to(base).with_suffix("").parts))
    return {m for m in found if not any(m.startswith(f"{other}.") for other in found)}


def test_packs_public_only_contract_lists_every_private_core_module():
    """A new private module must join the import contract, or packs could import it."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [
        c for c in contracts if c["name"] == "Packs import only public haversack modules"
    ]
    assert set(contract["forbidden_modules"]) == _private_core_modules()


def test_contributing_points_at_the_one_exhaustive_layers_contract():
    """The architecture is stated once, in the layers contract: CONTRIBUTING.md names it and
    lists no core module of its own (such a list went stale before)."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert layers["containers"] == ["haversack"]
    assert layers["exhaustive"] is True
    text = (ROOT / "CONTRIBUTING.md").read_text()
    start = text.index("- Layering")
    paragraph = " ".join(text[start : text.index("\n- ", start)].split())
    assert f'"{layers["name"]}"' in paragraph
    assert re.findall(r"`(_\w+)`", paragraph) == [], "CONTRIBUTING.md re-lists core modules"


def test_no_pack_names_a_private_core_module_in_a_string():
    """Import contracts see imports, not strings: a pack comparing a name with
    "haversack._executor" depends on a private module unseen. Packs use public names."""
    import re

    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / "plugins").glob("*/src/**/*.py"))
        for match in re.finditer(r"[\"']haversack(\.\w+)*\._\w+", path.read_text())
    ]
    assert offenders == []


def test_every_slow_test_entry_names_a_test():
    """An entry of tests/conftest.py's SLOW_TESTS that no longer names a test (renamed,
    moved) would silently put a slow test back in the fast tier."""
    import ast

    slow = runpy.run_path(str(ROOT / "tests" / "conftest.py"))["SLOW_TESTS"]
    assert slow
    for path, tests in slow.items():
        source = ROOT / "tests" / path
        assert source.is_file(), path
        names = {
            node.name
            for node in ast.walk(ast.parse(source.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        for test in tests:
            assert test.split("[", 1)[0] in names, f"{path}::{test}"


def test_bench_names_every_figure_slower_than_the_last_committed_one(tmp_path):
    """``./dev bench`` compares each duration with the committed results file (not the one in
    the working tree) and names each figure more than 10 % slower, and only those."""
    bench = str(ROOT / "bench")
    sys.path.insert(0, bench)
    try:
        run = runpy.run_path(str(ROOT / "bench" / "run.py"))
        harness = sys.modules["_harness"]
        committed = [
            harness.Result("demo", "steady", median_s=1e-3),
            harness.Result("demo", "regressed", median_s=1e-3),
            harness.Result("demo", "faster", median_s=1e-3),
            harness.Result("demo", "a ratio", value=2.0, unit="x"),
        ]
        results_dir = tmp_path / "results"
        run["write_results"]("demo", committed, quick=False, results_dir=results_dir)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(results_dir)]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "demo.json"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "figures"], check=True)
        # A later uncommitted run must not become the reference.
        run["write_results"]("demo", [], quick=False, results_dir=results_dir)
        previous = run["committed_results"]("demo", results_dir=results_dir)
        assert previous is not None
        assert run["committed_results"]("absent", results_dir=results_dir) is None
        now = [
            harness.Result("demo", "steady", median_s=1.09e-3),
            harness.Result("demo", "regressed", median_s=1.5e-3),
            harness.Result("demo", "faster", median_s=0.5e-3),
            harness.Result("demo", "a ratio", value=9.0, unit="x"),
            harness.Result("demo", "new", median_s=1.0),
        ]
        slower = run["slower_than"](previous, now)
    finally:
        sys.path.remove(bench)
    assert slower == ["demo/regressed: 1 ms -> 1.5 ms (+50 %)"]


def test_a_reliability_run_never_blanks_the_areas_it_did_not_reach(tmp_path):
    script = runpy.run_path(str(ROOT / "scripts" / "reliability.py"))
    write = script["write_results"]
    write.__globals__["RESULTS"] = tmp_path
    (tmp_path / "escapes.json").write_text('{"kept": true}')
    figure = {"area": "checkpoints", "name": "resumed", "cases": 3}
    write([figure], {"budget": "quick"})
    assert json.loads((tmp_path / "escapes.json").read_text()) == {"kept": True}
    assert json.loads((tmp_path / "checkpoints.json").read_text())["figures"] == [figure]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoints.json", "escapes.json"]


def test_a_reliability_run_of_some_files_keeps_the_areas_other_figures(tmp_path):
    # One test file of an area run alone (scripts/reliability.py tests/reliability/x.py) once
    # replaced every figure of the area, dropping what its other files had measured.
    script = runpy.run_path(str(ROOT / "scripts" / "reliability.py"))
    write = script["write_results"]
    write.__globals__["RESULTS"] = tmp_path
    old = {"area": "escapes", "name": "a", "cases": 1}
    other = {"area": "escapes", "name": "b", "cases": 2}
    write([old, other], {"budget": "full"})
    new = {"area": "escapes", "name": "a", "cases": 5}
    write([new], {"budget": "full"}, merge=True)
    assert json.loads((tmp_path / "escapes.json").read_text())["figures"] == [new, other]
    write([new], {"budget": "full"})  # the whole suite: what it did not measure is gone
    assert json.loads((tmp_path / "escapes.json").read_text())["figures"] == [new]
