"""Fixtures of the core tests: the pack caches' folder and dating files back for them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from haversack._packs import _cache, _tokens


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder for the discovery and token caches, caching switched on, and
    no folder stamps remembered from earlier tests in this process."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(_cache.ENV_CACHE_DIR, str(folder))
    monkeypatch.delenv(_cache.ENV_NO_CACHE, raising=False)
    monkeypatch.setattr(_tokens, "_folder_stamps", {})
    return folder


@pytest.fixture
def age() -> Callable[..., None]:
    """``age(root, seconds=100.0)``: date everything under ``root`` back, so the caches may
    trust its mtimes (a file changed within the last moments is never trusted)."""

    def date_back(root: Path, seconds: float = 100.0) -> None:
        then = time.time() - seconds
        for path in [root, *root.rglob("*")]:
            os.utime(path, (then, then))

    return date_back
