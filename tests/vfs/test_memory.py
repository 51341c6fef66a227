"""Every InMemoryFilesystem operation: success paths and error paths."""

from __future__ import annotations

import pytest

from haversack import FileStat, Filesystem, ReadWindow, Snapshottable
from haversack.errors import (
    FilesystemLimitError,
    InvalidArgumentError,
    InvalidPathError,
    PathExistsError,
    PathKindError,
    PathNotFoundError,
    ReadOnlyFilesystemError,
)
from haversack_vfs import InMemoryFilesystem


@pytest.fixture
def fs():
    return InMemoryFilesystem()


def test_implements_the_protocols(fs):
    assert isinstance(fs, Filesystem)
    assert isinstance(fs, Snapshottable)
    assert fs.mount_point == "/workspace"
    assert fs.normalize("/workspace/a//b/ ") == "a/b"


def test_custom_mount_point():
    fs = InMemoryFilesystem(mount_point="/srv/app/")
    assert fs.mount_point == "/srv/app"
    fs.write("/srv/app/x.txt", "x")
    assert fs.exists("x.txt")
    with pytest.raises(PathNotFoundError, match="/srv/app/missing"):
        fs.read("missing")


# -- write -----------------------------------------------------------------------------


def test_write_create_returns_utf8_bytes_and_creates_parents(fs):
    assert fs.write("a/b/c.txt", "héllo") == 6
    assert fs.stat("a") == FileStat("a", "directory")
    assert fs.stat("a/b/c.txt") == FileStat("a/b/c.txt", "file", 6)
    assert fs.read_text("a/b/c.txt") == "héllo"


def test_write_create_refuses_existing_file(fs):
    fs.write("a.txt", "one")
    with pytest.raises(PathExistsError, match=r"already exists. Edit it.*overwrite") as info:
        fs.write("a.txt", "two")
    assert info.value.path == "a.txt"
    assert fs.read_text("a.txt") == "one"


def test_write_overwrite_and_append(fs):
    assert fs.write("a.txt", "one", mode="overwrite") == 3
    assert fs.write("a.txt", "two", mode="overwrite") == 3
    assert fs.write("a.txt", "+é", mode="append") == 3
    assert fs.read_text("a.txt") == "two+é"
    assert fs.stat("a.txt").size == 6
    assert fs.write("new.txt", "x", mode="append") == 1
    assert fs.total_bytes == 7


def test_write_without_parents_needs_the_parent(fs):
    with pytest.raises(PathNotFoundError, match="mkdir"):
        fs.write("a/b.txt", "x", parents=False)
    assert not fs.exists("a")
    fs.mkdir("a")
    fs.write("a/b.txt", "x", parents=False)
    assert fs.exists("a/b.txt")


def test_write_to_a_directory_or_root_is_a_kind_error(fs):
    fs.mkdir("d")
    for mode in ("create", "overwrite", "append"):
        with pytest.raises(PathKindError, match="is a directory"):
            fs.write("d", "x", mode=mode)
    with pytest.raises(PathKindError, match="root"):
        fs.write("/workspace", "x")


def test_write_under_a_file_is_a_kind_error(fs):
    fs.write("a", "file")
    with pytest.raises(PathKindError, match="is a file"):
        fs.write("a/b", "x")
    with pytest.raises(PathKindError, match="is a file"):
        fs.write("a/b/c/d", "x")
    assert fs.read_text("a") == "file"
    assert fs.file_count == 1
    assert fs.directory_count == 0


def test_write_rejects_bad_mode_and_bad_content(fs):
    with pytest.raises(InvalidArgumentError, match="mode"):
        fs.write("a", "x", mode="truncate")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="must be text"):
        fs.write("a", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="surrogate"):
        fs.write("a", "bad \ud800 text")
    assert not fs.exists("a")


# -- read ------------------------------------------------------------------------------

TRICKY = [
    "",
    "no final newline",
    "line\n",
    "a\r\nb\r\n",
    "mixed\r\nends\nand\rlone cr\n",
    "\n\n\n",
    "  leading and trailing spaces  \n\t\ttabs\t\n",
    "unicode: é ü 漢字 🎉 \u200b zero-width\n",
    "\ufeffBOM first",
    "trailing\r\n\r\n",
    "form\x0cfeed\x0bvtab\x1c\x85\u2028not line breaks\n",
]


@pytest.mark.parametrize("content", TRICKY)
def test_content_round_trips_byte_for_byte(fs, content):
    fs.write("f.txt", content)
    assert fs.read_text("f.txt") == content
    assert fs.read("f.txt").content == content
    assert fs.stat("f.txt").size == len(content.encode("utf-8"))
    # Any window size concatenates back to the exact file.
    window = fs.read("f.txt")
    for size in (1, 2, 3):
        pieces = []
        offset = 0
        while offset < window.total_lines:
            pieces.append(fs.read("f.txt", offset=offset, limit=size).content)
            offset += size
        assert "".join(pieces) == content


