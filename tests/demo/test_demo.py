"""``haversack demo``: the scripted session, run in process against the installed packs."""

from __future__ import annotations

import json
import os
import sys

import pytest

from haversack.cli import _main
from haversack.testing import FakeSite
from haversack_demo import (
    SCENARIO,
    Act,
    DemoOptions,
    PackLine,
    SandboxStatus,
    Scenario,
    Step,
    _runner,
    run_scenario,
)
from haversack_demo._availability import Availability

#: A stand-in podman pack: the real tool names, a container that cannot start when asked to.
FAKE_PODMAN = """
import os
from dataclasses import dataclass
from haversack import Binding, Tool, ToolResult
from haversack.hookspecs import hookimpl

class Container:
    pass

def _start(resolver):
    if os.environ.get("HVT_PODMAN_BROKEN") == "1":
        raise RuntimeError("cannot start the container: no image\\nsecond line")
    return Container()

@dataclass(frozen=True)
class ShellParams:
    command: str

def _shell(params, *, context):
    return ToolResult.ok(message="ran")

@hookimpl
def register_tools(register):
    register(Tool[ShellParams, None](name="shell_execute", description="Run.", handler=_shell))

@hookimpl
def register_resources(register):
    register(Binding(Container, _start))
"""


@pytest.fixture
def demo(monkeypatch, tmp_path, capsys):
    """Run ``haversack demo ARGS`` through the real CLI; returns (exit status, stdout)."""
    for var in ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT", "HAVERSACK_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray [tool.haversack] configuration
    monkeypatch.setitem(_main.COMMANDS, "demo", "haversack_demo.cli")

    def run(*argv: str) -> tuple[int, str]:
        status = _main.main(["demo", *argv])
        return status, capsys.readouterr().out

    return run


def test_planning_and_vfs_show_denials_rollback_and_summary(demo):
    status, out = demo("-p", "planning", "-p", "vfs", "--no-sandbox")

    assert status == 0, out
    assert "Denied by policy 'planning-plan-required'" in out
    assert "Denied by policy 'vfs-read-before-write'" in out
    assert "error, rolled back (as scripted)" in out
    assert "SKIPPED: --no-sandbox given" in out
    assert "== Summary" in out
    assert "calls 19: ok 16, denied 2, failed and rolled back 1" in out
    assert "Every step behaved as scripted." in out
    assert "UNEXPECTED" not in out


def test_prompt_and_tool_list_are_printed(demo):
    status, out = demo("-p", "planning", "-p", "vfs", "--no-sandbox", "--full-prompt")

    assert status == 0, out
    assert "## 1. Planning" in out
    assert "write_file(path, content)" in out
    assert "more lines (--full-prompt" not in out


def test_json_transcript_parses(demo):
    status, out = demo("-p", "planning", "-p", "vfs", "--no-sandbox", "--json")

    data = json.loads(out)
    assert status == 0
    assert data["ok"] is True
    assert data["sandbox"] == {"enabled": False, "reason": "--no-sandbox given"}
    assert {"write_file", "planning_setup_plan"} <= {t["name"] for t in data["prompt"]["tools"]}
    ran = [s for s in data["steps"] if s["status"] == "ran"]
    assert [s["tool"] for s in ran if s["outcome"] == "denied"] == [
        "planning_read_plan",
        "edit_file",
    ]
    rolled_back = [s for s in ran if s["rolled_back"]]
    assert [s["arguments"]["old_string"] for s in rolled_back] == [", 1)"]
    assert data["summary"]["calls"] == len(ran)
    assert data["summary"]["failed_rolled_back"] == 1
    assert data["summary"]["per_tool"]["edit_file"]["calls"] == 4


def test_missing_pack_skips_its_steps_with_the_reason(demo):
    status, out = demo("-p", "planning", "--no-sandbox", "--json")

    data = json.loads(out)
    assert status == 0
    by_tool = {s["tool"]: s for s in data["steps"]}
    assert by_tool["write_file"]["status"] == "skipped"
    reason = by_tool["write_file"]["skip_reason"]
    assert "provided by the vfs pack (haversack-vfs" in reason
    assert "disabled" in reason
    assert all(s["status"] == "ran" for s in data["steps"] if s["act"] == "Plan the work")


def test_pack_not_installed_names_the_distribution():
    availability = Availability(
        tools={"planning_read_plan"},
        packs={},
        providers={"write_file": "vfs"},
        sandbox=SandboxStatus(False, "--no-sandbox given"),
    )
    act = Act("Files", (Step("ls", {}, "list"),))

    assert availability.missing("write_file") == (
        "write_file is provided by the vfs pack (haversack-vfs), which is not installed; "
        "install haversack-vfs to run this step"
    )
    assert availability.skip_reason(act, Step("read_file", {}, "x", needs=("write_file",))) == (
        "read_file is not in the composed prompt"
    )
    sandbox_act = Act("Sandbox", act.steps, sandbox=True)
    assert availability.skip_reason(sandbox_act, act.steps[0]) == (
        "sandbox skipped: --no-sandbox given"
    )


