"""The workspace watcher reports which directories changed, and whether a name made since the
last drain was removed or replaced: that name may have been a hard link to any file, written
through, whose own directory got no event (the snapshotter then checks every file)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from haversack.filesystem._inotify import Watcher


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Watcher]]:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    watcher = Watcher.open()
    assert watcher is not None, "inotify is unavailable on this machine"
    for rel in ("", "a", "b"):
        fd = os.open(tmp_path / rel, os.O_RDONLY | os.O_DIRECTORY)
        try:
            watcher.watch(fd, rel)
        finally:
            os.close(fd)
    (tmp_path / "a" / "old.txt").write_text("old\n")
    watcher.drain()
    yield tmp_path, watcher
    watcher.close()


def _link_write_remove(root: Path) -> None:
    os.link(root / "a" / "old.txt", root / "b" / "alias")
    (root / "b" / "alias").write_text("through the link\n")
    (root / "b" / "alias").unlink()


def _link_then_replace(root: Path) -> None:
    os.link(root / "a" / "old.txt", root / "b" / "alias")
    (root / "b" / "other").write_text("x")
    os.replace(root / "b" / "other", root / "b" / "alias")


def _link_then_move_out_of_sight(root: Path) -> None:
    (root / "b" / "new").mkdir()  # not watched yet
    os.link(root / "a" / "old.txt", root / "b" / "alias")
    os.rename(root / "b" / "alias", root / "b" / "new" / "alias")
    (root / "b" / "new" / "alias").unlink()


def _temp_file_renamed_over(root: Path) -> None:  # sed -i, editors, package managers
    (root / "a" / ".tmp123").write_text("new\n")
    os.replace(root / "a" / ".tmp123", root / "a" / "old.txt")


def _new_file_written(root: Path) -> None:
    (root / "b" / "new.txt").write_text("new\n")
    (root / "b" / "new.txt").write_text("again\n")


def _old_file_removed(root: Path) -> None:
    (root / "a" / "old.txt").unlink()


@pytest.mark.parametrize(
    ("change", "churned"),
    [
        (_link_write_remove, True),
        (_link_then_replace, True),
        (_link_then_move_out_of_sight, True),
        (_temp_file_renamed_over, False),
        (_new_file_written, False),
        (_old_file_removed, False),
    ],
)
def test_a_made_name_that_is_gone_again_is_reported(
    watched: tuple[Path, Watcher], change: Callable[[Path], None], churned: bool
) -> None:
    root, watcher = watched
    change(root)
    dirty, gone = watcher.drain()
    assert dirty
    assert gone is churned
