"""``haversack new-pack``: names, directories, and a scaffold that conforms and passes its tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

# The implementation of `haversack new-pack`, unit-tested.
from haversack._scaffold import ScaffoldError, core_requirement, pack_names, scaffold
from haversack.cli import _main
from haversack.testing import assert_pack_conforms, write_distribution

pytest_plugins = ["pytester"]


@pytest.fixture
def cli(monkeypatch):
    """``haversack`` with the new-pack command registered, as ``_main.COMMANDS`` will have it."""
    monkeypatch.setitem(_main.COMMANDS, "new-pack", "haversack.cli.new_pack")
    return _main.main


@pytest.mark.parametrize(
    "name", ["", "Weather", "1weather", "my pack", "my--pack", "pack-", "a" * 33, "haversack-x"]
)
def test_invalid_names_are_refused(name, tmp_path):
    with pytest.raises(ScaffoldError, match="Invalid pack name"):
        scaffold(name, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_names_derive_every_spelling():
    names = pack_names("issue-tracker")
    assert names.distribution == "haversack-issue-tracker"
    assert names.import_name == "haversack_issue_tracker"
    assert names.class_prefix == "IssueTracker"
    assert pack_names("my_pack").distribution == "haversack-my-pack"


@pytest.mark.parametrize(
    ("version", "requirement"),
    [
        ("0.1.0", "haversack>=0.1,<0.2"),
        ("1.4.2", "haversack>=1.4,<1.5"),
        ("2", "haversack>=2.0,<2.1"),
    ],
)
def test_core_requirement_is_the_minor_line(version, requirement):
    assert core_requirement(version) == requirement


def test_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ScaffoldError, match="not an empty directory"):
        scaffold("weather", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_uses_an_empty_directory_and_defaults_to_cwd(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert scaffold("weather", empty) == empty
    assert (empty / "src" / "haversack_weather" / "plugin.py").is_file()
    monkeypatch.chdir(tmp_path)
    assert scaffold("weather") == tmp_path / "haversack-weather"


def test_project_layout_and_metadata(tmp_path):
    root = scaffold("weather", tmp_path / "p")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [
        ".gitignore",
        "README.md",
        "pyproject.toml",
        "src/haversack_weather/__init__.py",
        "src/haversack_weather/_config.py",
        "src/haversack_weather/_notes.py",
        "src/haversack_weather/_policy.py",
        "src/haversack_weather/_section.py",
        "src/haversack_weather/plugin.py",
        "src/haversack_weather/py.typed",
        "tests/test_pack.py",
    ]
    import tomllib

    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "haversack-weather"
    assert meta["project"]["dependencies"] == [core_requirement()]
    assert meta["project"]["entry-points"]["haversack"] == {"weather": "haversack_weather.plugin"}
    assert "{{" not in "".join((root / f).read_text() for f in files)


def test_cli_creates_the_project_and_reports_errors(cli, tmp_path, capsys):
    assert cli(["new-pack", "weather", "--dir", str(tmp_path / "w")]) == 0
    assert "haversack check --pack weather" in capsys.readouterr().out
    assert cli(["new-pack", "weather", "--dir", str(tmp_path / "w")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert cli(["new-pack", "Bad Name"]) == 2
    assert "Invalid pack name 'Bad Name'" in capsys.readouterr().err


@pytest.fixture
def installed(site, tmp_path):
    """A freshly scaffolded pack, "installed" into the fake site (source on sys.path)."""
    name = f"sc{uuid.uuid4().hex[:8]}"
    root = scaffold(name, tmp_path / "project")
    write_distribution(
        site.root,
        f"haversack-{name}",
        version="0.1.0",
        entry_points={name: f"haversack_{name}.plugin"},
        requires=[core_requirement()],
    )
    sys.path.insert(0, str(root / "src"))
    yield name, root
    sys.path.remove(str(root / "src"))
    for module in [m for m in sys.modules if m.startswith(f"haversack_{name}")]:
        del sys.modules[module]


def test_scaffolded_pack_conforms(installed):
    name, _ = installed
    assert_pack_conforms(name)


def test_scaffolded_tests_pass(installed, site, pytester, monkeypatch):
    _, root = installed
    monkeypatch.setenv("PYTHONPATH", f"{site.root}:{root / 'src'}")
    pytester.makepyfile(test_pack=(root / "tests" / "test_pack.py").read_text())
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"
    )
    result.assert_outcomes(passed=12)


def test_scaffolded_code_is_ruff_clean(tmp_path):
    """Stock ``ruff check`` and ``ruff format --check``, with only the project's own config."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff is not None, "ruff is a test dependency; run ./dev setup"
    root = scaffold("issue-tracker", tmp_path / "p")
    check = subprocess.run([ruff, "check", "."], capture_output=True, text=True, cwd=root)
    assert check.returncode == 0, check.stdout
    fmt = subprocess.run([ruff, "format", "--check", "."], capture_output=True, text=True, cwd=root)
    assert fmt.returncode == 0, fmt.stdout
