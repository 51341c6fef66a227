"""snapshot() is O(1) and copies nothing; restore() is exact."""

from __future__ import annotations

import pytest

from haversack.errors import FilesystemError
from haversack_vfs import InMemoryFilesystem

from ._dump import dump


def populate(fs: InMemoryFilesystem) -> None:
    fs.write("a.txt", "alpha\r\n")
    fs.write("src/pkg/b.py", "x = 1\n")
    fs.mkdir("empty/dir")


def test_restore_undoes_every_kind_of_change():
    fs = InMemoryFilesystem()
    populate(fs)
    before = dump(fs)
    counts = (fs.file_count, fs.directory_count, fs.total_bytes)
    snap = fs.snapshot()
    fs.write("a.txt", "more", mode="append")
    fs.edit("src/pkg/b.py", "1", "2")
    fs.delete("empty", recursive=True)
    fs.write("new/deep/file", "n")
    fs.delete("src", recursive=True)
    fs.mkdir("src")
    assert dump(fs) != before
    fs.restore(snap)
    assert dump(fs) == before
    assert (fs.file_count, fs.directory_count, fs.total_bytes) == counts


def test_snapshot_is_not_affected_by_later_changes_and_can_be_reused():
    fs = InMemoryFilesystem()
    populate(fs)
    snap = fs.snapshot()
    expected = dump(fs)
    for round_number in range(3):
        for i in range(50):
            fs.write(f"r{round_number}/f{i}", str(i))
        fs.delete("a.txt")
        fs.restore(snap)
        assert dump(fs) == expected


def test_nested_snapshots_restore_to_their_own_points():
    fs = InMemoryFilesystem()
    dumps = []
    snaps = []
    for step in range(5):
        snaps.append(fs.snapshot())
        dumps.append(dump(fs))
        fs.write(f"level{step}/file", f"content {step}")
        if step:
            fs.edit(f"level{step - 1}/file", "content", "changed")
    final = dump(fs)
    for snap, expected in reversed(list(zip(snaps, dumps, strict=True))):
        fs.restore(snap)
        assert dump(fs) == expected
    # Restoring an older snapshot does not invalidate a newer one.
    fs.restore(snaps[4])
    assert dump(fs) == dumps[4]
    fs.write("level4/file", "content 4", mode="create")
    fs.edit("level3/file", "content", "changed")
    assert dump(fs) == final


def test_restore_after_many_mutations_is_exact():
    fs = InMemoryFilesystem()
    for i in range(300):
        fs.write(f"d{i % 7}/f{i}.txt", f"line {i}\n" * (i % 5))
    snap = fs.snapshot()
    expected = dump(fs)
    for i in range(300):
        if i % 3 == 0:
            fs.delete(f"d{i % 7}/f{i}.txt")
        elif i % 3 == 1:
            fs.write(f"d{i % 7}/f{i}.txt", "x", mode="overwrite")
        else:
            fs.write(f"d{i % 7}/f{i}.txt", "y", mode="append")
    fs.delete("d0", recursive=True)
    fs.restore(snap)
    assert dump(fs) == expected


def test_snapshot_copies_nothing():
    # The snapshot holds the very same (immutable) state object: no copy was made.
    fs = InMemoryFilesystem()
    for i in range(1000):
        fs.write(f"f{i}", "x")
    first = fs.snapshot()
    second = fs.snapshot()
    assert first.state is second.state  # type: ignore[attr-defined]
    assert "1000 file(s)" in repr(first)


def test_failed_operations_change_nothing():
    fs = InMemoryFilesystem(max_files=2)
    populate(fs)
    before = dump(fs)
    with pytest.raises(FilesystemError, match="2 files"):
        fs.write("x/y/z/new", "a")  # parents would be created before the limit trips
    assert dump(fs) == before
    assert fs.directory_count == 4


def test_restore_refuses_foreign_snapshots():
    fs = InMemoryFilesystem()
    other = InMemoryFilesystem()
    with pytest.raises(FilesystemError, match="not a snapshot taken from this filesystem"):
        fs.restore(other.snapshot())
    with pytest.raises(FilesystemError, match="not a snapshot"):
        fs.restore(object())
