"""The haversack command, run in process against fake installed packs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from haversack.cli import COMMANDS, main

PACK = """
from dataclasses import dataclass
from haversack import MarkdownSection, Tool, ToolResult
from haversack.hookspecs import hookimpl

@dataclass(frozen=True)
class EchoParams:
    text: str

def _echo(params, *, context):
    if params.text == "fail":
        return ToolResult.error("Echo refused.")
    return ToolResult.ok(message=f"echo: {params.text}")

echo = Tool[EchoParams, None](name="echo", description="Echo text back.", handler=_echo)

@hookimpl
def register_sections(register):
    register(MarkdownSection(title="Echo", key="echo", template="Use ${tool:echo}.", tools=[echo]))
"""


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_packs_lists_status_contributions_and_tokens(site, capsys):
    site.add("echo", PACK)
    site.add("broken", "raise ImportError('nope')")
    status, out, _ = run(capsys, "packs")
    assert status == 0
    assert "echo  (hvt-echo 1.0)  loaded  ~" in out
    assert "tools: echo" in out
    assert "broken  (hvt-broken 1.0)  broken" in out
    assert "your code" not in out
    _, out, _ = run(capsys, "packs", "--all")
    assert "your code  (built-in)  loaded" in out


def test_packs_json_and_no_import(site, capsys):
    site.add("echo", PACK)
    _, out, _ = run(capsys, "packs", "--json", "--no-import")
    data = json.loads(out)
    assert data["packs"][0]["status"] == "not-imported"
    assert data["ok"] is True
    _, out, _ = run(capsys, "packs", "--json", "--disable", "echo")
    assert json.loads(out)["packs"][0]["status"] == "disabled"


def test_render_text_and_json(site, capsys):
    site.add("echo", PACK)
    status, out, _ = run(capsys, "render")
    assert status == 0
    assert "## 1. Echo\n\nUse echo." in out
    _, out, _ = run(capsys, "render", "--json")
    assert json.loads(out)["tools"] == ["echo"]


def test_tools_with_schema(site, capsys):
    site.add("echo", PACK)
    _, out, _ = run(capsys, "tools", "--json")
    (tool,) = json.loads(out)
    assert tool["name"] == "echo"
    assert tool["parameters"]["required"] == ["text"]
    _, out, _ = run(capsys, "tools")
    assert "echo  [echo]" in out


def test_call_success_failure_and_bad_arguments(site, capsys):
    site.add("echo", PACK)
    assert run(capsys, "call", "echo", '{"text": "hi"}')[:2] == (0, "echo: hi\n")
    status, out, _ = run(capsys, "call", "echo", '{"text": "fail"}')
    assert (status, out) == (1, "Echo refused.\n")
    status, out, _ = run(capsys, "call", "echo", '{"txt": 1}')
    assert status == 1
    assert "unknown field 'txt'" in out


def test_check_passes_and_fails(site, capsys):
    site.add("echo", PACK)
    status, out, _ = run(capsys, "check")
    assert status == 0
    assert "haversack check: OK (1 loaded: echo; 0 errors)" in out
    site.add("echo2", PACK.replace('key="echo"', 'key="echo2"'))
    site.add("old", "", requires=["haversack<0.0.1"])
    status, out, _ = run(capsys, "check", "--json")
    data = json.loads(out)
    assert status == 1
    assert any("tool name 'echo'" in e for e in data["errors"])
    assert any("'old'" in e and "incompatible" in e for e in data["errors"])


def test_errors_are_one_line_with_hint(site, capsys, monkeypatch):
    site.add("echo", PACK)
    site.add("echo2", PACK.replace('key="echo"', 'key="echo2"'))
    status, _out, err = run(capsys, "render")
    assert status == 2
    lines = err.strip().splitlines()
    assert lines[0].startswith("haversack: error: Two contributors claim the tool name 'echo'")
    assert lines[1].startswith("hint: `haversack check`")
    assert "Traceback" not in err
    monkeypatch.setenv("HAVERSACK_DEBUG", "1")
    from haversack.errors import NameConflictError

    with pytest.raises(NameConflictError):
        main(["render"])


def test_strict_and_pack_options(site, capsys):
    site.add("echo", PACK)
    site.add("bad", "raise ImportError('nope')")
    assert run(capsys, "render", "--strict")[0] == 2
    assert run(capsys, "render", "--strict", "-p", "echo")[0] == 0
    status, _, err = run(capsys, "render", "--config", "missing.toml")
    assert status == 2
    assert "hint: check the [tool.haversack] options" in err


def test_command_table_entries_are_command_modules():
    import importlib

    assert {"packs", "render", "tools", "call", "check"} <= set(COMMANDS)
    for module_name in COMMANDS.values():
        module = importlib.import_module(module_name)
        assert module.HELP
        assert callable(module.add_arguments)
        assert callable(module.run)


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "haversack", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "packs" in result.stdout
    assert "check" in result.stdout


COMMAND_PACK = """
from haversack.hookspecs import hookimpl

