"""``haversack.filesystem.remove_tree``: iterative and link-safe, for trees a model built."""

from __future__ import annotations

import os

import pytest

from haversack.filesystem import remove_tree


def _deep(root, depth):
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)


def test_a_tree_deeper_than_the_recursion_limit_is_removed(tmp_path):
    """1,100 levels made shutil.rmtree raise RecursionError and left the workspace behind."""
    root = tmp_path / "w"
    root.mkdir()
    _deep(root, 1100)
    assert remove_tree(root) == 1100 + 1 + 1  # directories, the leaf, the root
    assert not root.exists()


def test_links_are_removed_as_names_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("host file")
    root = tmp_path / "w"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "to_dir").symlink_to(outside)
    (root / "to_file").symlink_to(outside / "keep")
    os.mkfifo(root / "fifo")
    remove_tree(root)
    assert not root.exists()
    assert (outside / "keep").read_text() == "host file"


def test_keep_root_empties_in_place(tmp_path):
    root = tmp_path / "w"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    inode = root.stat().st_ino
    assert remove_tree(root, keep_root=True) == 3
    assert root.stat().st_ino == inode
    assert list(root.iterdir()) == []


def test_missing_is_fine(tmp_path):
    assert remove_tree(tmp_path / "nope") == 0


def test_an_unremovable_directory_is_reported_once_not_retried_forever(tmp_path, monkeypatch):
    """A directory that cannot go must not send the walk back into it again and again."""
    root = tmp_path / "w"
    (root / "locked" / "inner").mkdir(parents=True)
    (root / "other").write_text("x")
    real_rmdir = os.rmdir
    calls = []

    def refusing_rmdir(name, *, dir_fd=None):
        calls.append(name)
        if name == "locked":
            raise PermissionError(1, "Operation not permitted", name)
        return real_rmdir(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "rmdir", refusing_rmdir)
    with pytest.raises(PermissionError):
        remove_tree(root)
    assert calls.count("locked") == 1
    assert not (root / "other").exists()
    assert not (root / "locked" / "inner").exists()
