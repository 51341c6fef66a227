"""Every path argument goes through haversack.normalize_path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haversack.errors import InvalidPathError
from haversack.filesystem import MAX_PATH_DEPTH, MAX_SEGMENT_LENGTH, normalize_path
from haversack_vfs import InMemoryFilesystem


@pytest.mark.parametrize(
    "spelling",
    [
        "a/b.txt",
        "/a/b.txt",
        "/workspace/a/b.txt",
        "a//b.txt",
        " a/b.txt ",
        "./a/./b.txt",
        "a/b.txt/",
    ],
)
def test_spellings_reach_one_file(spelling):
    fs = InMemoryFilesystem()
    fs.write("a/b.txt", "x")
    assert fs.exists(spelling)
    assert fs.read_text(spelling) == "x"
    assert fs.stat(spelling).path == "a/b.txt"


def test_spaces_inside_segments_are_kept():
    fs = InMemoryFilesystem()
    fs.write("my dir/a file.txt", "x")
    assert fs.list("my dir")[0].path == "my dir/a file.txt"
    assert not fs.exists("mydir/a file.txt")


def test_unicode_is_not_folded():
    fs = InMemoryFilesystem()
    fs.write("café.txt", "nfc")
    fs.write("cafe\u0301.txt", "nfd")
    assert fs.read_text("café.txt") == "nfc"
    assert fs.read_text("cafe\u0301.txt") == "nfd"
    assert fs.file_count == 2


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("../etc/passwd", "'..'"),
        ("a/../../b", "'..'"),
        ("/workspace/../x", "'..'"),
        ("a\x00b", "control"),
        ("a\nb", "control"),
        ("/".join(["d"] * (MAX_PATH_DEPTH + 1)), "levels deep"),
        ("x" * (MAX_SEGMENT_LENGTH + 1), "characters long"),
    ],
)
def test_invalid_paths_are_rejected_by_every_operation(bad, message):
    fs = InMemoryFilesystem()
    fs.write("f", "x")
    operations = [
        lambda: fs.exists(bad),
        lambda: fs.stat(bad),
        lambda: fs.list(bad),
        lambda: fs.read(bad),
        lambda: fs.read_text(bad),
        lambda: fs.write(bad, "x"),
        lambda: fs.edit(bad, "x", "y"),
        lambda: fs.delete(bad),
        lambda: fs.mkdir(bad),
        lambda: fs.glob("*", path=bad),
        lambda: fs.grep("x", path=bad),
    ]
    for operation in operations:
        with pytest.raises(InvalidPathError, match=message):
            operation()
    assert fs.file_count == 1


def test_depth_and_segment_limits_accept_the_maximum():
    fs = InMemoryFilesystem()
    deep = "/".join(["d"] * (MAX_PATH_DEPTH - 1) + ["f"])
    fs.write(deep, "x")
    assert fs.read_text(deep) == "x"
    long_name = "n" * MAX_SEGMENT_LENGTH
    fs.write(long_name, "y")
    assert fs.exists(long_name)


def test_workspace_prefix_without_leading_slash_is_a_directory_name():
    fs = InMemoryFilesystem()
    fs.write("workspace/a", "x")
    assert fs.exists("/workspace/workspace/a")
    assert not fs.exists("/workspace/a")


_PIECES = st.sampled_from(
    [
        "a",
        "b.txt",
        ".",
        "..",
        "...",
        "/",
        "//",
        " ",
        "\t",
        "\u00a0",
        "\u2003",
        "\x00",
        "\x1c",
        "\x7f",
        "é",
        "workspace",
        "x" * 255,
        "y" * 256,
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_the_canonical_shortcut_only_accepts_what_normalisation_leaves_unchanged(path):
    # normalize_path skips rebuilding a path that passes _canonical: sound only if every
    # such path is its own canonical spelling.
    from haversack.filesystem._paths import _canonical, _rebuild

    if _canonical(path):
        assert _rebuild(path, "/workspace") == path
        assert _rebuild(path, "/") == path
    try:
        expected: str | type[InvalidPathError] = _rebuild(path, "/workspace")
    except InvalidPathError:
        expected = InvalidPathError
    try:
        got: str | type[InvalidPathError] = normalize_path(path)
    except InvalidPathError:
        got = InvalidPathError
    assert got == expected


def test_the_canonical_shortcut_covers_the_usual_spellings():
    from haversack.filesystem._paths import _canonical

    for path in ("a", "src/file0.py", ".github/workflows/ci.yml", "a b/c", "x/" * 31 + "y"):
        assert _canonical(path)
    for path in ("/a", "a/", "a//b", "./a", "a/..", " a", "x/" * 32 + "y", "a" * 256):
        assert not _canonical(path)
    # CPython before 3.11.5 (Debian 12's python3 is 3.11.2) ran the possessive pattern this
    # check replaced wrongly and took these as canonical.
    for path in ("../x", "..", "a/../b", "x/.."):
        assert not _canonical(path)
        with pytest.raises(InvalidPathError, match=r"uses '\.\.'"):
            normalize_path(path)