def _add(parser):
    parser.add_argument("--shout", action="store_true")

def _run(args):
    from haversack.cli import selection_kwargs
    text = "hello from a pack"
    print(text.upper() if args.shout else text, selection_kwargs(args)["packs"])
    return 3

@hookimpl
def register_commands(register):
    register("hello", help="say hello", add_arguments=_add, run=_run)
"""


def test_hook_register_commands_adds_a_command_with_the_shared_options(site, capsys):
    site.add("greeter", COMMAND_PACK)
    status, out, _ = run(capsys, "hello", "--shout", "-p", "greeter")
    assert status == 3
    assert out.strip() == "HELLO FROM A PACK ['greeter']"
    with pytest.raises(SystemExit):
        main(["--help"])
    out, _ = capsys.readouterr()
    assert "say hello (pack 'greeter')" in out


def test_hook_register_commands_refuses_core_names_and_second_claims(site, capsys):
    site.add("a", COMMAND_PACK.replace('"hello"', '"render"'))
    site.add("b", COMMAND_PACK)
    site.add("c", COMMAND_PACK)
    site.add("broken", "raise ImportError('nope')")
    status, _, err = run(capsys, "hello")
    assert status == 3
    assert "pack 'a' (hvt-a 1.0) registers command 'render', a core command" in err
    assert "pack 'c' (hvt-c 1.0) registers command 'hello', already registered by pack 'b'" in err
    assert "pack 'broken'" in err  # reported, not fatal


def test_core_commands_do_not_import_packs_for_commands(site, capsys):
    site.add("greeter", COMMAND_PACK)
    site.add("broken", "raise ImportError('nope')")
    _, _, err = run(capsys, "render", "--disable", "*")
    assert "warning" not in err


def test_an_unknown_command_is_a_usage_error_listing_the_commands(site, capsys):
    site.add("greeter", COMMAND_PACK)
    with pytest.raises(SystemExit) as info:
        main(["helo"])
    assert info.value.code == 2
    _, err = capsys.readouterr()
    assert "invalid choice: 'helo'" in err
    assert "'hello'" in err


OPENS = """
from dataclasses import dataclass, field
from pathlib import Path
from haversack import Binding, MarkdownSection, Tool, ToolResult
from haversack.errors import PackConfigError
from haversack.hookspecs import hookimpl

class Store:
    def __init__(self, folder):
        if not Path(folder).is_dir():
            raise PackConfigError(
                f"Store folder {folder} does not exist; create it or fix 'folder'."
            )
        self.folder = folder

@dataclass(frozen=True)
class Options:
    folder: Path = Path("store")

def _ls(params, *, context):
    return ToolResult.ok(message=str(context.resources.get(Store).folder))

@hookimpl
def config_type():
    return Options

@hookimpl
def register_tools(register):
    register(Tool[None, None](name="where", description="Where the store is.", handler=_ls))

@hookimpl
def register_resources(register, config):
    register(Binding(Store, lambda r: Store(config.folder)))
