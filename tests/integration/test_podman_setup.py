"""The Podman set-up ships inside the pack: a pip user runs `python -m haversack_podman setup`."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "plugins" / "podman" / "src" / "haversack_podman" / "install-podman.sh"


def test_the_wheel_carries_the_setup_script(uv: str, tmp_path: Path) -> None:
    subprocess.run(
        [uv, "build", "-q", "--wheel", "-o", str(tmp_path), str(ROOT / "plugins" / "podman")],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("haversack_podman-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("haversack_podman/install-podman.sh").decode()
    assert shipped == SCRIPT.read_text()


def test_print_script_shows_what_setup_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "haversack_podman", "setup", "--print-script"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == SCRIPT.read_text()


def test_the_repository_script_runs_the_packaged_one() -> None:
    wrapper = (ROOT / "scripts" / "install-podman.sh").read_text()
    assert "plugins/podman/src/haversack_podman/install-podman.sh" in wrapper


@pytest.mark.skipif(os.geteuid() != 0, reason="the set-up runs as root only")
@pytest.mark.skipif(
    os.environ.get("HAVERSACK_SKIP_PODMAN") == "1",
    reason="HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment",
)
def test_setup_as_root_is_idempotent() -> None:
    # The machine is set up (./dev setup ran the same script): only checks run, no apt-get.
    result = subprocess.run(
        [sys.executable, "-m", "haversack_podman", "setup", "--no-images"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "[install-podman] all packages present" in result.stderr