def test_read_windows_and_line_counts(fs):
    fs.write("f", "a\r\nb\nc")
    assert fs.read("f") == ReadWindow("f", "a\r\nb\nc", 0, 3)
    assert fs.read("f", offset=1, limit=1) == ReadWindow("f", "b\n", 1, 3)
    assert fs.read("f", offset=0, limit=1).content == "a\r\n"
    assert fs.read("f", offset=2).content == "c"
    assert fs.read("f", offset=10) == ReadWindow("f", "", 10, 3)
    fs.write("g", "x\n")
    assert fs.read("g").total_lines == 1
    fs.write("e", "")
    assert fs.read("e") == ReadWindow("e", "", 0, 0)
    fs.write("lone", "a\rb\rc")
    assert fs.read("lone").total_lines == 1  # only \n ends a line


def test_read_rejects_bad_windows(fs):
    fs.write("f", "x")
    with pytest.raises(InvalidArgumentError, match="offset"):
        fs.read("f", offset=-1)
    with pytest.raises(InvalidArgumentError, match="limit"):
        fs.read("f", limit=0)
    with pytest.raises(InvalidArgumentError, match="offset"):
        fs.read("f", offset=True)


def test_read_missing_and_directory(fs):
    missing = r"/workspace/nope. List its parent directory or search with a glob"
    with pytest.raises(PathNotFoundError, match=missing) as info:
        fs.read("nope")
    assert info.value.path == "nope"
    fs.mkdir("d")
    with pytest.raises(PathKindError, match="is a directory"):
        fs.read("d")
    with pytest.raises(PathKindError, match="is a directory"):
        fs.read_text("/workspace")


# -- edit ------------------------------------------------------------------------------


def test_edit_unique_match(fs):
    fs.write("f", "alpha\r\nbeta\r\ngamma")
    assert fs.edit("f", "beta\r\n", "BETA\n") == 1
    assert fs.read_text("f") == "alpha\r\nBETA\ngamma"
    assert fs.stat("f").size == len(b"alpha\r\nBETA\ngamma")


def test_edit_zero_matches_says_what_to_do(fs):
    fs.write("f", "abc")
    with pytest.raises(InvalidArgumentError, match=r"not found.*exactly"):
        fs.edit("f", "xyz", "q")


def test_edit_multiple_matches_needs_replace_all(fs):
    fs.write("f", "x = 1\nx = 1\nx = 1\n")
    with pytest.raises(InvalidArgumentError, match=r"occurs 3 times.*replace_all"):
        fs.edit("f", "x = 1", "x = 2")
    assert fs.read_text("f") == "x = 1\nx = 1\nx = 1\n"
    assert fs.edit("f", "x = 1", "y = 22", replace_all=True) == 3
    assert fs.read_text("f") == "y = 22\n" * 3
    assert fs.stat("f").size == 21


def test_edit_overlapping_occurrences_are_ambiguous(fs):
    fs.write("f", "aaa")
    with pytest.raises(InvalidArgumentError, match="occurs 2 times"):
        fs.edit("f", "aa", "b")


def test_edit_rejects_empty_old_and_missing_and_directory(fs):
    fs.write("f", "abc")
    with pytest.raises(InvalidArgumentError, match="must not be empty"):
        fs.edit("f", "", "x")
    with pytest.raises(PathNotFoundError):
        fs.edit("nope", "a", "b")
    fs.mkdir("d")
    with pytest.raises(PathKindError):
        fs.edit("d", "a", "b")


def test_edit_respects_the_file_size_limit():
    fs = InMemoryFilesystem(max_file_bytes=10)
    fs.write("f", "aaaa")
    with pytest.raises(FilesystemLimitError, match="limit for one file is 10"):
        fs.edit("f", "a", "bbb", replace_all=True)
    assert fs.read_text("f") == "aaaa"


# -- list / stat / exists --------------------------------------------------------------


def test_list_sorted_direct_children(fs):
    fs.write("b.txt", "bb")
    fs.write("a/x.txt", "x")
    fs.mkdir("c")
    assert fs.list() == (
        FileStat("a", "directory"),
        FileStat("b.txt", "file", 2),
        FileStat("c", "directory"),
    )
    assert fs.list("/workspace/a/") == (FileStat("a/x.txt", "file", 1),)
    assert fs.list("c") == ()


def test_list_errors(fs):
    fs.write("f", "x")
    with pytest.raises(PathKindError, match="is a file"):
        fs.list("f")
    with pytest.raises(PathNotFoundError):
        fs.list("nope")