"""


def test_check_opens_resources_and_reports_each_in_one_line(site, capsys, tmp_path):
    site.add("store", OPENS)
    (tmp_path / "haversack.toml").write_text('[packs.store]\nfolder = "data"\n')
    status, out, _ = run(capsys, "check")
    assert status == 1
    missing = tmp_path / "data"
    assert out.splitlines()[0] == (
        f"error: resource Store cannot open: Store folder {missing} does not exist; "
        "create it or fix 'folder'."
    )
    assert "FAILED (1 loaded: store; 1 errors)" in out
    assert run(capsys, "check", "--no-resources")[0] == 0
    missing.mkdir()
    status, out, _ = run(capsys, "check")
    assert status == 0, out


def test_call_on_a_resource_that_cannot_open_is_one_line(site, capsys, tmp_path):
    site.add("store", OPENS)
    status, out, err = run(capsys, "call", "where")
    assert status == 2
    first, hint = err.splitlines()
    assert first.startswith("haversack: error: resource Store cannot open: Store folder")
    assert "store does not exist; create it or fix 'folder'." in first
    assert hint == "hint: `haversack check` opens every resource and lists each one that fails."
    (tmp_path / "store").mkdir()
    status, out, _ = run(capsys, "call", "where")
    assert (status, out) == (0, "store\n")


def test_check_calls_a_config_mistake_a_config_mistake(site, capsys):
    site.add("echo", PACK)
    site.add("store", OPENS)
    status, out, _ = run(capsys, "check", "-p", "ecoh")
    assert status == 1
    assert "error: config error: packs= (--pack) names 'ecoh'" in out
    assert "(did you mean 'echo'?)" in out
    (site.root.parent / "haversack.toml").write_text("[packs.store]\nfoldr = 'x'\n")
    status, out, _ = run(capsys, "check")
    assert status == 1
    assert "error: config error: Invalid options for pack 'store'" in out
    assert "unknown option 'foldr'" in out
    assert "broken" not in out


def test_render_with_a_typo_is_an_error_not_an_empty_prompt(site, capsys):
    site.add("echo", PACK)
    status, out, err = run(capsys, "render", "-p", "ecoh")
    assert (status, out) == (2, "")
    assert "names 'ecoh'" in err
    assert "did you mean 'echo'?" in err


def test_packs_shows_removed_tools_and_tokens_saved(site, capsys, tmp_path):
    site.add(
        "echo",
        PACK.replace("tools=[echo]", "tools=[echo, echo2]").replace(
            "echo = Tool",
            'echo2 = Tool[EchoParams, None](name="echo2", description="Echo a '
            'second time, with a longer description.", handler=_echo)\necho = Tool',
        ),
    )
    (tmp_path / "haversack.toml").write_text('[packs.echo]\nexclude_tools = ["echo2"]\n')
    status, out, _ = run(capsys, "packs")
    assert status == 0
    assert "saved by tools/exclude_tools)" in out
    assert "    removed by options: echo2" in out
    assert "    tools: echo\n" in out


def test_client_config_is_absolute_and_names_the_config(site, capsys, tmp_path, monkeypatch):
    (tmp_path / "haversack.toml").write_text("")
    status, out, _ = run(capsys, "client-config", "-p", "echo")
    assert status == 0
    server = json.loads(out)["mcpServers"]["haversack"]
    assert server == {
        "command": sys.executable,
        "args": ["-m", "haversack", "serve", "--name", "haversack", "--pack", "echo"],
        "env": {"HAVERSACK_CONFIG": str(tmp_path / "haversack.toml")},
    }
    monkeypatch.chdir("/")
    status, out, _ = run(capsys, "client-config", "--format", "vscode", "--name", "mine")
    entry = json.loads(out)["servers"]["mine"]
    assert entry["type"] == "stdio"
    assert "env" not in entry  # no config file above /
    status, out, _ = run(
        capsys, "client-config", "--entry-only", "--config", str(tmp_path / "haversack.toml")
    )
    assert json.loads(out)["env"]["HAVERSACK_CONFIG"] == str(tmp_path / "haversack.toml")


def test_serve_with_a_resource_that_cannot_open_exits_at_start_up(site, capsys):
    """A client would otherwise see the server die at its first call ("Connection closed")."""
    site.add("store", OPENS)
    status, out, err = run(capsys, "serve")
    assert status == 2
    assert out == ""
    first = err.splitlines()[0]
    assert first.startswith("haversack: error: resource Store cannot open: Store folder")


def test_listing_commands_do_not_wait_for_a_hanging_pack(site, capsys, monkeypatch, caplog):
    import uuid

    gate = f"hvt_gate_{uuid.uuid4().hex[:8]}"
    (site.root / f"{gate}.py").write_text("import threading\nGATE = threading.Event()\n")
    module = __import__(gate)
    site.add("echo", PACK)
    site.add("hangs", f"import {gate}\n{gate}.GATE.wait()\n")
    monkeypatch.setenv("HAVERSACK_IMPORT_BUDGET", "0.05")
    monkeypatch.setenv("HAVERSACK_IMPORT_NOTICE", "0")
    try:
        status, out, err = run(capsys, "tools")
        assert status == 0
        assert out.startswith("echo  [echo]")
        assert "still importing pack 'hangs'" in err
        assert any(
            "left out pack 'hangs' (hvt-hangs 1.0) (timed-out)" in r.getMessage()
            for r in caplog.records
        )
        status, out, _ = run(capsys, "packs")
        assert status == 0
        assert "hangs  (hvt-hangs 1.0)  timed-out" in out
        status, out, _ = run(capsys, "check", "--no-resources")
        assert status == 1
        assert "error: pack 'hangs' (hvt-hangs 1.0) is timed-out: importing" in out
    finally:
        module.GATE.set()
