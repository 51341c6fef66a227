"""Deferred packs: composed and checked up front, listed one line each, loaded by the
``load_pack`` tool into a running executor and the agent's next turn; with the really
installed planning and vfs packs and a generated 50-tool pack."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from haversack import CheckpointError, NameConflictError, Session, ToolExecutor
from haversack._packs import compose
from haversack.agent import Agent, load_checkpoint
from haversack.errors import PackConfigError, PackLoadError
from haversack.testing import FakeCall, FakeProvider, FakeReply, FakeSite

WIDE = """
from dataclasses import dataclass
from haversack import MarkdownSection, Tool, ToolResult
from haversack.hookspecs import hookimpl

@dataclass(frozen=True)
class Params:
    text: str

def _echo(params, *, context):
    return ToolResult.ok(message="echo " + params.text)

@hookimpl
def register_sections(register):
    register(MarkdownSection(title="Wide tools", key="{name}", template="Echo tools.",
        tools=[Tool[Params, None](name=f"{prefix}t{{i}}", description="Echo the text.",
                                  handler=_echo) for i in range({count})]))
"""


def wide_pack(site: FakeSite, name: str = "wide", *, prefix: str = "wide_", count: int = 50):
    return site.add(name, WIDE.format(name=name, prefix=prefix, count=count))


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The installed packs plus fake ones added by the test."""
    site = FakeSite(tmp_path / "site").activate(monkeypatch, keep_installed=True)
    before = set(sys.modules)
    yield site
    for module in set(sys.modules) - before:
        if module.startswith("hvt_"):
            sys.modules.pop(module, None)


def names(rendered):
    return [t.name for t in rendered.tools]


def test_deferred_pack_is_listed_in_one_line_and_its_tools_left_out():
    whole = compose(ns="t", key="k", packs=["planning", "vfs"]).render()
    deferred = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"]).render()

    vfs = {"ls", "read_file", "write_file", "edit_file", "glob", "grep", "rm"}
    assert vfs <= set(names(whole))
    assert not vfs & set(names(deferred))
    assert names(deferred)[-1] == "load_pack"
    assert "You have a workspace of text files" in whole.text
    assert "You have a workspace of text files" not in deferred.text
    line = next(x for x in deferred.text.splitlines() if x.startswith("- vfs: "))
    assert line == (
        "- vfs: Workspace files; 7 tools (ls, read_file, write_file, edit_file, glob, grep "
        "and 1 more)"
    )
    assert deferred.prompt.deferred_packs == ("vfs",)
    assert len(deferred.text) < len(whole.text)


def test_load_pack_adds_the_tools_and_they_then_work():
    rendered = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"]).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        before = executor.execute("write_file", {"path": "a.txt", "content": "hi\n"})
        assert not before.success
        assert before.message.startswith("Unknown tool 'write_file'")

        loaded = executor.execute("load_pack", {"pack": "vfs"})

        assert loaded.success, loaded.message
        assert loaded.message.startswith("Loaded pack 'vfs'.\n\n## 3. Workspace files")
        assert "read_file" in names(executor.rendered_prompt)
        assert executor.prompt.loaded_packs == ("vfs",)
        assert executor.prompt.deferred_packs == ()
        wrote = executor.execute("write_file", {"path": "a.txt", "content": "hi\n"})
        assert wrote.success, wrote.message
        read = executor.execute("read_file", {"path": "a.txt"})
        assert read.value.content == "hi\n"
        # The vfs pack's own policy governs its tools once loaded.
        governing = executor.rendered_prompt.policies_for("edit_file")
        assert "vfs-read-before-write" in [p.name for p in governing]

        again = executor.execute("load_pack", {"pack": "vfs"})
        assert again.success
        assert again.message == "Pack 'vfs' is already loaded."
        assert executor.prompt.loaded_packs == ("vfs",)


