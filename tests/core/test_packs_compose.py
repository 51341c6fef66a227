"""compose(): order, loose tools, global uniqueness, resources, renames, fail-soft and strict."""

from __future__ import annotations

import sys

import pytest

from haversack import (
    Binding,
    MarkdownSection,
    NameConflictError,
    ResourceRegistry,
    Tool,
    ToolResult,
    compose,
    discover,
)
from haversack.errors import PackConfigError, PackLoadError, PromptValidationError

HEADER = """
from dataclasses import dataclass
from haversack import MarkdownSection, Section, Tool, ToolResult
from haversack.hookspecs import hookimpl

def _ok(params, *, context):
    return ToolResult.ok(message="ran")

def make(name):
    return Tool[None, None](name=name, description=f"Tool {name}.", handler=_ok)
"""


def tools_pack(*names: str) -> str:
    return (
        HEADER
        + f"""
@hookimpl
def register_tools(register):
    for name in {list(names)!r}:
        register(make(name))
"""
    )


SECTION_PACK = (
    HEADER
    + """
@hookimpl
def register_sections(register):
    register(MarkdownSection(
        title="Files", key="files",
        template="Use ${tool:read_file} to read.",
        tools=[make("read_file"), make("write_file")],
    ))
"""
)


def _ok(params, *, context):
    return ToolResult.ok(message="mine")


def mine(name: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description="Mine.", handler=_ok)


def test_order_user_sections_then_packs_by_name_with_loose_tools_last(site):
    site.add("zeta", tools_pack("z_tool"))
    site.add("alpha", SECTION_PACK + tools_pack("a_loose").removeprefix(HEADER))
    user = MarkdownSection(title="Intro", key="intro", template="Hello.")
    prompt = compose(ns="t", key="k", sections=[user])
    assert [s.key for s in prompt.sections] == ["intro", "files", "alpha", "zeta"]
    rendered = prompt.render()
    assert [t.name for t in rendered.tools] == ["read_file", "write_file", "a_loose", "z_tool"]
    assert rendered.section_path("z_tool") == ("zeta",)
    assert "## 4. Tools from zeta" in rendered.text


def test_tool_clash_names_both_packs_and_a_fix(site):
    site.add("vfs", tools_pack("read_file"), distribution="hvt-vfs", version="1.2")
    site.add("disk", tools_pack("read_file"), distribution="hvt-disk", version="3.4")
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k")
    err = info.value
    assert err.kind == "tool"
    assert err.name == "read_file"
    assert err.contributors == (
        "pack 'disk' (hvt-disk 3.4)",
        "pack 'vfs' (hvt-vfs 1.2)",
    )
    assert '[tool.haversack.packs.vfs] prefix = "vfs_"' in str(err)
    assert "HAVERSACK_DISABLE=vfs" in str(err)


def test_clash_with_your_code(site):
    site.add("vfs", tools_pack("read_file"))
    section = MarkdownSection(title="Mine", key="mine", template="x", tools=[mine("read_file")])
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k", sections=[section])
    assert info.value.contributors[0] == "your code"
    assert "pack 'vfs'" in info.value.contributors[1]


def test_section_key_clash(site):
    site.add("one", SECTION_PACK)
    site.add("two", SECTION_PACK.replace("read_file", "r2").replace("write_file", "w2"))
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k")
    assert (info.value.kind, info.value.name) == ("section", "files")


def test_loose_section_key_clashes_with_user_section(site):
    site.add("vfs", tools_pack("read_file"))
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k", sections=[MarkdownSection(title="V", key="vfs", template="x")])
    assert (info.value.kind, info.value.name) == ("section", "vfs")


POLICY_PACK = (
    HEADER
    + """
class Once:
    name = "once"
    def check(self, tool, params, *, context):
        from haversack import PolicyDecision
        return PolicyDecision.allow()
    def on_result(self, tool, params, result, *, context):
        pass

@hookimpl
def register_policies(register, config):
    register(Once())
"""
)


def test_hook_register_policies_and_policy_clash(site):
    site.add("one", POLICY_PACK)
    prompt = compose(ns="t", key="k")
    assert [p.name for p in prompt.policies] == ["once"]
    assert discover(load=True)["one"].policies == ("once",)
    site.add("two", POLICY_PACK)
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k")
    assert (info.value.kind, info.value.name) == ("policy", "once")


RESOURCE_PACK = (
    HEADER
    + """
from haversack import Binding

class Workspace:
    pass

WS = Workspace()

@hookimpl
def register_resources(register):
    register(Binding.instance(Workspace, WS, default={default}))
"""
)


def _resource_source(default: bool, shared: str) -> str:
    # Both packs must bind the same type object to clash: import it from a shared module.
    return RESOURCE_PACK.replace(
        "class Workspace:\n    pass\n", f"from {shared} import Workspace\n"
    ).replace("{default}", str(default))


