"""Nox sessions: tests over Python 3.11-3.13, lint, typecheck, docs, bench, versions, demo.

Run them from the development environment: ``.venv/bin/nox -s tests`` or ``./dev nox -s
tests-3.12 -- tests/core -x`` (arguments after ``--`` go to pytest). Each session installs the
four distributions (editable) plus the dependency groups of the root ``pyproject.toml`` that it
needs, with uv when available. ``./dev test`` runs the same checks directly in ``.venv``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests", "lint", "typecheck", "versions", "docs"]

ROOT = Path(__file__).resolve().parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
PACKAGES = [
    *("-e", "core", "-e", "plugins/planning", "-e", "plugins/vfs", "-e", "plugins/podman"),
    *("-e", "plugins/mcp"),
    *("-e", "examples/demo"),
]
PYTHONS = ["3.11", "3.12", "3.13"]
QUIET_MKDOCS = {"NO_MKDOCS_2_WARNING": "1"}  # a banner about Material's future, on every build


def _works(executable: str) -> bool:
    try:
        return (
            subprocess.run([executable, "-c", ""], capture_output=True, check=False).returncode == 0
        )
    except OSError:
        return False


def _expose_pyenv_pythons() -> None:
    """Make ``python3.X`` resolvable when pyenv installed it but did not activate it.

    pyenv's shims answer for every version yet fail for inactive ones, which hides them from
    nox and uv; a directory of symlinks put first on PATH fixes that without touching pyenv.
    """
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    links = ROOT / ".nox" / "_pythons"
    added = False
    for version in PYTHONS:
        name = f"python{version}"
        found = next((str(d / name) for d in _path_dirs() if (d / name).is_file()), None)
        if found and _works(found):
            continue
        candidates = sorted(
            pyenv_root.glob(f"versions/{version}.*/bin/{name}"),
            key=lambda p: [int(x) for x in p.parent.parent.name.split(".") if x.isdigit()],
        )
        if not candidates:
            continue
        links.mkdir(parents=True, exist_ok=True)
        link = links / name
        link.unlink(missing_ok=True)
        link.symlink_to(candidates[-1])
        added = True
    if added:
        os.environ["PATH"] = f"{links}{os.pathsep}{os.environ.get('PATH', '')}"


def _path_dirs() -> list[Path]:
    return [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]


def _has_import_contracts() -> bool:
    return (ROOT / ".importlinter").is_file() or "importlinter" in PYPROJECT.get("tool", {})


_expose_pyenv_pythons()


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The test suite (``pytest -n auto``); extra arguments go to pytest.

    ``./dev test`` runs it on the versions after the first with ``-m "not podman"``.
    """
    # ruff too: the scaffold test checks that a new pack is ruff clean, and skips without it.
    session.install(*PACKAGES, *nox.project.dependency_groups(PYPROJECT, "test", "lint"))
    # Set by ./dev test, which deselects the podman tests here, when it passes arguments (they
    # may select only podman tests): "no tests collected" (exit 5) is then not a failure.
    allow_empty = os.environ.get("HAVERSACK_NOX_ALLOW_NO_TESTS") == "1"
    session.run(
        "pytest", "-n", "auto", *session.posargs, success_codes=[0, 5] if allow_empty else [0]
    )


@nox.session(python=PYTHONS[0])
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHONS[0])
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the files listed in pyproject.toml, then import-linter contracts."""
    session.install(
        *PACKAGES, *nox.project.dependency_groups(PYPROJECT, "typecheck", "test"), "nox"
    )
    session.run("mypy", *session.posargs)
    if _has_import_contracts():
        session.run("lint-imports")


@nox.session(python=PYTHONS[0])
def docs(session: nox.Session) -> None:
    """Build the documentation site with ``mkdocs build --strict`` (``-- serve`` to serve it)."""
    session.install(*PACKAGES, *nox.project.dependency_groups(PYPROJECT, "docs"))
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:], env=QUIET_MKDOCS)
    else:
        session.run("mkdocs", "build", "--strict", *session.posargs, env=QUIET_MKDOCS)


@nox.session(python=PYTHONS[0])
def bench(session: nox.Session) -> None:
    """Run the benchmarks (``python bench/run.py``); writes bench/results and performance.md."""
    session.install(*PACKAGES)
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=False)
def versions(session: nox.Session) -> None:
    """Check that every pyproject.toml agrees with the VERSION file."""
    session.run(sys.executable, "scripts/check_versions.py", external=True)


@nox.session(python=PYTHONS[0])
def demo(session: nox.Session) -> None:
    """Run ``haversack demo`` from a fresh environment."""
    session.install(*PACKAGES)
    session.run("haversack", "demo", *session.posargs)


@nox.session(python=PYTHONS[0])
def reliability(session: nox.Session) -> None:
    """The reliability suite at full budget; writes reliability/results and reliability.md.

    ``-- --quick`` runs the CI budget instead; other arguments go to pytest.
    """
    session.install(*PACKAGES, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "scripts/reliability.py", *session.posargs)
