"""Path escapes: a corpus of path attacks against the VFS tools (with host mounts holding
symlinks that point outside) and against the host mount configuration itself.

Nothing outside the allowed roots may be read or written: a canary file outside them keeps
its content, mtime and atime and its text never appears in a result; no file appears outside
the roots. A workspace on a real directory is attacked by a process swapping one of its
directories with a link to a host directory while every file operation runs (the swap race).
The sandbox workspace is attacked in ``test_sandbox.py`` (Podman).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack.errors import HaversackError
from haversack_vfs import HostMount, InMemoryFilesystem, load_host_mounts

from ._canary import Canary, tree
from ._harness import Harness, budget
from ._hostile import GLOB_ATTACKS, PATH_ATTACKS
from ._racer import OPERATIONS as RACE_OPERATIONS
from ._racer import RACER, Racer, RaceSite
from ._racer import attack as race_attack

# Path-taking fields of the VFS tools: tool -> (field, other required arguments).
PATH_FIELDS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "ls": [("path", {})],
    "read_file": [("path", {})],
    "write_file": [("path", {"content": "pwned\n"})],
    "edit_file": [("path", {"old_string": "fine", "new_string": "pwned"})],
    "rm": [("path", {})],
    "glob": [("pattern", {}), ("path", {"pattern": "**"})],
    "grep": [("path", {"pattern": "CANARY"}), ("glob", {"pattern": "."})],
}


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Any]:
    """``root`` (the one allowed host root) with a project holding symlinks that point at a
    canary outside it."""
    root = tmp_path / "root"
    proj = root / "proj"
    (proj / "sub").mkdir(parents=True)
    canary = Canary.plant(tmp_path / "outside")
    (proj / "ok.txt").write_text("fine\n")
    (proj / "link_file").symlink_to("../../outside/canary.txt")
    (proj / "link_dir").symlink_to("../../outside")
    (proj / "link_abs").symlink_to(canary.path)
    (proj / "link_root").symlink_to("/")
    (proj / "link_etc").symlink_to("/etc")
    (proj / "sub" / "deep").symlink_to("../../../outside/canary.txt")
    (proj / "sub" / "loop").symlink_to("loop")
    (root / "root_link").symlink_to(tmp_path / "outside")
    return {"tmp": tmp_path, "root": root, "proj": proj, "canary": canary}


def _attacks(host: dict[str, Any]) -> list[str]:
    canary: Canary = host["canary"]
    outside = str(canary.path.parent)
    return [
        *PATH_ATTACKS,
        str(canary.path),
        outside,
        outside + "/new.txt",
        str(host["root"]),
        str(host["proj"] / "link_file"),
        "proj/link_file",
        "proj/link_dir/canary.txt",
        "proj/link_abs",
        "proj/link_root/etc/passwd",
        "proj/sub/deep",
        "proj/../../outside/canary.txt",
        "proj/" + "../" * 12 + outside.lstrip("/") + "/canary.txt",
        "/workspace/proj/link_dir/canary.txt",
        "/workspace/../outside/canary.txt",
        "proj/ok.txt/../../../outside/canary.txt",
    ]


def _workspace_harness(host: dict[str, Any]) -> Harness:
    from haversack.testing import compose_packs

    config = {
        "vfs": {
            "mounts": [{"host_path": str(host["proj"]), "mount_path": "proj"}],
            "allowed_host_roots": [str(host["root"])],
        }
    }
    h = Harness(compose_packs(["vfs"], config=config))
    h.ok("read_file", {"path": "proj/ok.txt"})
    h.mark_baseline()
    return h


def _attack(h: Harness, fig: Any, host: dict[str, Any], tool: str, arguments: dict[str, Any]):
    canary: Canary = host["canary"]
    result = h.hostile(fig, tool, arguments, "a path attack")
    if result is not None:
        fig.check(
            not canary.leaked_in(result.render()),
            f"{tool} {arguments!r}: the canary's text appears in the result",
        )


def test_vfs_tool_path_attacks(host: dict[str, Any], figure) -> None:
    fig = figure("escapes", "vfs tools: path corpus")
    canary: Canary = host["canary"]
    outside_before = tree(host["tmp"], skip=(host["root"],))
    root_before = tree(host["root"])
    h = _workspace_harness(host)
    try:
        files = h.executor.resources.snapshottables()
        assert files, "the VFS workspace is not bound"
        for tool, fields in PATH_FIELDS.items():
            for field, rest in fields:
                corpus = _attacks(host) + (list(GLOB_ATTACKS) if field != "path" else [])
                for attack in corpus:
                    _attack(h, fig, host, tool, {**rest, field: attack})
    finally:
        h.close()
    fig.problems.extend(canary.intact())
    fig.check(tree(host["tmp"], skip=(host["root"],)) == outside_before, "files changed outside")
    fig.check(tree(host["root"]) == root_before, "the host mount was written")
    fig.note("attacks", len(_attacks(host)))
    fig.assert_clean()


_SEGMENTS = [
    "..",
    ".",
    "%2e%2e",
    "\uff0e\uff0e",
    "\u2024\u2024",
    "..\\",
    "\\",
    "",
    "proj",
    "link_dir",
    "link_root",
    "link_file",
    "canary.txt",
    "etc",
    "\x00",
    "/",
    "~",
]


def test_vfs_generated_path_attacks(host: dict[str, Any], figure) -> None:
    fig = figure("escapes", "vfs tools: generated paths")
    canary: Canary = host["canary"]
    outside_before = tree(host["tmp"], skip=(host["root"],))
    h = _workspace_harness(host)
    canary_parts = [p for p in str(canary.path).split("/") if p]
    try:

        @settings(
            max_examples=budget(60, 1500),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            tool=st.sampled_from(sorted(PATH_FIELDS)),
            parts=st.lists(st.sampled_from(_SEGMENTS + canary_parts), max_size=16),
            absolute=st.booleans(),
            data=st.data(),
        )
        def attack(tool: str, parts: list[str], absolute: bool, data: Any) -> None:
            field, rest = data.draw(st.sampled_from(PATH_FIELDS[tool]))
            path = ("/" if absolute else "") + "/".join(parts)
            _attack(h, fig, host, tool, {**rest, field: path})

        attack()
    finally:
        h.close()
    fig.problems.extend(canary.intact())
    fig.check(tree(host["tmp"], skip=(host["root"],)) == outside_before, "files changed outside")
    fig.assert_clean()


def test_host_mount_attacks(host: dict[str, Any], figure) -> None:
    """Mount configurations pointing outside the allowed root are refused; a mount whose
    symlinks point outside loads none of them."""
    fig = figure("escapes", "vfs host mounts")
    canary: Canary = host["canary"]
    root: Path = host["root"]
    attacks = [
        "../outside/canary.txt",
        "../outside",
        str(canary.path),
        str(root / ".." / "outside"),
        str(root) + "/../outside/canary.txt",
        "proj/link_file",
        "proj/link_dir",
        "proj/link_abs",
        "proj/link_root",
        "proj/sub/deep",
        "root_link",
        str(root / "root_link"),
        "/",
        "/etc",
        "/etc/passwd",
        "%2e%2e/outside",
        "\uff0e\uff0e/outside",
        "proj\x00/../../outside",
        "",
        ".",
        "proj",
        "~",
    ]
    for attack in attacks:
        for mount_path in ("", "m", "../escape", "/etc"):
            fig.case()
            fs = InMemoryFilesystem()
            try:
                mount = HostMount(host_path=attack, mount_path=mount_path)
                load_host_mounts(fs, [mount], allowed_roots=[str(root)])
            except (HaversackError, ValueError):
                continue  # refused: fine
            except Exception as exc:
                fig.problem(f"mount {attack!r} -> {mount_path!r}: {type(exc).__name__}: {exc}")
                continue
            for path, text in _contents(fs).items():
                fig.check(
                    not canary.leaked_in(text),
                    f"mount {attack!r} -> {mount_path!r} loaded the canary as {path!r}",
                )
    fig.problems.extend(canary.intact())
    fig.assert_clean()


def _contents(fs: InMemoryFilesystem) -> dict[str, str]:
    from haversack.testing._state import filesystem_contents

    return filesystem_contents(fs)


def test_canary_detects_a_read(tmp_path: Path) -> None:
    """Guard: the canary notices a read (atime) and a write, so a clean run means something."""
    canary = Canary.plant(tmp_path)
    assert canary.intact() == []
    canary.path.read_bytes()
    assert canary.intact() == (
        ["canary " + str(canary.path) + " was read (atime moved)"] if canary.atime_armed else []
    )
    assert canary.intact() == []
    canary.path.write_text("changed")
    assert any("changed" in p for p in canary.intact())


# -- the swap race: a directory exchanged with a link to the host while the host works ----


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
@pytest.mark.parametrize("operation", sorted(RACE_OPERATIONS))
def test_directory_swap_race(tmp_path: Path, figure, operation: str, openat2: bool) -> None:
    """A process swaps ``d`` with a link to a host directory in a tight loop while the
    host runs ``operation`` on paths under ``d``: the root-only canary there is never read,
    never written, and nothing appears in the host directory."""
    import sys

    from haversack.filesystem import DirectoryFilesystem

    fig = figure("escapes", f"swap race: {operation} ({'openat2' if openat2 else 'walk'})")
    (tmp_path / "ws").mkdir()
    site = RaceSite.plant(tmp_path / "ws", tmp_path / "host")
    fs = DirectoryFilesystem(site.root, storage_parent=tmp_path, use_openat2=openat2)
    attempts = budget(300, 5000)
    racer = Racer([sys.executable, "-c", RACER, str(site.root / "d"), str(site.root / "s")])
    try:
        outcome = race_attack(fs, operation, attempts)
    finally:
        swaps = racer.stop()
        fs.close()
    fig.case(attempts)
    fig.problems.extend(site.escapes(outcome.values, outcome.errors))
    fig.note("attempts", attempts)
    fig.note("succeeded", outcome.succeeded)
    fig.note("refused", outcome.refused)
    fig.note("refused: link met", outcome.links)
    fig.note("swaps", swaps)
    fig.note("escapes", len(fig.problems))
    fig.check(swaps > 0, "the racer never swapped: the race was not exercised")
    fig.assert_clean()
