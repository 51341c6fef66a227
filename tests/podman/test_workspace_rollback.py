"""Rollback of the sandbox workspace against a hostile model, through ``ToolExecutor`` and
real Podman: special files, planted names, deep trees, sparse files and the byte budget."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import haversack
from haversack import Filesystem, Session, ToolExecutor
from haversack.filesystem import DirectorySnapshotter, remove_tree
from haversack_podman import PYTHON_IMAGE, Sandbox

pytestmark = pytest.mark.podman

DEEP = "$(python3 -c \"print('/'.join(['d'] * 1100))\")"


@pytest.fixture
def ex(podman_service: Any, tmp_path: Path) -> Iterator[ToolExecutor]:
    prompt = haversack.compose(
        ns="test",
        key="rollback",
        packs=["vfs", "podman"],
        config={"podman": {"image": PYTHON_IMAGE, "workspace_root": str(tmp_path / "ws")}},
        strict=True,
    )
    (tmp_path / "ws").mkdir()
    executor = ToolExecutor(prompt.render(), session=Session())
    yield executor
    executor.close()


def _workspace(ex: ToolExecutor) -> Path:
    return Path(ex.resources.get(Sandbox).workspace)


def _snapshotter(ex: ToolExecutor) -> DirectorySnapshotter:
    fs = ex.resources.get(Filesystem)  # type: ignore[type-abstract]
    found = getattr(fs, "_snapshotter", None)
    assert isinstance(found, DirectorySnapshotter), fs
    return found


def _run(ex: ToolExecutor, command: str, *, ok: bool = True) -> str:
    result = ex.execute("shell_execute", {"command": command})
    assert result.success is ok, result.render()
    return result.render()


def _state(root: Path) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    stack = [root]
    while stack:
        directory = stack.pop()
        for entry in os.scandir(directory):
            st = entry.stat(follow_symlinks=False)
            rel = os.path.relpath(entry.path, root)
            data: Any = None
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode):
                data = Path(entry.path).read_bytes()
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(entry.path)
            out[rel] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, data)
    return out


def test_fifos_and_sockets_survive_a_failed_call(ex):
    _run(ex, "mkfifo pipe && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('s')\"")
    root = _workspace(ex)
    before = _state(root)
    _run(ex, "rm pipe s; echo x > new.txt; exit 3", ok=False)
    assert _state(root) == before
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)
    assert stat.S_ISSOCK((root / "s").lstat().st_mode)


def test_planted_temporary_names_do_not_break_rollback(ex, tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("host secret\n")
    _run(
        ex,
        f"echo a > a.txt && ln -s {canary} .a.txt.haversack-tmp && ln a.txt .a.txt.haversack-x "
        "&& mkfifo .haversack-0000000000000000.tmp && ln -s / .haversack-root.tmp",
    )
    root = _workspace(ex)
    before = _state(root)
    for n in range(3):  # every later rollback works too
        _run(ex, f"echo evil{n} > a.txt; rm -f .a.txt.haversack-tmp; exit 1", ok=False)
        assert _state(root) == before
    assert canary.read_text() == "host secret\n"


def test_a_1100_level_tree_can_be_made_rolled_back_and_deleted(ex):
    _run(ex, f"mkdir -p {DEEP} && echo bottom > {DEEP}/f")
    root = _workspace(ex)
    before = _state(root)
    _run(ex, "rm -rf d; exit 1", ok=False)
    assert _state(root) == before
    _run(ex, "rm -rf d")  # the model can delete it
    assert not (root / "d").exists()
    _run(ex, "echo still usable")


def test_a_tree_deeper_than_the_limit_fails_the_call_and_is_rolled_back(ex):
    _run(ex, "echo keep > keep.txt")
    _snapshotter(ex).max_depth = 64
    root = _workspace(ex)
    before = _state(root)
    text = _run(ex, "mkdir -p $(python3 -c \"print('/'.join(['d'] * 100))\")", ok=False)
    assert "deeper than 64 levels" in text
    assert _state(root) == before


def test_the_byte_budget_fails_the_call_and_sparse_files_cost_their_data(ex):
    snapper = _snapshotter(ex)
    snapper.max_bytes = 4 * 1024 * 1024
    _run(ex, "echo keep > keep.txt")
    root = _workspace(ex)
    before = _state(root)
    text = _run(ex, "head -c 8000000 /dev/urandom > big.bin", ok=False)
    assert "over its budget" in text
    assert _state(root) == before
    _run(ex, "truncate -s 3G sparse.img && echo x >> sparse.img")  # 3 GiB apparent, ~4 KiB used
    _run(ex, "true")  # the next call's snapshot stores it
    stored = sum(p.stat().st_blocks * 512 for p in snapper.storage.iterdir())
    assert stored < 1024 * 1024, stored
    assert snapper.usage().bytes < 1024 * 1024
    _run(ex, "truncate -s 0 sparse.img; exit 1", ok=False)
    assert (root / "sparse.img").stat().st_size == 3 * 1024**3 + 2
    assert (root / "sparse.img").stat().st_blocks * 512 < 1024 * 1024


def test_closing_removes_the_snapshot_storage_after_a_deep_tree(ex, tmp_path):
    _run(ex, f"mkdir -p {DEEP}")
    snapper = _snapshotter(ex)
    storage = snapper.storage
    assert storage.exists()
    snapper.close()
    assert not storage.exists()
    # The workspace itself is removed by the sandbox (its own module); removed here so that
    # pytest's recursive cleanup of tmp_path never meets the deep tree.
    remove_tree(_workspace(ex) / "d")
