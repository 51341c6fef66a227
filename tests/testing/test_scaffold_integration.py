"""End to end: a scaffolded pack installed with the real packs into a fresh virtual environment.

Builds and installs (not editable) the core, every pack of this repository and the scaffolded
pack with uv, then runs the scaffolded pack's own tests and ``haversack check`` there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from haversack._scaffold import scaffold  # what `haversack new-pack` runs

from ..integration.conftest import find_uv, require_tool, uv_candidates  # noqa: TID252

ROOT = Path(__file__).resolve().parents[2]
PACKS = ("planning", "vfs", "podman")
NAME = "field-notes"

pytestmark = pytest.mark.slow


def _uv() -> str:
    # Under CI a missing uv fails: a skip would hide missing set-up.
    return require_tool("uv", find_uv(), uv_candidates())


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HAVERSACK_", "PYTHON"))}
    env.pop("VIRTUAL_ENV", None)
    return env


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def _packs() -> list[Path]:
    """The repository's packs whose entry-point module exists (one may be mid-development)."""
    found = []
    for name in PACKS:
        folder = ROOT / "plugins" / name
        if (folder / "src" / f"haversack_{name}" / "plugin.py").is_file():
            found.append(folder)
    return found


@pytest.fixture(scope="session")
def environment(tmp_path_factory):
    """``(python, project)``: a fresh venv with core, packs and the scaffolded pack installed."""
    uv = _uv()
    base = tmp_path_factory.mktemp("scaffold-venv")
    project = scaffold(NAME, base / "project")
    venv = base / "venv"
    made = _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    sources = [ROOT / "core", *_packs()]
    install = _run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            *map(str, sources),
            str(project),
            "pytest",
        ],
        base,
    )
    assert install.returncode == 0, install.stderr
    return python, project


def test_scaffolded_pack_tests_pass_in_a_fresh_environment(environment):
    python, project = environment
    done = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 passed" in done.stdout


def test_haversack_check_passes_with_every_pack(environment):
    python, project = environment
    done = _run([str(python.parent / "haversack"), "check"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    for name in [NAME, *(p.name for p in _packs())]:
        assert name in loaded


def test_installed_core_scaffolds_from_its_wheel(environment, tmp_path):
    python, _ = environment
    code = "import pathlib, haversack._scaffold as s; s.scaffold('other', pathlib.Path('out'))"
    done = _run([str(python), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "src" / "haversack_other" / "_section.py").is_file()
