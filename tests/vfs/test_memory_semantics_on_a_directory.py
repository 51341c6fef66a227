"""The in-memory workspace's operation and search tests, run as written against
``DirectoryFilesystem``: both workspaces must behave, and word their errors, alike.

Every test of ``test_memory.py`` and ``test_search.py`` that takes the ``fs`` fixture runs
here with ``fs`` a directory workspace (the search tests on the same files their own fixture
writes); in-memory-only features are listed in ``IN_MEMORY_ONLY``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from haversack.filesystem import DirectoryFilesystem

from . import test_memory as memory
from . import test_search as search

#: In-memory features with no directory counterpart.
IN_MEMORY_ONLY = {"test_repr_mentions_counts"}


class _Counted(DirectoryFilesystem):
    """The in-memory workspace's counters, counted on disk (the tests assert them)."""

    def _sizes(self) -> tuple[int, int, int]:
        files = directories = size = 0
        for _, dirs, names in os.walk(self.root):
            directories += len(dirs)
            files += len(names)
            size += sum(os.lstat(os.path.join(_, n)).st_size for n in names)
        return files, directories, size

    @property
    def file_count(self) -> int:
        return self._sizes()[0]

    @property
    def directory_count(self) -> int:
        return self._sizes()[1]

    @property
    def total_bytes(self) -> int:
        return self._sizes()[2]


def _directory(tmp_path: Path) -> _Counted:
    root = tmp_path / "ws"
    root.mkdir()
    return _Counted(root, storage_parent=tmp_path)


@pytest.fixture
def fs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DirectoryFilesystem]:
    fs = _directory(tmp_path)
    if request.function.__module__ == search.__name__:
        # The search tests' own fixture content, written the same way.
        fs.write("a.py", "import os\nprint('hi')\n")
        fs.write("README.md", "# Title\nTODO: write\n")
        fs.write("src/pkg/b.py", "def f():\r\n    return 1  # TODO\r\n")
        fs.write("src/pkg/deep/c.py", "x = 1")
        fs.write("src/notes.txt", "todo later\nTODO now")
        fs.mkdir("empty")
    yield fs
    fs.close()


for _module in (memory, search):
    for _name, _test in vars(_module).items():
        if (
            _name.startswith("test_")
            and callable(_test)
            and _name not in IN_MEMORY_ONLY
            and "fs" in inspect.signature(_test).parameters
        ):
            globals()[_name] = _test