def test_unknown_names_are_precise_errors():
    rendered = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"]).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        result = executor.execute("load_pack", {"pack": "vfz"})
        assert not result.success
        assert result.message == "No pack 'vfz' can be loaded; the packs you can load are: vfs."
        assert executor.prompt.deferred_packs == ("vfs",)
        for garbage in ({"pack": 7}, {}, {"pack": "x" * 100_000}, "not json"):
            refused = executor.execute("load_pack", garbage)
            assert not refused.success
            assert len(refused.message) < 500
        assert executor.prompt.deferred_packs == ("vfs",)
        with pytest.raises(PackLoadError, match="No deferred pack 'planning'"):
            executor.load_pack("planning")
    with pytest.raises(PackConfigError, match=r"'vfz' is to be deferred.*did you mean 'vfs'"):
        compose(ns="t", key="k", packs=["planning"], deferred=["vfz"])


def test_the_python_api_loads_and_is_idempotent():
    prompt = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"])
    grown = prompt.with_pack("vfs")
    assert grown is not prompt
    assert grown.with_pack("vfs") is grown
    assert prompt.deferred_packs == ("vfs",)  # the original is unchanged
    assert "ls" in names(grown.render())
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        assert executor.load_pack("vfs").startswith("## 3. Workspace files")
        assert executor.load_pack("vfs") == ""


def test_uniqueness_is_checked_before_any_load(site):
    # A deferred pack whose tool clashes with a loaded pack's: refused when composing.
    wide_pack(site, "clash", prefix="read_", count=1)  # registers read_t0
    wide_pack(site, "clash2", prefix="read_", count=1)
    with pytest.raises(NameConflictError, match="read_t0"):
        compose(ns="t", key="k", packs=["clash"], deferred=["clash2"])
    # The core's own load tool is a reserved name while packs are deferred.
    site.add(
        "taker",
        WIDE.format(name="taker", prefix="", count=1).replace('f"t{i}"', '"load_pack"'),
    )
    with pytest.raises(NameConflictError, match="load_pack"):
        compose(ns="t", key="k", packs=["taker"], deferred=["vfs"])
    # Without deferred packs the name is free.
    assert "load_pack" in names(compose(ns="t", key="k", packs=["taker"]).render())


def test_a_generated_50_tool_pack_costs_one_line_until_loaded(site):
    wide_pack(site)
    whole = compose(ns="t", key="k", packs=["planning", "wide"]).render()
    deferred = compose(ns="t", key="k", packs=["planning"], deferred=["wide"]).render()
    assert len(names(whole)) == 54
    assert len(names(deferred)) == 5
    assert "- wide: Wide tools; 50 tools (wide_t0, " in deferred.text
    with ToolExecutor(deferred, session=Session()) as executor:
        assert executor.execute("load_pack", {"pack": "wide"}).success
        assert len(names(executor.rendered_prompt)) == 55
        assert executor.execute("wide_t49", {"text": "x"}).message == "echo x"


def _agent(fake, prompt, max_turns=20):
    return Agent(
        prompt, "openai:m", base_url=fake.openai_base_url, api_key="sk-test", max_turns=max_turns
    )


SCRIPT = [
    FakeReply("load", calls=[FakeCall("load_pack", {"pack": "vfs"}, "c1")]),
    FakeReply("write", calls=[FakeCall("write_file", {"path": "n.md", "content": "1\n"}, "c2")]),
    FakeReply("read", calls=[FakeCall("read_file", {"path": "n.md"}, "c3")]),
    FakeReply("done"),
]


def _tools(request):
    return [t["function"]["name"] for t in request.body["tools"]]


def test_the_agent_sends_the_grown_tool_list_from_the_next_turn():
    prompt = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"])
    with FakeProvider(SCRIPT) as fake:
        result = _agent(fake, prompt).run("go")
    first, second, *_ = fake.requests
    assert "write_file" not in _tools(first)
    assert "write_file" in _tools(second)
    assert _tools(second)[: len(_tools(first))] == _tools(first)
    assert first.system == second.system  # the system text stays; the load result told
    assert [c.outcome.value for c in result.calls] == ["ok", "ok", "ok"]
    assert result.output == "done"


