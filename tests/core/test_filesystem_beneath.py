"""``haversack.filesystem.Beneath``: resolution beneath a root that never follows a link.

Every case runs twice: with ``openat2`` (the kernel resolves) and with the portable
per-component ``O_NOFOLLOW`` walk.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from haversack.errors import LinkRefusedError, PathKindError, PathNotFoundError
from haversack.filesystem import Beneath

CANARY = "host secret: never readable through the workspace\n"


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def tree(request, tmp_path):
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text(CANARY)
    (root / "out").symlink_to(outside)  # absolute link out
    (root / "rel").symlink_to("../outside")  # relative link out
    (root / "in").symlink_to("a")  # a link that stays inside: refused all the same
    (root / "a" / "flink").symlink_to("b/f")
    beneath = Beneath(root, use_openat2=request.param)
    if request.param and not beneath.uses_openat2:
        pytest.fail("this kernel has openat2 (Linux 5.6+) yet Beneath did not use it")
    yield root, beneath
    beneath.close()


def _read(beneath: Beneath, rel: str) -> bytes:
    fd = beneath.open(rel, os.O_RDONLY)
    try:
        return os.read(fd, 1000)
    finally:
        os.close(fd)


def test_plain_paths_open(tree):
    _, beneath = tree
    assert _read(beneath, "a/b/f") == b"inside\n"
    fd = beneath.open_dir("a")
    try:
        assert sorted(os.listdir(fd)) == ["b", "flink"]
    finally:
        os.close(fd)


@pytest.mark.parametrize("rel", ["out/canary", "rel/canary", "in/b/f", "a/flink", "out", "in"])
def test_a_link_at_any_component_is_refused(tree, rel):
    _, beneath = tree
    with pytest.raises(LinkRefusedError, match="symbolic link"):
        _read(beneath, rel)


def test_parent_gives_a_handle_for_at_calls(tree):
    root, beneath = tree
    with beneath.parent("a/b/f") as (fd, name):
        assert name == "f"
        os.unlink(name, dir_fd=fd)
    assert not (root / "a" / "b" / "f").exists()
    with pytest.raises(LinkRefusedError), beneath.parent("out/canary"):
        pass


def test_missing_and_wrong_kind_are_precise(tree):
    _, beneath = tree
    with pytest.raises(PathNotFoundError, match="Nothing exists at nope/x"):
        _read(beneath, "nope/x")
    with pytest.raises(PathKindError, match="is a file, not a directory"):
        _read(beneath, "a/b/f/x")


def test_create_is_relative_to_the_handle(tree):
    root, beneath = tree
    fd = beneath.open("a/new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"x")
    os.close(fd)
    assert (root / "a" / "new.txt").read_bytes() == b"x"
    with pytest.raises(LinkRefusedError):
        beneath.open("out/planted.txt", os.O_WRONLY | os.O_CREAT, 0o600)
    assert not (root.parent / "outside" / "planted.txt").exists()


def test_the_root_handle_survives_a_rename_of_the_root(tree, tmp_path):
    """The handle names the directory, not the path: moving the root does not redirect it."""
    root, beneath = tree
    moved = tmp_path / "moved"
    root.rename(moved)
    root.mkdir()
    (root / "a").mkdir()
    (root / "a" / "decoy").write_text("decoy")
    assert _read(beneath, "a/b/f") == b"inside\n"


_EXCHANGER = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
"""


def test_a_directory_swapped_for_a_link_in_a_tight_loop_never_leaks_the_host(tree):
    """The red team's attack: swap ``a`` with a link to the host directory while opening
    ``a/canary``. Either the real file is read or the link is refused; never the canary.

    The swapper is a separate process (a thread shares the GIL and barely interleaves on a
    loaded machine); reads go on until both outcomes were seen (at most 200,000 reads).
    """
    root, beneath = tree
    (root / "a" / "canary").write_text("workspace copy\n")
    (root / "swap").symlink_to(root.parent / "outside")
    swapper = subprocess.Popen(
        [sys.executable, "-c", _EXCHANGER, str(root / "a"), str(root / "swap")]
    )
    outcomes = {"inside": 0, "refused": 0, "missing": 0}
    try:
        for _ in range(200_000):
            try:
                data = _read(beneath, "a/canary")
            except LinkRefusedError:
                outcomes["refused"] += 1
            except (PathNotFoundError, PathKindError):
                outcomes["missing"] += 1
            else:
                assert data != CANARY.encode(), "read a host file through a swapped directory"
                assert data == b"workspace copy\n"
                outcomes["inside"] += 1
            if outcomes["inside"] >= 100 and outcomes["refused"] >= 100:
                break
    finally:
        swapper.kill()
        swapper.wait()
    assert outcomes["inside"] > 0, outcomes
    assert outcomes["refused"] > 0, outcomes
