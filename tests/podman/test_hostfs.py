"""``HostFilesystem`` on a plain host directory: the full protocol, confinement, snapshots.

These need no Podman: the class works on the workspace directory alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from haversack import Filesystem, Snapshottable
from haversack.errors import (
    FilesystemError,
    FilesystemLimitError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
)
from haversack_podman import HostFilesystem, WorkspaceEscapeError


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def fs(ws: Path, tmp_path: Path):
    store = tmp_path / "store"
    store.mkdir()
    fs = HostFilesystem(ws, snapshot_storage=store)
    yield fs
    fs.close()


def test_implements_the_protocols(fs):
    assert isinstance(fs, Filesystem)
    assert isinstance(fs, Snapshottable)
    assert fs.mount_point == "/workspace"


def test_content_round_trips_byte_for_byte(fs, ws):
    text = "a\r\nb\rc\n\n  tail  é ✓\U0001f600"
    assert fs.write("x.txt", text) == len(text.encode())
    assert (ws / "x.txt").read_bytes() == text.encode("utf-8")
    assert fs.read_text("/workspace/x.txt") == text
    assert fs.read(" x.txt ").content == text


def test_read_windows_concatenate_to_the_file(fs):
    text = "".join(f"line {i}\n" for i in range(10)) + "last"
    fs.write("f.txt", text)
    whole = fs.read("f.txt")
    assert whole.total_lines == 11
    parts = [fs.read("f.txt", offset=o, limit=3).content for o in range(0, 11, 3)]
    assert "".join(parts) == text
    assert fs.read("f.txt", offset=20).content == ""


def test_write_modes(fs):
    fs.write("a/b/c.txt", "one")
    with pytest.raises(PathExistsError):
        fs.write("a/b/c.txt", "two")
    fs.write("a/b/c.txt", "two", mode="overwrite")
    fs.write("a/b/c.txt", "+", mode="append")
    assert fs.read_text("a/b/c.txt") == "two+"
    with pytest.raises(PathNotFoundError):
        fs.write("nope/x.txt", "x", parents=False)
    with pytest.raises(PathKindError):
        fs.write("a", "x", mode="overwrite")
    with pytest.raises(PathKindError):
        fs.write("a/b/c.txt/d", "x")


def test_writes_are_owned_by_the_container_user(fs, ws):
    if os.geteuid() != 0:
        pytest.skip("ownership is only changed when running as root")
    fs.write("d/e/f.txt", "x")
    fs.mkdir("g")
    for rel in ("d", "d/e", "d/e/f.txt", "g"):
        st = (ws / rel).stat()
        assert (st.st_uid, st.st_gid) == (1000, 1000), rel


def test_edit(fs):
    fs.write("e.txt", "x = 1\ny = 1\n")
    with pytest.raises(FilesystemError, match="occurs 2 times"):
        fs.edit("e.txt", "= 1", "= 2")
    assert fs.edit("e.txt", "y = 1", "y = 3") == 1
    assert fs.edit("e.txt", "= ", "== ", replace_all=True) == 2
    assert fs.read_text("e.txt") == "x == 1\ny == 3\n"
    with pytest.raises(FilesystemError, match="not found"):
        fs.edit("e.txt", "zzz", "y")


def test_list_stat_exists(fs):
    fs.write("b.txt", "12345")
    fs.mkdir("a/deep")
    assert [(s.path, s.kind, s.size) for s in fs.list("")] == [
        ("a", "directory", 0),
        ("b.txt", "file", 5),
    ]
    assert fs.stat("/workspace/b.txt").size == 5
    assert fs.exists("a/deep")
    assert not fs.exists("c")
    with pytest.raises(PathKindError):
        fs.list("b.txt")
    with pytest.raises(PathNotFoundError):
        fs.stat("missing")


def test_glob_uses_the_project_dialect(fs):
    for path in ("a.py", "src/b.py", "src/x/c.py", "src/x/d.txt", ".env"):
        fs.write(path, "x")
    assert fs.glob("*.py") == ("a.py",)
    assert fs.glob("**/*.py") == ("a.py", "src/b.py", "src/x/c.py")
    assert fs.glob("src/**") == ("src/b.py", "src/x/c.py", "src/x/d.txt")
    assert fs.glob("*.py", path="src") == ("src/b.py",)
    assert fs.glob("*") == (".env", "a.py")
    with pytest.raises(InvalidPathError):
        fs.glob("a**")


def test_grep(fs, ws):
    fs.write("a.py", "def f():\n    return 1\n")
    fs.write("src/b.py", "def g():\r\n    pass\r\n")
    fs.write("notes.txt", "def not_python\n")
    (ws / "bin.dat").write_bytes(b"\xff\xfedef binary\n")
    found = fs.grep(r"^def \w+", glob="**/*.py")
    assert [(m.path, m.line_number, m.line) for m in found.matches] == [
        ("a.py", 1, "def f():"),
        ("src/b.py", 1, "def g():"),
    ]
    assert len(fs.grep("def").matches) == 3  # the binary file is skipped
    assert fs.grep("def", max_matches=1).truncated
    assert [m.path for m in fs.grep("pass", path="src/b.py").matches] == ["src/b.py"]


def test_delete_and_mkdir(fs):
    fs.write("d/x.txt", "x")
    fs.write("d/e/y.txt", "y")
    with pytest.raises(PathKindError):
        fs.delete("d")
    assert fs.delete("d", recursive=True) == ("d", "d/e", "d/e/y.txt", "d/x.txt")
    assert not fs.exists("d")
    with pytest.raises(InvalidPathError):
        fs.delete("")
    fs.mkdir("m")
    with pytest.raises(PathExistsError):
        fs.mkdir("m", exist_ok=False)
    with pytest.raises(PathNotFoundError):
        fs.mkdir("p/q", parents=False)


def test_symlinks_leaving_the_workspace_are_refused(fs, ws, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    outside_dir = tmp_path / "outside"
    outside_dir.mkdir()
    (ws / "leak.txt").symlink_to(secret)
    (ws / "leakdir").symlink_to(outside_dir)
    (ws / "dangling").symlink_to(tmp_path / "new.txt")
    for call in (
        lambda: fs.read_text("leak.txt"),
        lambda: fs.write("leak.txt", "x", mode="overwrite"),
        lambda: fs.write("leak.txt", "x", mode="append"),
        lambda: fs.write("leakdir/x.txt", "x"),
        lambda: fs.write("dangling", "x", mode="overwrite"),
        lambda: fs.edit("leak.txt", "host", "x"),
        lambda: fs.list("leakdir"),
        lambda: fs.mkdir("leakdir/sub"),
        lambda: fs.stat("leak.txt"),
    ):
        with pytest.raises(WorkspaceEscapeError, match="outside the workspace"):
            call()
    assert secret.read_text() == "host secret"
    assert list(outside_dir.iterdir()) == []
    assert not (tmp_path / "new.txt").exists()
    assert not fs.exists("leak.txt")
    names = [s.path for s in fs.list("")]
    assert "leak.txt" not in names
    assert "leakdir" not in names
    assert fs.glob("**") == ()
    assert fs.grep("secret").matches == ()
    # The link itself can be removed; its target is untouched.
    assert fs.delete("leakdir", recursive=True) == ("leakdir",)
    assert outside_dir.exists()


def test_symlinks_inside_the_workspace_are_followed(fs, ws):
    fs.write("real/a.txt", "content")
    (ws / "alias.txt").symlink_to(ws / "real" / "a.txt")
    (ws / "rel").symlink_to("real")
    assert fs.read_text("alias.txt") == "content"
    assert fs.read_text("rel/a.txt") == "content"
    fs.write("rel/b.txt", "b")
    assert (ws / "real" / "b.txt").read_text() == "b"


def test_special_and_binary_files(fs, ws):
    os.mkfifo(ws / "pipe")
    with pytest.raises(PathKindError, match="special file"):
        fs.read_text("pipe")  # must not block
    with pytest.raises(PathKindError):
        fs.write("pipe", "x", mode="overwrite")
    assert [s.path for s in fs.list("")] == []
    (ws / "bin").write_bytes(b"\x00\xff\xfe")
    with pytest.raises(FilesystemError, match="not UTF-8"):
        fs.read_text("bin")


def test_size_limits(ws, tmp_path):
    fs = HostFilesystem(ws, max_file_bytes=10, snapshot_storage=tmp_path)
    try:
        fs.write("a.txt", "0123456789")
        with pytest.raises(FilesystemLimitError):
            fs.write("a.txt", "x", mode="append")
        with pytest.raises(FilesystemLimitError):
            fs.write("b.txt", "x" * 11)
        (ws / "big.txt").write_text("y" * 11)
        with pytest.raises(FilesystemLimitError):
            fs.read_text("big.txt")
        assert fs.read_text("a.txt") == "0123456789"
    finally:
        fs.close()


def test_hostile_paths_never_escape(fs, tmp_path):
    for bad in ("../x", "a/../../x", "a\x00b", "a\nb", "/workspace/../etc/passwd"):
        with pytest.raises(InvalidPathError):
            fs.write(bad, "x")
    fs.write("/etc/passwd", "inside")  # an absolute path is workspace-relative
    assert fs.read_text("etc/passwd") == "inside"
    assert not (tmp_path / "x").exists()


def test_snapshot_restore_is_exact_and_close_removes_storage(fs, ws):
    fs.write("keep.txt", "keep")
    fs.write("dir/edit.txt", "before")
    snap = fs.snapshot()
    fs.write("dir/edit.txt", "after", mode="overwrite")
    fs.write("new/file.txt", "new")
    fs.delete("keep.txt")
    (ws / "dir" / "edit.txt").chmod(0o600)
    fs.restore(snap)
    assert sorted(fs.glob("**")) == ["dir/edit.txt", "keep.txt"]
    assert fs.read_text("dir/edit.txt") == "before"
    assert (ws / "dir" / "edit.txt").stat().st_mode & 0o777 == 0o644
    storage = fs.snapshot_storage
    assert storage.exists()
    fs.close()
    assert not storage.exists()


@pytest.mark.parametrize(
    ("call", "positional", "keywords"),
    [
        ("read", ("a.txt",), {"offset": -1}),
        ("read", ("a.txt",), {"limit": 0}),
        ("write", ("b.txt", 5), {}),
        ("write", ("b.txt", "\ud800"), {}),
        ("edit", ("a.txt", "", "x"), {}),
        ("edit", ("a.txt", "absent", "x"), {}),
        ("edit", ("a.txt", "x", "y"), {}),
        ("edit", ("a.txt", 3, "y"), {}),
    ],
)
def test_bad_input_is_refused_in_the_same_words_as_the_in_memory_workspace(
    fs, call, positional, keywords
):
    from haversack_vfs import InMemoryFilesystem

    messages = []
    for target in (fs, InMemoryFilesystem()):
        target.write("a.txt", "x x\n")
        with pytest.raises(FilesystemError) as info:
            getattr(target, call)(*positional, **keywords)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