@pytest.fixture
def shared_type(site):
    name = "hvt_shared_types"
    (site.root / f"{name}.py").write_text("class Workspace:\n    pass\n")
    import importlib

    importlib.invalidate_caches()
    return name


def test_hook_register_resources_default_gives_way(site, shared_type):
    site.add("fallback", _resource_source(True, shared_type))
    site.add("sandbox", _resource_source(False, shared_type))
    prompt = compose(ns="t", key="k")
    ws_type = sys.modules[shared_type].Workspace
    binding = prompt.resources.get(ws_type)
    assert binding.default is False
    assert discover(load=True)["fallback"].resources == ("Workspace",)


def test_two_non_default_bindings_clash(site, shared_type):
    site.add("one", _resource_source(False, shared_type))
    site.add("two", _resource_source(False, shared_type))
    with pytest.raises(NameConflictError) as info:
        compose(ns="t", key="k")
    assert info.value.kind == "resource"
    assert "Workspace" in info.value.name
    assert "default=True" in str(info.value)


def test_callers_resources_win_over_pack_defaults(site, shared_type):
    site.add("fallback", _resource_source(True, shared_type))
    ws_type = sys.modules.get(shared_type) or __import__(shared_type)
    mine_ws = ws_type.Workspace()
    prompt = compose(ns="t", key="k", resources={ws_type.Workspace: mine_ws})
    with prompt.resources.open() as live:
        assert live.get(ws_type.Workspace) is mine_ws
    registry = ResourceRegistry.of(Binding.instance(ws_type.Workspace, mine_ws))
    assert compose(ns="t", key="k", resources=registry).resources.get(ws_type.Workspace)


def test_prefix_renames_tools_and_template_references_follow(site):
    site.add("vfs", SECTION_PACK)
    prompt = compose(ns="t", key="k", config={"vfs": {"prefix": "vfs_"}})
    rendered = prompt.render()
    assert [t.name for t in rendered.tools] == ["vfs_read_file", "vfs_write_file"]
    assert "Use vfs_read_file to read." in rendered.text
    assert rendered.tool("vfs_read_file").original_name == "read_file"


def test_rename_wins_over_prefix_and_resolves_a_clash(site):
    site.add("vfs", SECTION_PACK)
    site.add("disk", tools_pack("read_file"))
    config = {"vfs": {"prefix": "v_", "rename": {"read_file": "cat"}}}
    rendered = compose(ns="t", key="k", config=config).render()
    assert sorted(t.name for t in rendered.tools) == ["cat", "read_file", "v_write_file"]
    assert "Use cat to read." in rendered.text


def test_rename_of_unknown_tool_is_a_config_error(site):
    site.add("vfs", SECTION_PACK)
    with pytest.raises(PackConfigError, match=r"'raed_file'.*read_file, write_file"):
        compose(ns="t", key="k", config={"vfs": {"rename": {"raed_file": "x"}}}, strict=True)
    with pytest.raises(PackConfigError, match=r"'raed_file'"):  # the user's own mistake
        compose(ns="t", key="k", config={"vfs": {"rename": {"raed_file": "x"}}})
    report = discover(load=True, config={"vfs": {"rename": {"raed_file": "x"}}})
    assert report["vfs"].status == "misconfigured"


