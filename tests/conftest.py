"""Fixtures shared across the test packages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from haversack.testing import FakeSite

if TYPE_CHECKING:
    from haversack_podman import PodmanService

# Hostile-input tests build directory trees deeper than the default recursion limit (1,000)
# and pytest deletes old temporary directories with the recursive shutil.rmtree: a tree left
# behind by one run would end every later run on the machine with a RecursionError. The
# interpreter's own recursion of pure-Python calls does not use the C stack (3.11+), so a
# higher limit costs nothing until it is used.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

#: Environment variables that select packs or change how they load.
HAVERSACK_ENV = (
    "HAVERSACK_PACKS",
    "HAVERSACK_DISABLE",
    "HAVERSACK_STRICT",
    "HAVERSACK_TRACE",
    "HAVERSACK_DEBUG",
)


@pytest.fixture(scope="session", autouse=True)
def _own_discovery_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the tests' discovery caches (one file per fake site) out of the user's home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HAVERSACK_CACHE_DIR", str(tmp_path_factory.mktemp("discovery-cache")))
        yield


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSite]:
    """A folder of fake installed packs: discovery sees only what the test adds to it.

    The folder is importable, the selection variables are unset, the working directory is
    the test's own (no project config file applies), and the fake packs' modules (named
    ``hvt_*`` by convention) are forgotten afterwards.
    """
    for var in HAVERSACK_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield FakeSite(tmp_path / "site").activate(monkeypatch)
    for name in set(sys.modules) - before:
        if name.startswith("hvt_"):
            del sys.modules[name]


def require_podman() -> None:
    """Skip (with the reason) only when the user opted out; never on a broken Podman."""
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")


@pytest.fixture(scope="session")
def podman_service() -> PodmanService:
    """This worker's private Podman service, with the sandbox images built.

    Podman tests run against real Podman: a missing or broken Podman fails them with the
    pack's own error message (see :func:`require_podman` for the one way to skip them).
    """
    require_podman()
    from haversack_podman import build_images, get_service

    build_images()
    return get_service(None)
