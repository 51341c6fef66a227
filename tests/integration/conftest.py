"""The throwaway environment the integration tests install into, and the uv that builds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def uv_candidates() -> list[str]:
    """Where ``./dev setup`` may have put uv, in the order ``dev``'s ``find_uv`` tries."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    found = [
        os.environ.get("UV", ""),
        shutil.which("uv") or "",
        str(Path.home() / ".local" / "bin" / "uv"),
        str(cache / "haversack-dev" / "uv-venv" / "bin" / "uv"),
        str(ROOT / ".venv" / "bin" / "uv"),
        str(Path(sys.executable).parent / "uv"),
    ]
    return [c for c in found if c]


def find_uv() -> str | None:
    """The first uv that runs, or ``None``."""
    for candidate in uv_candidates():
        if os.access(candidate, os.X_OK):
            try:
                subprocess.run([candidate, "--version"], capture_output=True, check=True)
            except (OSError, subprocess.CalledProcessError):
                continue
            return candidate
    return None


def require_tool(what: str, found: str | None, looked: list[str]) -> str:
    """``found``, else fail under CI (missing set-up must not pass as a skip), else skip."""
    if found is not None:
        return found
    message = f"{what} not found (looked at: {', '.join(looked)}); run ./dev setup"
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


@pytest.fixture(scope="session")
def uv() -> str:
    """The uv binary the set-up installed (PATH, $UV, or ./dev's bootstrap environment)."""
    return require_tool("uv", find_uv(), uv_candidates())


class Venv:
    def __init__(self, path: Path, workdir: Path) -> None:
        self.path = path
        self.workdir = workdir
        self.python = path / "bin" / "python"
        self.haversack = path / "bin" / "haversack"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HAVERSACK_", "PYTHON"))}
        env.pop("VIRTUAL_ENV", None)
        # A loaded machine can take over the 2 s notice threshold to import a pack, and the
        # notice would then land in stderr that tests compare; the notice's own tests lower it.
        env["HAVERSACK_IMPORT_NOTICE"] = "60"
        env.update(extra)
        return env

    def run(
        self, *argv: str, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            cwd=cwd or self.workdir,
            env=self.env(**env),
            timeout=60,
            check=False,
        )

    def cli(
        self, *args: str, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return self.run(self.haversack, *args, cwd=cwd, **env)

    def script(self, code: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", code, **env)


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory, uv: str) -> Venv:
    base = tmp_path_factory.mktemp("hvit")
    path = base / "venv"
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([uv, "venv", "-q", "-p", py, str(path)], check=True)
    target = ["--python", str(path / "bin" / "python")]
    names = ("good", "broken", "clash_a", "clash_b", "hangs", "store")
    packs = [str(FIXTURES / name) for name in names]
    subprocess.run([uv, "pip", "install", "-q", *target, str(ROOT / "core"), *packs], check=True)
    # The resolver (rightly) refuses a pack that excludes the core; force it in, as a stale
    # environment after upgrading haversack would have it.
    incompatible = str(FIXTURES / "incompatible")
    subprocess.run([uv, "pip", "install", "-q", "--no-deps", *target, incompatible], check=True)
    workdir = base / "project"
    workdir.mkdir()
    return Venv(path, workdir)
