"""`.ci/check_skips.py`: `./dev test` fails on a skip whose reason is not allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / ".ci" / "check_skips.py"

TESTS = """
import pytest

def test_missing_tool():
    pytest.skip("uv is not installed")

def test_root_only():
    pytest.skip("ownership is only changed when running as root")

def test_runs():
    pass
"""


def junit_of(tmp_path: Path, source: str) -> Path:
    (tmp_path / "test_sample.py").write_text(source)
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            "/dev/null",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
            f"--junitxml={junit}",
        ],
        capture_output=True,
        check=False,
        cwd=tmp_path,
    )
    return junit


def test_a_skip_not_in_the_allowlist_fails(tmp_path: Path) -> None:
    junit = junit_of(tmp_path, TESTS)
    result = subprocess.run(
        [sys.executable, str(CHECK), str(junit)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "skip not allowed: test_sample::test_missing_tool: uv is not installed" in (
        result.stderr
    )
    assert "test_root_only" not in result.stderr  # allowed, with its reason in the list


def test_only_allowed_skips_pass(tmp_path: Path) -> None:
    junit = junit_of(
        tmp_path,
        TESTS.replace('"uv is not installed"', '"ownership is only changed when running as root"'),
    )
    result = subprocess.run(
        [sys.executable, str(CHECK), str(junit)], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")


def test_env_conditioned_entries_apply_only_with_their_variable(tmp_path: Path) -> None:
    junit = junit_of(
        tmp_path,
        "import pytest\ndef test_p():\n"
        "    pytest.skip('HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment')\n",
    )
    argv = [sys.executable, str(CHECK), str(junit)]
    env = {"PATH": "/usr/bin:/bin"}
    refused = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    assert refused.returncode == 1
    allowed = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        env={**env, "HAVERSACK_SKIP_PODMAN": "1"},
    )
    assert allowed.returncode == 0, allowed.stderr
