"""Fixtures for the VFS pack tests: a composed workspace per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ._workspace import SELECTION_VARIABLES, Workspace, compose_vfs


@pytest.fixture
def make_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Workspace]]:
    for name in SELECTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    made: list[Workspace] = []

    def make(config: dict[str, Any] | None = None, **kwargs: Any) -> Workspace:
        ws = Workspace(compose_vfs(tmp_path, config, **kwargs))
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.close()


@pytest.fixture
def ws(make_ws: Callable[..., Workspace]) -> Workspace:
    return make_ws()
