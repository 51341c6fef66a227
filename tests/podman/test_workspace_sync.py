"""The private copy of a user's directory follows both sides at the cost of the change, real
Podman: a change made on the host between commands reaches the container, a command's change
reaches the host, and after a lost inotify queue (a real overflow, on either side) everything
still syncs, through the trackers' whole-walk fallback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from haversack_podman import PYTHON_IMAGE, Sandbox, SandboxConfig

pytestmark = pytest.mark.podman


def _queue_limit() -> int:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        message = f"max_queued_events is {limit}: too many files to overflow it in a test"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"CI: {message}; the overflow fallback would go untested")
        pytest.skip(message)
    return limit


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "flood").mkdir()
    (root / "README.md").write_text("# Project\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    return root


@pytest.fixture
def sandbox(podman_service: object, project: Path) -> Iterator[Sandbox]:
    box = Sandbox(SandboxConfig(image=PYTHON_IMAGE, workspace=project))
    yield box
    box.close()


def _sh(box: Sandbox, command: str) -> str:
    done = box.exec(command)
    assert done.exit_code == 0, (done.stdout, done.stderr)
    assert (done.refused, done.kept, done.skipped) == ((), (), ()), done
    return done.stdout


def _trackers(box: Sandbox) -> tuple[int, int]:
    """How many whole walks the user-side and the copy-side trackers made."""
    mirror = box._mirror
    assert mirror is not None
    return mirror._user_tracker.full_walks, mirror._copy_tracker.full_walks


def test_host_changes_between_commands_reach_the_container(sandbox, project):
    _sh(sandbox, "true")
    walks = _trackers(sandbox)
    (project / "src" / "app.py").write_text("print('edited on the host')\n")
    (project / "README.md").unlink()
    (project / "src" / "pkg").rename(project / "src" / "lib")
    (project / "docs" / "deep").mkdir(parents=True)
    (project / "docs" / "deep" / "new.md").write_text("new on the host\n")
    (project / "src" / "lib" / "mod.py").chmod(0o600)
    out = _sh(
        sandbox,
        "cat src/app.py docs/deep/new.md src/lib/mod.py; stat -c %a src/lib/mod.py;"
        " ls README.md src/pkg 2>&1 | grep -c 'No such file'",
    )
    assert out == "print('edited on the host')\nnew on the host\nX = 1\n600\n2\n"
    assert _trackers(sandbox) == walks  # followed from events, no whole walk


def test_command_changes_reach_the_host(sandbox, project):
    _sh(sandbox, "true")
    walks = _trackers(sandbox)
    _sh(
        sandbox,
        "echo changed >> src/app.py; rm README.md; mkdir -p out/a; echo made > out/a/b.txt;"
        " mv src/pkg src/lib; chmod 600 src/lib/mod.py",
    )
    assert (project / "src" / "app.py").read_text() == "print('hi')\nchanged\n"
    assert not (project / "README.md").exists()
    assert (project / "out" / "a" / "b.txt").read_text() == "made\n"
    assert not (project / "src" / "pkg").exists()
    assert (project / "src" / "lib" / "mod.py").read_text() == "X = 1\n"
    assert (project / "src" / "lib" / "mod.py").stat().st_mode & 0o777 == 0o600
    assert _trackers(sandbox) == walks
    # A no-op command changes nothing on either side.
    before = {p: p.stat().st_mtime_ns for p in project.rglob("*")}
    _sh(sandbox, "true")
    assert {p: p.stat().st_mtime_ns for p in project.rglob("*")} == before


def test_after_a_host_side_overflow_everything_still_syncs(sandbox, project):
    limit = _queue_limit()
    _sh(sandbox, "true")
    user_walks = _trackers(sandbox)[0]
    count = limit // 2 + 100  # each new file queues a create and a close-after-write
    for i in range(count):
        (project / "flood" / f"f{i:06d}").write_bytes(b"x")
    (project / "src" / "app.py").write_text("print('edited among the flood')\n")
    (project / "README.md").unlink()
    out = _sh(sandbox, "ls flood | wc -l; cat src/app.py; ls README.md 2>&1 | grep -c 'No such'")
    assert out.split() == [str(count), "print('edited", "among", "the", "flood')", "1"]
    assert _trackers(sandbox)[0] == user_walks + 1  # the overflow made it walk the directory
    # Tracking resumes: the next change is followed from events again.
    (project / "src" / "app.py").write_text("print('after')\n")
    assert _sh(sandbox, "cat src/app.py") == "print('after')\n"
    assert _trackers(sandbox)[0] == user_walks + 1


def test_after_a_copy_side_overflow_every_change_of_the_command_reaches_the_host(sandbox, project):
    limit = _queue_limit()
    _sh(sandbox, "true")
    copy_walks = _trackers(sandbox)[1]
    count = limit // 2 + 100
    script = f"for i in range({count}): open('flood/f%06d' % i, 'w').write('x')"
    _sh(sandbox, f'python3 -c "{script}"; echo changed >> src/app.py; rm README.md')
    assert len(os.listdir(project / "flood")) == count
    assert (project / "flood" / "f000000").read_text() == "x"
    assert (project / "src" / "app.py").read_text() == "print('hi')\nchanged\n"
    assert not (project / "README.md").exists()
    assert _trackers(sandbox)[1] == copy_walks + 1
