"""The workspace boundary of the file tools (area ``workspace-boundary``).

Two families:

* **Planting what the host runs.** A real git repository is the workspace of the ``vfs``
  pack. Every way the file tools could change what git (or direnv, an editor) later runs
  is tried through the executor, with spellings that normalise to a protected path. Each must
  be refused and leave the tree byte-identical. Then the *host's* ``git status``, ``git add``
  and ``git commit`` run, and a marker file outside the workspace, which any planted command
  would create, must not exist.
* **Foreign writers.** Hypothesis interleaves a call's changes (through the shared workspace)
  with another party's (written directly, like an editor or another session), then rolls the
  call back. Every path the other party changed ends as they left it; every path only the
  call changed is as before the call; the report names only paths the other party changed
  after the call did.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import Session, ToolExecutor, compose
from haversack.filesystem import DirectoryFilesystem, ProtectedPaths

from ._canary import Canary
from ._harness import budget
from ._repo import check_host_git, git, tree_state

AREA = "workspace-boundary"
GIT = shutil.which("git")


def _attacks(marker: Path) -> list[tuple[str, dict[str, Any]]]:
    run = f"touch {marker}"
    hook = f"#!/bin/sh\n{run}\n"
    fsmonitor = f"[core]\n\tfsmonitor = {run}; false\n"
    attacks: list[tuple[str, dict[str, Any]]] = []
    for spelling in (
        ".git/config",
        "/workspace/.git/config",
        "./.git//config",
        ".git/./config",
        ".GIT/config",
        ".git/CONFIG",
    ):
        arguments = {"path": spelling, "content": fsmonitor, "mode": "overwrite"}
        attacks.append(("write_file", arguments))
    attacks += [
        ("edit_file", {"path": ".git/config", "old_string": "[core]", "new_string": fsmonitor}),
        ("write_file", {"path": ".git/config.worktree", "content": fsmonitor}),
        ("write_file", {"path": ".git/hooks/pre-commit", "content": hook}),
        ("edit_file", {"path": ".git/hooks/post-commit", "old_string": "true", "new_string": run}),
        ("write_file", {"path": ".git/info/attributes", "content": "* filter=evil\n"}),
        ("rm", {"path": ".git/config"}),
        ("rm", {"path": ".git"}),
        ("rm", {"path": ".git/hooks/post-commit"}),
        ("write_file", {"path": "sub/.git", "content": f"gitdir: {marker.parent}/evil\n"}),
        ("write_file", {"path": "nested/.git/config", "content": fsmonitor}),
        ("write_file", {"path": "nested/.git/hooks/pre-commit", "content": hook}),
        ("write_file", {"path": ".envrc", "content": run + "\n"}),
        ("write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
        ("write_file", {"path": ".husky/pre-commit", "content": hook}),
        ("write_file", {"path": ".pre-commit-config.yaml", "content": "repos: []\n"}),
        ("write_file", {"path": ".devcontainer.json", "content": "{}"}),
    ]
    return attacks


@pytest.mark.skipif(GIT is None and not os.environ.get("CI"), reason="git is not installed")
def test_file_tools_cannot_plant_what_the_host_runs(figure, scratch: Path) -> None:
    fig = figure(AREA, "file tools: plant what the host's git, direnv or editor runs")
    assert GIT is not None, "git must be installed to run this family"
    repo = scratch / "repo"
    repo.mkdir()
    assert git(repo, "init", "-q").returncode == 0
    (repo / "app.py").write_text("print('hi')\n")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-commit").write_text("#!/bin/sh\ntrue\n")
    (hooks / "post-commit").chmod(0o755)
    (repo / "nested" / ".git").mkdir(parents=True)
    canary = Canary.plant(scratch / "outside")
    marker = scratch / "outside" / "PLANTED"
    (scratch / "home").mkdir()
    (scratch / "empty.toml").write_text("")

    prompt = compose(
        ns="t",
        key="t",
        packs=["vfs"],
        config={"vfs": {"workspace": str(repo), "read_before_write": False}},
        strict=True,
        config_file=scratch / "empty.toml",
        sections=(),
    )
    executor = ToolExecutor(prompt.render(), session=Session())
    try:
        before = tree_state(repo)
        for tool, arguments in _attacks(marker):
            fig.case()
            result = executor.execute(tool, arguments)
            fig.check(not result.success, f"{tool}({arguments}) succeeded")
            fig.check(
                "protected" in result.message or not result.success,
                f"{tool}({arguments}): {result.message}",
            )
            fig.check(tree_state(repo) == before, f"{tool}({arguments}) changed the tree")
    finally:
        executor.close()
    # The host's own git, as the user runs it after the session.
    check_host_git(fig, repo, marker, canary)
    fig.note("attacks", len(_attacks(marker)))
    fig.assert_clean()


# -- foreign writers while calls fail ------------------------------------------------------

NAMES = ("a", "b", "d/c", "d/e", "f/g")
_op = st.tuples(
    st.sampled_from(["call", "other"]),
    st.sampled_from(["write", "append", "delete"]),
    st.sampled_from(NAMES),
)


def _other(root: Path, op: str, name: str, serial: int) -> bool:
    """The other party's change, straight on disk; whether it changed anything."""
    path = root / name
    if op == "delete":
        if not path.is_file():
            return False
        path.unlink()
        return True
    path.parent.mkdir(exist_ok=True)
    with open(path, "a" if op == "append" else "w") as handle:
        handle.write(f"other {serial} " * (serial % 3 + 1))
    return True


