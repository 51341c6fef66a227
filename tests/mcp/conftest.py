"""Fixtures of the MCP pack tests: the pinned npm server ``./dev setup`` installs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..server.conftest import npm_entry  # noqa: TID252 - one helper for npm packages


@pytest.fixture
def everything() -> tuple[str, Path]:
    """``node`` and ``@modelcontextprotocol/server-everything``'s entry script."""
    return npm_entry("@modelcontextprotocol/server-everything")