def test_dependent_step_is_skipped_when_a_needed_tool_is_missing():
    availability = Availability(
        tools={"ls"},
        packs={"vfs": PackLine("vfs", "haversack-vfs", "0.1.0", "loaded", tools=("ls",))},
        providers={"write_file": "vfs"},
        sandbox=SandboxStatus(True),
    )
    step = Step("ls", {}, "x", needs=("write_file",))

    reason = availability.skip_reason(Act("Files", (step,)), step)

    assert reason is not None
    assert reason.startswith("depends on an earlier write_file call")
    assert "this version of the pack does not provide it" in reason


def test_an_unexpected_outcome_fails_the_run():
    scenario = Scenario(
        title="wrong expectations",
        seeds=(),
        acts=(
            Act(
                "Plan",
                (
                    Step("planning_read_plan", {}, "Expected to work, but is denied."),
                    Step("planning_setup_plan", {"objective": "x"}, "ok", contains=("nope",)),
                ),
            ),
        ),
        providers={},
    )

    transcript = run_scenario(scenario, DemoOptions(packs=["planning"], sandbox=False))

    assert transcript.ok is False
    assert [s.problems for s in transcript.steps] == [
        ("outcome denied, expected ok",),
        ("result lacks 'nope'",),
    ]
    assert transcript.summary is not None
    assert transcript.summary.unexpected == 2


def test_scenario_expects_a_denial_and_a_rollback():
    steps = [step for _, step in SCENARIO.steps()]

    assert any(s.expect == ("denied",) for s in steps)
    assert any(set(s.expect) <= {"failed", "error"} for s in steps)
    assert {s.tool for s in steps} <= set(SCENARIO.providers)


@pytest.fixture
def fake_podman(tmp_path, monkeypatch):
    """The installed packs plus a fake podman pack (the real one is disabled by distribution)."""
    site = FakeSite(tmp_path / "site").activate(monkeypatch, keep_installed=True)
    module = site.add("podman", FAKE_PODMAN, distribution="hvt-podman")
    yield module
    sys.modules.pop(module, None)


def test_sandbox_skipped_when_podman_cannot_run(demo, fake_podman, monkeypatch):
    monkeypatch.setattr(_runner, "podman_problem", lambda: "'podman info' exited 125: Error: x")

    status, out = demo("--disable", "haversack-podman", "--json")

    data = json.loads(out)
    assert status == 0
    assert data["sandbox"] == {
        "enabled": False,
        "reason": "podman not usable: 'podman info' exited 125: Error: x",
    }
    shell = [s for s in data["steps"] if s["tool"] == "shell_execute"]
    assert shell
    assert all(s["skip_reason"].startswith("sandbox skipped: podman not usable") for s in shell)
    assert "shell_execute" not in {t["name"] for t in data["prompt"]["tools"]}


def test_sandbox_skipped_when_its_container_cannot_start(demo, fake_podman, monkeypatch):
    monkeypatch.setattr(_runner, "podman_problem", lambda: None)
    monkeypatch.setenv("HVT_PODMAN_BROKEN", "1")

    status, out = demo("--disable", "haversack-podman")

    assert status == 0, out
    assert "SKIPPED: podman not usable: " in out
    assert "cannot start the container: no image" in out
    assert "second line" not in out
    assert "Every step behaved as scripted." in out


@pytest.mark.podman
def test_full_demo_with_the_sandbox(demo):
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")
    status, out = demo("--json")

    data = json.loads(out)
    assert data["sandbox"]["enabled"] is True, data["sandbox"]
    assert status == 0, [s for s in data["steps"] if s["problems"]]
    shell = [s for s in data["steps"] if s["tool"] == "shell_execute"]
    assert all(s["status"] == "ran" for s in shell)
    assert any(s["rolled_back"] for s in shell)
    assert _containers_of_this_process() == [], "the sandbox container outlived the demo"


def _containers_of_this_process() -> list[str]:
    """Names of the sandbox containers this process created that still exist."""
    import subprocess

    from haversack_podman import PID_LABEL, podman_binary, podman_env

    label = f"label={PID_LABEL}={os.getpid()}"
    listed = subprocess.run(
        [podman_binary(), "ps", "-a", "--filter", label, "--format", "{{.Names}}"],
        env=podman_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()
