"""Workspace directories: creation under a missing root, mounts copied without escaping links."""

from __future__ import annotations

import os

from haversack_podman._workspace import copy_into_workspace, create_workspace


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
