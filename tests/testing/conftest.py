"""Fixtures for the test-kit tests: a folder of fake installed packs."""

from __future__ import annotations

import sys

import pytest

from haversack._packs import _discovery
from haversack._packs._testing import FakeSite

ENV = ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT", "HAVERSACK_TRACE")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """Discovery sees only the packs added to this fake site (importable from ``root``)."""
    root = tmp_path / "site"
    root.mkdir()
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(_discovery, "search_path", [str(root)])
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield FakeSite(root)
    for name in set(sys.modules) - before:
        if name.startswith("hvt_"):
            del sys.modules[name]
