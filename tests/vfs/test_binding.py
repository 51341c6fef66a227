"""The workspace binding is a default: another pack's ``Filesystem`` binding replaces it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

from haversack import Filesystem
from haversack.testing import FakeSite
from haversack_vfs import InMemoryFilesystem

from ._workspace import Workspace

SANDBOX_PACK = """
from haversack import Binding, Filesystem
from haversack.hookspecs import hookimpl
from haversack_vfs import InMemoryFilesystem

WORKSPACE = InMemoryFilesystem()
WORKSPACE.write("from-sandbox.txt", "sandbox side\\n")


@hookimpl
def register_resources(register):
    register(Binding.instance(Filesystem, WORKSPACE))
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    # The installed vfs pack is still found.
    return FakeSite(tmp_path / "site").activate(monkeypatch, keep_installed=True)


def test_vfs_binds_its_in_memory_workspace_by_default(ws: Workspace) -> None:
    assert isinstance(ws.fs, InMemoryFilesystem)
    binding = ws.prompt.resources.get_optional(Filesystem)  # type: ignore[union-attr, type-abstract]
    assert binding is not None
    assert binding.default


def test_a_non_default_binding_from_another_pack_wins(
    site: FakeSite, make_ws: Callable[..., Workspace]
) -> None:
    module = site.add("sandbox", SANDBOX_PACK)
    ws = make_ws(packs=["vfs", "sandbox"])
    sandbox_fs = importlib.import_module(module).WORKSPACE
    assert ws.fs is sandbox_fs
    read = ws.ok("read_file", path="from-sandbox.txt")
    assert read.value.content == "sandbox side\n"
    ws.ok("write_file", path="made-by-tool.txt", content="x")
    assert sandbox_fs.read_text("made-by-tool.txt") == "x"
    sandbox_fs.write("unread.txt", "old", mode="create")
    denied = ws.fail("edit_file", path="unread.txt", old_string="old", new_string="new")
    assert denied.message.startswith("Denied by policy")


def test_a_callers_binding_wins_too(make_ws: Callable[..., Workspace]) -> None:
    mine = InMemoryFilesystem()
    ws = make_ws(resources={Filesystem: mine})
    ws.ok("write_file", path="a", content="b")
    assert mine.read_text("a") == "b"
