"""Workspace snapshots on the host are exact (content, modes, owners, links, dirs) and leave no
storage; tests/podman/test_snapshot.py restores a tree a sandbox changed."""

from __future__ import annotations

import gc
import os
import stat
import time
from pathlib import Path

import pytest

from haversack.errors import FilesystemError
from haversack.filesystem import DirectorySnapshotter


def fingerprint(root: Path) -> dict[str, tuple]:
    """Everything restore must reproduce, per path."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path), st.st_uid)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns)
            else:
                out[rel] = (
                    "file",
                    st.st_mode,
                    st.st_uid,
                    st.st_gid,
                    st.st_mtime_ns,
                    path.read_bytes(),
                )
    st = root.stat()
    out["."] = ("root", st.st_mode, st.st_uid, st.st_mtime_ns, st.st_ino)
    return out


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "exec.sh").write_text("#!/bin/sh\n")
    (root / "exec.sh").chmod(0o755)
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "b.bin").write_bytes(bytes(range(256)))
    (root / "empty").mkdir()
    (root / "link").symlink_to("a.txt")
    return root


@pytest.fixture
def snapper(tree, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    s = DirectorySnapshotter(tree, storage_parent=store)
    yield s
    s.close()


def mutate(root: Path) -> None:
    with (root / "a.txt").open("a") as fh:  # in place, same inode
        fh.write("more\n")
    (root / "exec.sh").chmod(0o600)
    (root / "sub" / "deep" / "b.bin").unlink()
    (root / "new.txt").write_text("new")
    (root / "newdir" / "x").mkdir(parents=True)
    (root / "empty").rmdir()
    (root / "empty").write_text("now a file")
    (root / "link").unlink()
    (root / "link").symlink_to("exec.sh")
    (root / "sub").chmod(0o700)


def test_restore_is_exact_after_host_mutations(tree, snapper):
    before = fingerprint(tree)
    snap = snapper.snapshot()
    mutate(tree)
    assert fingerprint(tree) != before
    snapper.restore(snap)
    assert fingerprint(tree) == before


def test_same_size_same_second_rewrite_is_detected(tree, snapper):
    before = fingerprint(tree)
    snap = snapper.snapshot()
    st = (tree / "a.txt").stat()
    (tree / "a.txt").write_text("ALPHA\n")  # same size
    os.utime(tree / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))  # and same mtime
    snapper.restore(snap)
    assert fingerprint(tree) == before


def test_restore_an_older_snapshot_after_several(tree, snapper):
    first_state = fingerprint(tree)
    first = snapper.snapshot()
    for i in range(3):
        (tree / f"f{i}").write_text(str(i))
        with (tree / "a.txt").open("a") as fh:
            fh.write(f"{i}\n")
        snapper.snapshot()
    second_state = fingerprint(tree)
    second = snapper.snapshot()
    snapper.restore(first)
    assert fingerprint(tree) == first_state
    snapper.restore(second)
    assert fingerprint(tree) == second_state


def test_storage_is_released_by_discard_gc_and_close(tree, snapper):
    time.sleep(0.05)  # past the racy window: unchanged files are reused, not recopied
    first = snapper.snapshot()
    (tree / "a.txt").write_text("changed")
    second = snapper.snapshot()
    assert snapper.stored_packs() == 2  # pack 1: everything; pack 2: the new a.txt
    (tree / "a.txt").write_text("changed again")
    time.sleep(0.05)
    third = snapper.snapshot()  # pack 3: a.txt again; the rest still from pack 1
    assert snapper.stored_packs() == 3
    snapper.discard(second)  # nothing else uses pack 2
    assert snapper.stored_packs() == 2
    with pytest.raises(FilesystemError):
        snapper.restore(second)
    del first, third
    gc.collect()
    # The latest snapshot's content stays for the next snapshot to reuse (packs 1 and 3).
    assert snapper.stored_packs() == 2
    assert len(list(snapper.storage.iterdir())) == 2
    storage = snapper.storage
    snapper.close()
    assert not storage.exists()


def test_unchanged_files_are_not_copied_again(tree, snapper, monkeypatch):
    # Files written just now are "racy" and always recopied; this test is about the others.
    monkeypatch.setattr("haversack.filesystem._snapshot._RACY_NS", 0)
    first = snapper.snapshot()
    pack_dir = snapper.storage
    size_after_first = sum(p.stat().st_size for p in pack_dir.iterdir())
    assert size_after_first > 0
    second = snapper.snapshot()  # nothing changed: no new pack
    assert sum(p.stat().st_size for p in pack_dir.iterdir()) == size_after_first
    assert len(second) == len(first) == len(fingerprint(tree))  # root counted once each side
    (tree / "a.txt").write_text("changed")
    third = snapper.snapshot()
    assert len(third) == len(first)
    grown = sum(p.stat().st_size for p in pack_dir.iterdir()) - size_after_first
    assert grown == len("changed")


def test_foreign_snapshot_is_rejected(tree, tmp_path, snapper):
    other = DirectorySnapshotter(tree, storage_parent=tmp_path)
    try:
        snap = other.snapshot()
        with pytest.raises(FilesystemError, match="not taken by this"):
            snapper.restore(snap)
    finally:
        other.close()


def test_dropped_snapshots_leave_a_base_so_unchanged_files_are_not_copied_again(tree, snapper):
    # An executor drops each call's snapshot when the call ends: the next call's snapshot
    # must still copy only what changed, not the whole workspace.
    time.sleep(0.05)
    snapper.snapshot()
    gc.collect()
    packs_before = sorted(snapper.storage.iterdir())
    sizes_before = {p.name: p.stat().st_size for p in packs_before}
    snapper.snapshot()  # nothing changed: nothing is copied
    gc.collect()
    assert {p.name: p.stat().st_size for p in snapper.storage.iterdir()} == sizes_before
    (tree / "a.txt").write_text("edited\\n")
    time.sleep(0.05)
    snapper.snapshot()  # one file changed: its new pack holds just that file
    gc.collect()
    new = [p for p in snapper.storage.iterdir() if p.name not in sizes_before]
    assert [p.stat().st_size for p in new] == [len("edited\\n")]
