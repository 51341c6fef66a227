"""Fixtures of the reliability suite: figures, a clean pack selection, attack scratch dirs."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

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


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A short-named private TMPDIR for one attack (Unix socket paths must stay short)."""
    path = Path(tempfile.mkdtemp(prefix="hvrt-", dir="/tmp"))
    yield path
    # rm copes with trees deeper than shutil.rmtree's recursion (a deep-tree attack leaves one)
    subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)
