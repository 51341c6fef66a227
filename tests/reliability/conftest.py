"""Fixtures of the reliability suite: figures, a clean pack selection and the Podman service."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ._harness import Figure

SELECTION = ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT", "HAVERSACK_TRACE")


@pytest.fixture(autouse=True)
def _clean_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SELECTION:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def figure() -> Iterator[Callable[[str, str], Figure]]:
    """``figure(area, name)``: a figure written (when results are collected) at teardown."""
    made: list[Figure] = []

    def make(area: str, name: str) -> Figure:
        made.append(Figure(area, name))
        return made[-1]

    yield make
    for item in made:
        item.finish()


def require_podman() -> None:
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")


@pytest.fixture(scope="session")
def podman_service() -> Any:
    """This worker's private Podman service, images built (as in tests/podman)."""
    require_podman()
    from haversack_podman import build_images, get_service

    build_images()
    return get_service(None)