def test_rename_to_invalid_name_is_a_config_error(site):
    site.add("vfs", tools_pack("read_file"))
    with pytest.raises(PackConfigError, match="Cannot rename tool 'read_file'"):
        compose(ns="t", key="k", config={"vfs": {"prefix": "Bad Prefix "}}, strict=True)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("raise ImportError('no numpy here')", "failed to import hvt_bad_"),
        (
            HEADER + "@hookimpl\ndef register_tools(register):\n    raise RuntimeError('boom')\n",
            "register_tools() raised RuntimeError: boom",
        ),
        (
            HEADER + "@hookimpl\ndef register_tools(register):\n    return [make('x')]\n",
            "register_tools() returned list",
        ),
        (
            HEADER + "@hookimpl\ndef register_tools(register):\n    register('read_file')\n",
            "register_tools registered str",
        ),
        (
            HEADER + "@hookimpl\ndef register_sections(register):\n    register(make('x'))\n",
            "takes a haversack.Section",
        ),
        (
            HEADER + "@hookimpl\ndef config_type():\n    return dict\n",
            "config_type() must return a dataclass type or None",
        ),
        (
            HEADER + "@hookimpl\ndef register_tool(register):\n    pass\n",
            "unknown hook 'register_tool' (did you mean 'register_tools'?)",
        ),
        (
            HEADER + "@hookimpl\ndef register_tools(register, bogus):\n    pass\n",
            "cannot be registered",
        ),
        (
            HEADER + "@hookimpl(wrapper=True)\ndef register_tools(register):\n    yield\n",
            "hook wrapper",
        ),
        (tools_pack("x", "x"), "contributes two tools named 'x'"),
        (
            HEADER + "@hookimpl\ndef register_sections(register):\n"
            "    kids = [MarkdownSection(title='A', key='a', template=''),"
            " MarkdownSection(title='A', key='a', template='')]\n"
            "    register(Section(title='P', key='parent', children=kids))\n",
            "contributes two sections named 'a'",
        ),
        (
            HEADER + "@hookimpl\ndef register_sections(register):\n"
            "    register(Section(title='B', key='bad', tools=[make('x')]))\n"
            "@hookimpl\ndef register_policies(register):\n    register(object())\n",
            "takes a haversack.ToolPolicy",
        ),
    ],
    ids=[
        "import",
        "raises",
        "returns",
        "wrong-type",
        "wrong-kind",
        "config-type",
        "misspelled",
        "bad-arg",
        "wrapper",
        "internal-dup",
        "internal-nested-dup",
        "bad-policy",
    ],
)
def test_fail_soft_leaves_broken_pack_out_and_strict_raises(site, source, reason, caplog):
    site.add("bad", source)
    site.add("good", tools_pack("fine"))
    prompt = compose(ns="t", key="k")
    assert [t.name for t in prompt.tools] == ["fine"]
    info = discover(load=True)["bad"]
    assert info.status == "broken"
    assert reason in info.reason
    assert any("left out pack 'bad'" in r.getMessage() for r in caplog.records)
    with pytest.raises(PackLoadError) as err:
        compose(ns="t", key="k", strict=True)
    assert err.value.pack == "bad"
    assert "pack 'bad' (hvt-bad 1.0)" in str(err.value)


def test_user_code_errors_are_not_swallowed(site):
    with pytest.raises(PackLoadError, match="your code"):
        compose(ns="t", key="k", sections=["not a section"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="resources must be"):
        compose(ns="t", key="k", resources=[1])  # type: ignore[arg-type]


def test_prompt_level_validation_still_applies(site):
    site.add(
        "refs",
        HEADER
        + """
@hookimpl
def register_sections(register):
    register(MarkdownSection(title="R", key="refs", template="Use ${tool:missing}."))
""",
    )
    with pytest.raises(PromptValidationError, match="missing"):
        compose(ns="t", key="k")


def test_token_estimate_counts_tool_definitions(site):
    site.add("vfs", SECTION_PACK)
    site.add("empty", HEADER)
    report = discover(load=True)
    assert report["vfs"].token_estimate > 10
    assert report["empty"].token_estimate == 0
    assert report["vfs"].tools == ("read_file", "write_file")
    assert report["vfs"].sections == ("files",)


def test_builtin_plugin_hidden_unless_asked(site):
    site.add("vfs", SECTION_PACK)
    report = discover(load=True)
    assert [p.name for p in report.visible()] == ["vfs"]
    builtin = [p for p in report.visible(include_builtin=True) if p.builtin]
    assert [p.name for p in builtin] == ["your code"]
    assert builtin[0].distribution == "haversack"


def test_trace_prints_each_pack_hook_call(site, monkeypatch, capsys):
    site.add("vfs", SECTION_PACK)
    monkeypatch.setenv("HAVERSACK_TRACE", "1")
    compose(ns="t", key="k")
    err = capsys.readouterr().err
    assert "haversack trace: vfs: importing hvt_vfs_" in err
    assert "haversack trace: vfs.register_sections(register=<callback>)" in err
    assert "haversack trace: vfs.register_sections -> 1 registered: files" in err


WORKSPACE_PACK = """
from dataclasses import dataclass
from pathlib import Path
from haversack import MarkdownSection
from haversack.hookspecs import hookimpl

@dataclass(frozen=True)
class Options:
    workspace: Path | None = None

@hookimpl
def config_type():
    return Options

@hookimpl
def register_sections(register, config):
    register(MarkdownSection(title="W", key="w", template=f"workspace={config.workspace}"))
"""

PLAIN_PACK = """
from haversack import MarkdownSection
from haversack.hookspecs import hookimpl

@hookimpl
def register_sections(register):
    register(MarkdownSection(title="P", key="p", template="plain"))
"""


def test_compose_workspace_reaches_every_pack_with_a_workspace_option(site, tmp_path):
    """The core names no pack: ``workspace`` goes to each pack whose options declare it."""
    site.add("withws", WORKSPACE_PACK)
    site.add("plain", PLAIN_PACK)
    project = tmp_path / "project"
    project.mkdir()
    text = compose(ns="t", key="k", workspace=project).render().text
    assert f"workspace={project}" in text
    assert "plain" in text  # a pack without the option composes as before
    assert "workspace=None" in compose(ns="t", key="k").render().text
