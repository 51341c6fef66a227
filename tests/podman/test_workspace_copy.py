"""Workspace directories: creation under a missing root, mounts copied without escaping links,
link-safe chown and removal at any depth, and a user's directory never removed."""

from __future__ import annotations

import os

import pytest

from haversack.filesystem import remove_tree
from haversack_podman._workspace import (
    chown_tree,
    copy_into_workspace,
    create_workspace,
    remove_workspace,
)


def test_a_missing_workspace_root_is_created(tmp_path):
    root = tmp_path / "not" / "there"
    workspace = create_workspace(root, "ws", os.getuid(), os.getgid())
    assert workspace.is_dir()
    assert workspace.parent == root


def test_mount_copies_keep_inner_relative_links_and_drop_escaping_ones(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("host secret")
    mount = tmp_path / "mount"
    (mount / "pkg").mkdir(parents=True)
    (mount / "pkg" / "real.txt").write_text("inside")
    (mount / "pkg" / "inner").symlink_to("real.txt")
    (mount / "pkg" / "up").symlink_to("../../secret.txt")
    (mount / "absolute").symlink_to(outside)
    (mount / "absolute_inside").symlink_to(mount / "pkg" / "real.txt")
    workspace = create_workspace(tmp_path / "ws-root", "ws", os.getuid(), os.getgid())

    copy_into_workspace(workspace, {str(mount): "src"}, os.getuid(), os.getgid())

    copied = workspace / "src"
    assert (copied / "pkg" / "real.txt").read_text() == "inside"
    assert os.readlink(copied / "pkg" / "inner") == "real.txt"
    assert not (copied / "pkg" / "up").is_symlink()
    assert not (copied / "absolute").is_symlink()
    # Absolute links keep pointing at the host even when aimed inside the mount.
    assert not (copied / "absolute_inside").is_symlink()


def test_chown_never_follows_a_link(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown only runs as root")
    host = tmp_path / "host.txt"
    host.write_text("host")
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "f").write_text("x")
    (workspace / "link").symlink_to(host)
    (workspace / "dirlink").symlink_to(tmp_path)
    chown_tree(workspace, 1000, 1000)
    assert host.stat().st_uid == 0
    assert tmp_path.stat().st_uid == 0
    assert (workspace / "d" / "f").stat().st_uid == 1000
    assert (workspace / "link").lstat().st_uid == 1000


def test_deep_trees_are_copied_and_removed_without_recursion(tmp_path):
    mount = tmp_path / "mount"
    mount.mkdir()
    fd = os.open(mount, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):  # deeper than the interpreter's recursion limit
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as leaf:
        leaf.write("leaf")
    os.close(fd)
    workspace = create_workspace(tmp_path / "ws-root", "ws", os.getuid(), os.getgid())
    copy_into_workspace(workspace, {str(mount): "m"}, os.getuid(), os.getgid())
    fd = os.open(workspace / "m", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    assert os.listdir(fd) == ["leaf.txt"]
    os.close(fd)
    remove_workspace(workspace)
    assert not workspace.exists()
    remove_tree(mount)  # pytest's own clean-up of old temporary directories would recurse


def test_only_workspaces_this_process_created_are_removed(tmp_path):
    users = tmp_path / "project"
    users.mkdir()
    (users / "precious.txt").write_text("mine")
    remove_workspace(users)
    assert (users / "precious.txt").read_text() == "mine"


def test_a_file_mount_lands_under_its_target_or_its_own_name(tmp_path):
    single = tmp_path / "config.toml"
    single.write_text("x = 1\n")
    workspace = create_workspace(tmp_path / "ws-root", "ws", os.getuid(), os.getgid())
    copy_into_workspace(workspace, {str(single): "etc/app.toml"}, os.getuid(), os.getgid())
    copy_into_workspace(workspace, {str(single): ""}, os.getuid(), os.getgid())
    assert (workspace / "etc" / "app.toml").read_text() == "x = 1\n"
    assert (workspace / "config.toml").read_text() == "x = 1\n"
