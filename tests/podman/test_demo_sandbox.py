"""``haversack demo`` with the real podman pack: the sandbox act behaves as scripted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.podman


def test_demo_sandbox_act_behaves_as_scripted(podman_service):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    done = subprocess.run(
        [sys.executable, "-m", "haversack", "demo", "-p", "planning", "-p", "vfs", "-p", "podman"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = done.stdout
    assert "enabled: the podman pack runs commands in a container" in out
    assert "failed, rolled back (as scripted)" in out
    assert "build failed" in out
    assert "skipped steps 0, unexpected outcomes 0" in out
