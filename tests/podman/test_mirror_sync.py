"""``Mirror`` without a container: random changes on the user's side between syncs and on the
copy's side between a sync and a write-back (what a command does) always end with both trees
equal, with change tracking and with a whole walk every time (the fallback)."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from haversack_podman._mirror import Mirror


def _picture(root: Path) -> dict[str, tuple[str, str, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "", stat.S_IMODE(st.st_mode))
            elif not stat.S_ISREG(st.st_mode):
                out[rel] = ("special", "", 0)
            else:
                out[rel] = ("file", path.read_text(), stat.S_IMODE(st.st_mode))
    return out


def _change(rng: random.Random, root: Path, tag: str) -> None:
    dirs = [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    where = rng.choice(dirs)
    op = rng.randrange(7)
    if op == 0 or not files:
        (where / f"{tag}{rng.randrange(30)}").write_text(f"{tag} {rng.random()}")
    elif op == 1:
        (where / f"d{rng.randrange(10)}").mkdir(exist_ok=True)
    elif op == 2:
        rng.choice(files).unlink()
    elif op == 3:
        with rng.choice(files).open("a") as fh:
            fh.write(tag)
    elif op == 4:
        dst = where / f"r{rng.randrange(30)}"
        if not dst.is_dir():
            rng.choice(files).rename(dst)
    elif op == 5 and len(dirs) > 1:
        src = rng.choice(dirs[1:])
        dst = root / f"m{rng.randrange(10)}"
        if not dst.exists():
            src.rename(dst)
    else:
        rng.choice(files).chmod(rng.choice([0o600, 0o644]))


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_random_changes_on_both_sides_always_sync(tmp_path, seed, track):
    rng = random.Random(seed)
    user, copy = tmp_path / "user", tmp_path / "copy"
    user.mkdir()
    copy.mkdir()
    (user / "src").mkdir()
    (user / "src" / "a.txt").write_text("a")
    mirror = Mirror(user, copy, track_changes=track)
    try:
        for _ in range(15):
            for _ in range(rng.randint(0, 4)):
                _change(rng, user, "u")  # the user, between commands
            mirror.sync()
            assert _picture(copy) == _picture(user)
            for _ in range(rng.randint(0, 4)):
                _change(rng, copy, "c")  # the command
            expected = _picture(copy)
            back = mirror.write_back(lambda rel: None)
            assert (back.kept, back.refused, back.skipped) == ((), (), ())
            assert _picture(user) == expected
    finally:
        mirror.close()


def test_a_change_written_back_then_undone_by_someone_reaches_the_copy(tmp_path):
    """The write-back's own writes never hide a later change that restores the path to how
    the user's tracker last saw it (written, then rolled back)."""
    user, copy = tmp_path / "user", tmp_path / "copy"
    user.mkdir()
    copy.mkdir()
    (user / "a.txt").write_text("original")
    mirror = Mirror(user, copy)
    try:
        mirror.sync()
        (copy / "new.txt").write_text("by the command")
        assert mirror.write_back(lambda rel: None).written == ("new.txt",)
        (user / "new.txt").unlink()  # a rollback, before the next command
        mirror.sync()
        assert not (copy / "new.txt").exists()
    finally:
        mirror.close()


def test_the_first_copy_keeps_links_and_modes_and_skips_special_files(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    user, copy = tmp_path / "user", tmp_path / "copy"
    (user / "bin").mkdir(parents=True)
    copy.mkdir()
    (user / "bin" / "run.sh").write_text("#!/bin/sh\n")
    (user / "bin" / "run.sh").chmod(0o750)
    (user / "out").symlink_to(outside)
    (user / "inside").symlink_to("bin/run.sh")
    os.mkfifo(user / "pipe")
    mirror = Mirror(user, copy)
    try:
        mirror.sync()
        assert os.readlink(copy / "out") == str(outside)  # copied as a link, never followed
        assert not (copy / "out").resolve().is_relative_to(copy)
        assert os.readlink(copy / "inside") == "bin/run.sh"
        assert (copy / "bin" / "run.sh").stat().st_mode & 0o777 == 0o750
        assert (copy / "bin" / "run.sh").stat().st_ino != (user / "bin" / "run.sh").stat().st_ino
        assert not (copy / "pipe").exists()
        assert _picture(copy) == {k: v for k, v in _picture(user).items() if k != "pipe"}
    finally:
        mirror.close()


def test_after_forget_a_stale_copy_is_brought_back_to_the_user_directory(tmp_path):
    user, copy = tmp_path / "user", tmp_path / "copy"
    (user / "src").mkdir(parents=True)
    copy.mkdir()
    (user / "src" / "a.txt").write_text("a")
    mirror = Mirror(user, copy)
    try:
        mirror.sync()
        (copy / "src" / "a.txt").write_text("left by a failed write-back")
        (copy / "stale.txt").write_text("stale")
        (user / "src" / "b.txt").write_text("b")
        mirror.forget()
        mirror.sync()
        assert _picture(copy) == _picture(user)
    finally:
        mirror.close()
