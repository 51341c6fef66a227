"""Host mounts: allowed roots, budgets, include/exclude, symlink escapes, binary files."""

from __future__ import annotations

import os

import pytest

from haversack.errors import FilesystemLimitError, PackConfigError
from haversack_vfs import HostMount, InMemoryFilesystem, SkippedFile, load_host_mounts

from ._dump import dump


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    project = root / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "lib").mkdir(parents=True)
    (project / "README.md").write_bytes(b"# Readme\r\nline two")
    (project / "src" / "a.py").write_text("print('a')\n")
    (project / "src" / "pkg" / "b.py").write_text("b = 'ü'\n", encoding="utf-8")
    (project / "src" / "notes.txt").write_text("notes")
    (project / "node_modules" / "lib" / "index.js").write_text("js")
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary")
    return root


def snapshot_host(path):
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_directory_mount_loads_text_and_reports_binary(tree):
    fs = InMemoryFilesystem()
    host_before = snapshot_host(tree)
    report = load_host_mounts(fs, [HostMount("project", mount_path="repo")], allowed_roots=[tree])
    assert dump(fs)["repo/README.md"] == "# Readme\r\nline two"
    assert fs.read_text("repo/src/pkg/b.py") == "b = 'ü'\n"
    assert report.loaded == (
        "repo/README.md",
        "repo/node_modules/lib/index.js",
        "repo/src/a.py",
        "repo/src/notes.txt",
        "repo/src/pkg/b.py",
    )
    assert report.skipped == (SkippedFile("logo.png", "not UTF-8 text (binary)"),)
    (mounted,) = report.mounts
    assert mounted.host_root == os.path.realpath(tree / "project")
    assert mounted.mount_path == "repo"
    assert mounted.bytes_loaded == sum(fs.stat(p).size for p in report.loaded)
    assert snapshot_host(tree) == host_before  # the host is never written


def test_mount_at_root_and_single_file_mount(tree):
    fs = InMemoryFilesystem()
    load_host_mounts(
        fs,
        [HostMount(str(tree / "project" / "src")), HostMount("project/README.md", "/docs")],
        allowed_roots=[str(tree)],
    )
    assert fs.glob("**") == ("a.py", "docs/README.md", "notes.txt", "pkg/b.py")


def test_include_and_exclude_use_the_project_glob(tree):
    fs = InMemoryFilesystem()
    report = load_host_mounts(
        fs,
        [HostMount("project", include=("**/*.py", "*.md"), exclude=("src/pkg/**",))],
        allowed_roots=[tree],
    )
    # ``**/*.py`` includes root-level files; ``*.md`` only top-level ones.
    assert report.loaded == ("README.md", "src/a.py")
    fs2 = InMemoryFilesystem()
    report2 = load_host_mounts(
        fs2, [HostMount("project", exclude=("node_modules/**", "*.png"))], allowed_roots=[tree]
    )
    assert "node_modules/lib/index.js" not in report2.loaded
    assert report2.skipped == ()