def test_stat_and_exists(fs):
    assert fs.stat("") == FileStat("", "directory")
    assert fs.exists("/workspace")
    assert not fs.exists("x")
    with pytest.raises(PathNotFoundError):
        fs.stat("x")
    with pytest.raises(InvalidPathError):
        fs.exists("../x")


# -- mkdir -----------------------------------------------------------------------------


def test_mkdir_variants(fs):
    fs.mkdir("a/b/c")
    assert fs.stat("a/b").kind == "directory"
    fs.mkdir("a/b/c")  # exist_ok by default
    with pytest.raises(PathExistsError):
        fs.mkdir("a/b/c", exist_ok=False)
    with pytest.raises(PathNotFoundError, match="parents=True"):
        fs.mkdir("x/y", parents=False)
    fs.mkdir("")  # the root always exists
    with pytest.raises(PathExistsError, match="already exists"):
        fs.mkdir("/workspace", exist_ok=False)
    fs.write("f", "x")
    with pytest.raises(PathKindError, match="is a file"):
        fs.mkdir("f")
    with pytest.raises(PathKindError, match="is a file"):
        fs.mkdir("f/sub")
    assert fs.directory_count == 3


# -- delete ----------------------------------------------------------------------------


def test_delete_file_returns_it(fs):
    fs.write("a/f", "x")
    assert fs.delete("/workspace/a/f") == ("a/f",)
    assert not fs.exists("a/f")
    assert fs.exists("a")
    assert fs.total_bytes == 0


def test_delete_tree_returns_exactly_the_removed_paths(fs):
    fs.write("d/one.txt", "1")
    fs.write("d/two.txt", "22")
    fs.write("d/sub/three.txt", "333")
    fs.mkdir("d/empty")
    fs.write("keep.txt", "k")
    removed = fs.delete("d", recursive=True)
    assert removed == ("d", "d/empty", "d/one.txt", "d/sub", "d/sub/three.txt", "d/two.txt")
    assert [s.path for s in fs.list()] == ["keep.txt"]
    assert (fs.file_count, fs.directory_count, fs.total_bytes) == (1, 0, 1)


def test_delete_directory_only_top_level_files_counts_them_all(fs):
    # The reference library reported "1 entry" here.
    fs.write("d/a", "a")
    fs.write("d/b", "b")
    assert fs.delete("d", recursive=True) == ("d", "d/a", "d/b")


def test_delete_non_empty_directory_needs_recursive(fs):
    fs.write("d/a", "a")
    with pytest.raises(PathKindError, match=r"holding 1 entry.*recursive=True"):
        fs.delete("d")
    fs.mkdir("empty")
    assert fs.delete("empty") == ("empty",)


def test_delete_errors(fs):
    with pytest.raises(PathNotFoundError):
        fs.delete("nope")
    with pytest.raises(InvalidPathError, match="root cannot be deleted"):
        fs.delete("/workspace/", recursive=True)


# -- limits and read-only --------------------------------------------------------------


def test_limits_raise_and_change_nothing():
    fs = InMemoryFilesystem(max_file_bytes=5, max_total_bytes=8, max_files=2, max_directories=1)
    with pytest.raises(FilesystemLimitError, match="limit for one file is 5"):
        fs.write("a", "123456")
    fs.write("a", "12345")
    with pytest.raises(FilesystemLimitError, match="limit is 8"):
        fs.write("b", "1234")
    fs.write("b", "123")
    with pytest.raises(FilesystemLimitError, match="2 files"):
        fs.write("c", "")
    with pytest.raises(FilesystemLimitError, match="limit for one file"):
        fs.write("a", "x", mode="append")
    fs.mkdir("d")
    with pytest.raises(FilesystemLimitError, match="1 directories"):
        fs.mkdir("e")
    with pytest.raises(FilesystemLimitError, match="1 directories"):
        fs.mkdir("x/y")
    assert fs.read_text("a") == "12345"
    assert (fs.file_count, fs.directory_count, fs.total_bytes) == (2, 1, 8)


def test_constructor_rejects_bad_limits():
    with pytest.raises(ValueError, match="max_files"):
        InMemoryFilesystem(max_files=-1)


def test_read_only_refuses_every_change():
    fs = InMemoryFilesystem(read_only=True)
    for action in (
        lambda: fs.write("a", "x"),
        lambda: fs.edit("a", "x", "y"),
        lambda: fs.mkdir("d"),
        lambda: fs.delete("a"),
    ):
        with pytest.raises(ReadOnlyFilesystemError, match="read-only"):
            action()
    assert fs.list() == ()


def test_repr_mentions_counts(fs):
    fs.write("a/b", "xy")
    assert repr(fs) == "InMemoryFilesystem(files=1, directories=1, bytes=2)"
