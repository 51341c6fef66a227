"""The ``Filesystem`` contract through the workspace agent: the in-memory workspace's operation
and search tests, run as written against ``AgentFilesystem`` on a Podman named volume (the
same tests ``tests/vfs/test_memory_semantics_on_a_directory.py`` runs on a host directory), so
the agent's answers, errors included, are the core's own."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from haversack import FileStat, Filesystem, Snapshottable
from haversack_podman import PodmanService
from haversack_podman._agent import AgentFilesystem

from ..vfs import test_memory as memory  # noqa: TID252 - the one contract
from ..vfs import test_search as search  # noqa: TID252
from ._agent_fixtures import new_volume, remove_volume, volume_path

pytestmark = pytest.mark.podman

IN_MEMORY_ONLY = {"test_repr_mentions_counts"}


class _Counted(AgentFilesystem):
    """The in-memory workspace's counters, counted in the volume from the host."""

    host_root: Path

    def _sizes(self) -> tuple[int, int, int]:
        files = directories = size = 0
        for top, dirs, names in os.walk(self.host_root):
            directories += len(dirs)
            files += len(names)
            size += sum(os.lstat(os.path.join(top, n)).st_size for n in names)
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


@pytest.fixture(scope="module")
def agent(podman_service: PodmanService) -> Iterator[_Counted]:
    volume = new_volume(podman_service)
    fs = _Counted(podman_service, volume, uid=1000, gid=1000)
    fs.host_root = volume_path(podman_service, volume)
    yield fs
    fs.close()
    remove_volume(podman_service, volume)


@pytest.fixture
def fs(request: pytest.FixtureRequest, agent: _Counted) -> _Counted:
    for entry in agent.list(""):
        agent.delete(entry.path, recursive=True)
    if request.function.__module__ == search.__name__:
        agent.write("a.py", "import os\nprint('hi')\n")
        agent.write("README.md", "# Title\nTODO: write\n")
        agent.write("src/pkg/b.py", "def f():\r\n    return 1  # TODO\r\n")
        agent.write("src/pkg/deep/c.py", "x = 1")
        agent.write("src/notes.txt", "todo later\nTODO now")
        agent.mkdir("empty")
    return agent


for _module in (memory, search):
    for _name, _test in vars(_module).items():
        if (
            _name.startswith("test_")
            and callable(_test)
            and _name not in IN_MEMORY_ONLY
            and "fs" in inspect.signature(_test).parameters
        ):
            globals()[_name] = _test


def test_agent_is_a_snapshottable_filesystem(fs):
    assert isinstance(fs, Filesystem)
    assert isinstance(fs, Snapshottable)
    assert fs.tracks_changes  # inotify works on the shared volume


def test_files_the_agent_writes_belong_to_the_command_user(fs):
    fs.write("owned/by.txt", "me")
    for rel in ("owned", "owned/by.txt"):
        st = os.stat(fs.host_root / rel)
        assert (st.st_uid, st.st_gid) == (1000, 1000)


def test_snapshot_restore_and_quota_through_the_agent(fs):
    fs.write("keep.txt", "one\n")
    snap = fs.snapshot()
    fs.write("keep.txt", "two\n", mode="overwrite")
    fs.write("new/file.txt", "x")
    fs.delete("keep.txt")
    assert fs.restore(snap) is None
    assert fs.read_text("keep.txt") == "one\n"
    assert not fs.exists("new")
    usage = fs.check_quota()
    assert usage.files == 1
    assert usage == fs.usage()
    fs.discard(snap)
    fs.write("after.txt", "y")  # the release rides on the next request
    assert fs.list("") == (FileStat("after.txt", "file", 1), FileStat("keep.txt", "file", 4))