def test_paths_outside_the_allowed_roots_are_refused(tree, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    fs = InMemoryFilesystem()
    for host_path in (str(outside), "../outside", str(tree / "project" / "missing")):
        with pytest.raises(PackConfigError, match="outside the allowed host roots"):
            load_host_mounts(fs, [HostMount(host_path)], allowed_roots=[tree])
    with pytest.raises(PackConfigError, match="no allowed host roots"):
        load_host_mounts(fs, [HostMount("project")], allowed_roots=[])
    with pytest.raises(PackConfigError, match="not an existing directory"):
        load_host_mounts(fs, [HostMount("project")], allowed_roots=[tmp_path / "nope"])
    with pytest.raises(PackConfigError, match="must not be empty"):
        load_host_mounts(fs, [HostMount("  ")], allowed_roots=[tree])
    assert dump(fs) == {}


def test_symlinks_leaving_the_root_are_skipped_and_reported(tree, tmp_path):
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    (outside / "dir" / "more.txt").write_text("more secrets")
    project = tree / "project"
    os.symlink(outside / "secret.txt", project / "leak.txt")
    os.symlink(outside / "dir", project / "leakdir")
    os.symlink(project / "src" / "a.py", project / "inside_link.py")  # stays inside: fine
    os.symlink(project, project / "src" / "loop")  # a cycle inside the root
    fs = InMemoryFilesystem()
    report = load_host_mounts(fs, [HostMount("project", exclude=("*.png",))], allowed_roots=[tree])
    assert set(report.skipped) == {
        SkippedFile("leak.txt", "symlink whose target is outside the allowed root"),
        SkippedFile("leakdir", "symlink whose target is outside the allowed root"),
    }
    contents = dump(fs)
    assert "secret" not in "".join(v for v in contents.values() if v)
    assert fs.read_text("inside_link.py") == "print('a')\n"
    # A symlinked mount root that leaves the allowed root is refused outright.
    os.symlink(outside, tree / "escape")
    with pytest.raises(PackConfigError, match="outside the allowed host roots"):
        load_host_mounts(InMemoryFilesystem(), [HostMount("escape")], allowed_roots=[tree])


def test_byte_budget_is_per_mount_and_all_or_nothing(tree):
    fs = InMemoryFilesystem()
    fs.write("existing.txt", "keep")
    with pytest.raises(FilesystemLimitError, match=r"byte budget of 10 bytes.*max_bytes"):
        load_host_mounts(fs, [HostMount("project/src", max_bytes=10)], allowed_roots=[tree])
    assert dump(fs) == {"existing.txt": "keep"}
    big = tree / "project" / "big.txt"
    big.write_text("x" * 100_000)
    with pytest.raises(FilesystemLimitError, match=r"big\.txt"):
        load_host_mounts(
            fs, [HostMount("project", include=("big.txt",), max_bytes=50_000)], allowed_roots=[tree]
        )
    blob = tree / "project" / "blob.bin"
    blob.write_bytes(b"\xff" * 100_000)
    report = load_host_mounts(
        fs, [HostMount("project", include=("blob.bin",), max_bytes=10)], allowed_roots=[tree]
    )
    assert report.skipped == (SkippedFile("blob.bin", "not UTF-8 text (binary)"),)


def test_workspace_limits_also_apply_and_roll_back(tree):
    fs = InMemoryFilesystem(max_files=2)
    with pytest.raises(FilesystemLimitError, match="2 files"):
        load_host_mounts(fs, [HostMount("project", exclude=("*.png",))], allowed_roots=[tree])
    assert dump(fs) == {}


def test_clashing_mounts_are_a_config_error(tree):
    fs = InMemoryFilesystem()
    with pytest.raises(PackConfigError, match="clash"):
        load_host_mounts(
            fs,
            [HostMount("project/src"), HostMount("project/src", include=("*.py",))],
            allowed_roots=[tree],
        )
    assert dump(fs) == {}


def test_no_mounts_is_an_empty_report():
    assert load_host_mounts(InMemoryFilesystem(), [], allowed_roots=[]).mounts == ()


def test_the_section_previews_what_each_mount_holds(tmp_path):
    from haversack_vfs import HostMount, VfsConfig, vfs_section

    many = tmp_path / "many"
    many.mkdir()
    for i in range(25):
        (many / f"f{i:02d}.txt").write_text("x")
    (many / "sub").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "one.md").write_text("# one")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "price$5 `x`.txt").write_text("x")
    config = VfsConfig(
        mounts=(
            HostMount(host_path="many", mount_path="m"),
            HostMount(host_path="empty", mount_path="e"),
            HostMount(host_path="one.md", mount_path="o"),
            HostMount(host_path="odd", mount_path="d"),
        ),
        allowed_host_roots=(str(tmp_path),),
    )
    text = vfs_section(config).template.replace("$$", "$")
    many_line = next(line for line in text.splitlines() if "`/workspace/m`" in line)
    assert "`f00.txt`" in many_line
    assert "`f19.txt`" in many_line
    assert "`f20.txt`" not in many_line
    assert many_line.endswith("… (+6 more)")  # 26 entries, 20 shown
    assert "`/workspace/e`: a copy of host `empty`: <empty>" in text
    assert "`one.md`" in text
    assert "`price$5 'x'.txt`" in text
    from haversack import Prompt

    rendered = Prompt(ns="t", key="t", sections=[vfs_section(config)]).render().text
    assert "`price$5 'x'.txt`" in rendered  # the dollar does not break the template