def test_a_checkpoint_reloads_the_loaded_packs_on_resume(tmp_path):
    prompt = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"])
    with FakeProvider(SCRIPT[:2]) as fake:
        _agent(fake, prompt, max_turns=2).run("go", checkpoint=tmp_path)
    saved = load_checkpoint(tmp_path)
    assert saved.loaded_packs == ("vfs",)
    with FakeProvider(SCRIPT[2:]) as fake:
        result = _agent(fake, prompt).run("ignored", resume=saved)
        assert "read_file" in _tools(fake.requests[0])
    assert result.calls[-1].outcome.value == "ok"
    assert "1" in result.calls[-1].rendered
    # A pack the prompt cannot load is refused before anything changes.
    forged = dataclasses.replace(saved, loaded_packs=("vfs", "podman"))
    with FakeProvider([]) as fake, pytest.raises(CheckpointError, match="'podman', which"):
        _agent(fake, prompt).run("ignored", resume=forged)


BOX = """
import os
from dataclasses import dataclass
from haversack import Binding, Tool, ToolResult
from haversack.hookspecs import hookimpl

class Box:
    def __init__(self):
        with open(os.environ["HVT_BOX_LOG"], "a") as log:
            log.write("built\\n")
        if os.environ.get("HVT_BOX_BROKEN") == "1":
            raise RuntimeError("no box today")

@dataclass(frozen=True)
class Params:
    text: str

def _put(params, *, context):
    context.resources.get(Box)
    return ToolResult.ok(message="put " + params.text)

@hookimpl
def register_tools(register):
    register(Tool[Params, None](name="box_put", description="Put.", handler=_put))

@hookimpl
def register_resources(register):
    register(Binding(Box, lambda resolver: Box()))
"""


def test_a_deferred_packs_resources_are_built_when_it_is_loaded(site, tmp_path, monkeypatch):
    log = tmp_path / "built.log"
    log.touch()
    monkeypatch.setenv("HVT_BOX_LOG", str(log))
    site.add("box", BOX)
    rendered = compose(ns="t", key="k", packs=["planning"], deferred=["box"]).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        assert executor.execute("planning_read_plan", {}).message  # other tools run as ever
        assert log.read_text() == ""  # not built for a pack nobody loaded
        assert executor.execute("load_pack", {"pack": "box"}).success
        assert log.read_text() == "built\n"
        assert executor.execute("box_put", {"text": "a"}).message == "put a"
        assert log.read_text() == "built\n"  # a singleton: built once


def test_a_pack_whose_resource_fails_is_not_loaded(site, tmp_path, monkeypatch):
    monkeypatch.setenv("HVT_BOX_LOG", str(tmp_path / "built.log"))
    monkeypatch.setenv("HVT_BOX_BROKEN", "1")
    site.add("box", BOX)
    rendered = compose(ns="t", key="k", packs=["planning"], deferred=["box"]).render()
    with ToolExecutor(rendered, session=Session()) as executor:
        failed = executor.execute("load_pack", {"pack": "box"})
        assert not failed.success
        assert failed.message.startswith("Pack 'box' could not be loaded: ")
        assert "no box today" in failed.message
        assert executor.prompt.deferred_packs == ("box",)
        assert "box_put" not in names(executor.rendered_prompt)


def test_loading_with_resources_the_caller_manages():
    rendered = compose(ns="t", key="k", packs=["planning"], deferred=["vfs"]).render()
    with (
        rendered.prompt.resources.open() as live,
        ToolExecutor(rendered, session=Session(), resources=live) as executor,
    ):
        assert executor.execute("load_pack", {"pack": "vfs"}).success
        wrote = executor.execute("write_file", {"path": "a.txt", "content": "x\n"})
        assert wrote.success, wrote.message
        failed = executor.execute(
            "edit_file", {"path": "a.txt", "old_string": "nope", "new_string": "y"}
        )
        assert not failed.success
        assert executor.execute("read_file", {"path": "a.txt"}).value.content == "x\n"
        assert executor.resources is live
