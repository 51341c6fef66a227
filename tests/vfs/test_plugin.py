"""The pack's surface: hooks, config, section text, tool contracts and annotations."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import haversack_vfs
from haversack import serde
from haversack_vfs import TOOL_NAMES, VfsConfig, vfs_section, vfs_tools
from haversack_vfs import plugin as vfs_plugin

from ._workspace import Workspace


def test_config_type_hook_returns_a_frozen_dataclass_with_described_defaults() -> None:
    config_type = vfs_plugin.config_type()
    assert config_type is VfsConfig
    assert VfsConfig.__dataclass_params__.frozen  # type: ignore[attr-defined]
    for f in dataclasses.fields(VfsConfig):
        assert f.metadata.get("description"), f.name
        assert f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    VfsConfig()  # every field has a default


def test_every_params_and_result_field_is_described() -> None:
    for tool in vfs_tools():
        for tp in (tool.params_type, tool.result_type):
            assert tp is not None
            for f in dataclasses.fields(tp):
                assert f.metadata.get("description"), f"{tp.__name__}.{f.name}"
        schema = serde.schema(tool.params_type)
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name}"


def test_tools_in_order_with_honest_annotations() -> None:
    tools = {t.name: t for t in vfs_tools()}
    assert tuple(tools) == TOOL_NAMES
    for name in ("ls", "read_file", "glob", "grep"):
        assert tools[name].annotations.read_only, name
    for name in ("write_file", "edit_file", "rm"):
        assert not tools[name].annotations.read_only, name
    assert tools["write_file"].annotations.destructive is False
    assert tools["edit_file"].annotations.destructive is True
    assert tools["edit_file"].annotations.idempotent is False
    assert tools["rm"].annotations.destructive is True


def test_section_references_tools_by_original_name() -> None:
    section = vfs_section()
    assert section.key == "vfs"
    # Each tool's sentences are inside its ${if tool:x} block, so any of them may be excluded.
    assert {"read_file", "write_file", "edit_file", "ls", "glob", "grep", "rm"} <= set(
        section.conditional_tool_references()
    )
    assert section.tool_references() == frozenset()
    assert "/workspace" in section.template


def test_rendered_section_mentions_rules_and_limits(ws: Workspace) -> None:
    text = ws.rendered.text
    assert "## 1. Workspace files" in text
    for fragment in ("relative", "before editing", "1 MiB per write", "2000 lines", "only creates"):
        assert fragment in text, fragment


def test_renamed_tools_resolve_in_section_and_messages(
    make_ws: Callable[..., Workspace],
) -> None:
    ws = make_ws({"rename": {"write_file": "create_file", "edit_file": "patch"}})
    assert "create_file" in ws.rendered.text
    ws.ok("create_file", path="a", content="x")
    message = ws.fail("create_file", path="a", content="y").message
    assert "create_file only creates" in message
    assert "then patch" in message
    create = ws.rendered.tool("create_file")
    assert create is not None
    assert create.description.endswith("Refuses existing files: change those with patch.")
    # The clause goes with the tool it names (${if tool:edit_file}).
    bare = make_ws({"exclude_tools": ["edit_file"]}).rendered.tool("write_file")
    assert bare is not None
    assert bare.description.endswith("Refuses existing files.")


def test_public_api_is_importable() -> None:
    for name in haversack_vfs.__all__:
        assert getattr(haversack_vfs, name) is not None


def test_results_serialise_to_json(ws: Workspace) -> None:
    ws.ok("write_file", path="a", content="x\r\n")
    value = ws.ok("read_file", path="a").value
    assert json.loads(json.dumps(serde.dump(value)))["content"] == "x\r\n"


def test_host_paths_in_a_config_file_are_relative_to_that_file(tmp_path):
    """Launched from anywhere (a desktop MCP client uses cwd '/'), the options still name the
    same host directories: the core joins declared path options to the file's directory."""
    from haversack._packs._config import resolve_paths
    from haversack_podman import SandboxConfig

    base = tmp_path / "project"
    vfs = resolve_paths(VfsConfig, {"allowed_host_roots": ["data", "/abs"]}, base)
    assert vfs["allowed_host_roots"] == [str(base / "data"), "/abs"]
    podman = resolve_paths(SandboxConfig, {"mounts": {"src": "src", "/x": "x"}}, base)
    assert podman["mounts"] == {str(base / "src"): "src", "/x": "x"}