def _call(fs: DirectoryFilesystem, op: str, name: str, serial: int) -> bool:
    try:
        if op == "delete":
            fs.delete(name)
        else:
            fs.write(name, f"call {serial}\n", mode="overwrite" if op == "write" else "append")
    except Exception:  # a refused change changes nothing
        return False
    return True


def test_foreign_writers_keep_their_changes(figure, tmp_path_factory) -> None:
    fig = figure(AREA, "file tools: other writers during failing calls (hypothesis)")

    @settings(
        max_examples=budget(60, 1000),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(ops=st.lists(_op, min_size=1, max_size=14))
    def case(ops: list[tuple[str, str, str]]) -> None:
        root = tmp_path_factory.mktemp("ws")
        (root / "d").mkdir()
        (root / "a").write_text("original a\n")
        (root / "d" / "c").write_text("original c\n")
        fs = DirectoryFilesystem(root, shared=True, protected=ProtectedPaths())
        try:
            original = tree_state(root)
            mark = fs.snapshot()
            called: set[str] = set()
            other_last: dict[str, object] = {}
            raced: set[str] = set()
            # A run of the other party's changes between two of the call's that ends where it
            # began (write, then delete what the call had deleted) changed nothing anyone can
            # tell apart: the oracle forgets it.
            run: dict[str, tuple[object, bool, object, bool]] = {}
            for serial, (who, op, name) in enumerate(ops):
                if who == "call":
                    if _call(fs, op, name, serial):
                        called.add(name)
                        run.pop(name, None)
                    continue
                before = tree_state(root).get(name, "missing")
                if name not in run:
                    run[name] = (before, name in other_last, other_last.get(name), name in raced)
                if not _other(root, op, name, serial):
                    continue
                now = tree_state(root).get(name, "missing")
                start, had, previous, was_raced = run[name]
                if now == start:
                    other_last.pop(name, None)
                    if had:
                        other_last[name] = previous
                    if not was_raced:
                        raced.discard(name)
                else:
                    other_last[name] = now
                    if name in called:
                        raced.add(name)
            report = fs.restore(mark)
            fig.case()
            after = tree_state(root)
            for name in NAMES:
                if name in other_last:
                    fig.check(
                        after.get(name, "missing") == other_last[name],
                        f"{ops}: the other party's change to {name} was lost",
                    )
                else:
                    fig.check(
                        after.get(name, "missing") == original.get(name, "missing"),
                        f"{ops}: {name}, changed only by the call, was not rolled back",
                    )
            assert report is not None
            kept_files = {p for p in report.kept if p in NAMES}
            # Reported: only paths the other party changed after the call did (a path the call
            # left as it found it, such as written and deleted again, needs no report).
            fig.check(kept_files <= raced, f"{ops}: reported {sorted(kept_files)}, raced {raced}")
            fig.check(
                not any(n.startswith(".haversack-") for n in os.listdir(root)),
                f"{ops}: a temporary file was left in the workspace",
            )
        finally:
            fs.close()

    case()
    fig.assert_clean()
