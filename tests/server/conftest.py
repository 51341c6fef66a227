"""Fixtures of the server tests: the pinned npm packages ``./dev setup`` installs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NODE_MODULES = Path(__file__).resolve().parents[2] / ".tools" / "npm" / "node_modules"


def npm_entry(package: str) -> tuple[str, Path]:
    """``node`` and the entry script of ``package`` (``@scope/name``) in ``.tools/npm``.

    Missing pieces skip the test locally and fail it under CI (CI=true), where the set-up
    must have installed them.
    """
    node = shutil.which("node")
    script = NODE_MODULES / package / "dist" / "index.js"
    missing = "node is not on PATH" if node is None else None
    if missing is None and not script.is_file():
        missing = f"{script} is missing"
    if missing is not None:
        message = f"{missing}: run ./dev setup (it installs the pinned npm packages)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    assert node is not None
    return node, script


@pytest.fixture
def conformance() -> tuple[str, Path]:
    """``node`` and the official MCP conformance suite's CLI."""
    return npm_entry("@modelcontextprotocol/conformance")
