"""Fixtures of the server tests: the pinned npm packages ``./dev setup`` installs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..integration.conftest import require_tool  # noqa: TID252 - one rule for tools

NODE_MODULES = Path(__file__).resolve().parents[2] / ".tools" / "npm" / "node_modules"


def npm_entry(package: str) -> tuple[str, Path]:
    """``node`` and the entry script of ``package`` (``@scope/name``) in ``.tools/npm``.

    Missing pieces skip the test locally and fail it under CI (CI=true), where the set-up
    must have installed them.
    """
    node = require_tool("node", shutil.which("node"), ["PATH"])
    script = NODE_MODULES / package / "dist" / "index.js"
    require_tool(package, str(script) if script.is_file() else None, [str(script)])
    return node, script


@pytest.fixture
def conformance() -> tuple[str, Path]:
    """``node`` and the official MCP conformance suite's CLI."""
    return npm_entry("@modelcontextprotocol/conformance")
