"""``llm``'s own tool loop (``chain``) and its CLI (``llm -T``, through the plugin the
``haversack`` entry point registers) run the VFS pack's tools through the executor, driven
by a scripted model registered with llm's ``register_models`` hook: calls run, a failed call
is rolled back, a policy's denial is the tool output, and a held call is put to ``approve``
(llm has no per-tool approval)."""

from __future__ import annotations

import llm
import pytest
from click.testing import CliRunner
from llm.cli import cli

from haversack import CallOutcome
from haversack.bridges.llm import tools

from ._kit import SEEDED, executor, outcomes, workspace
from ._llm_model import MODEL_ID, scripted

OK, ERROR, DENIED, PENDING = (
    CallOutcome.OK,
    CallOutcome.ERROR,
    CallOutcome.DENIED,
    CallOutcome.PENDING,
)


def test_calls_rollback_and_denial_reach_the_model():
    steps = (
        ("write_file", {"path": "a.md", "content": "one\n"}, "c1"),
        ("scribble", {"path": "b.md"}, "c2"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c3"),
        ("read_file", {"path": SEEDED}, "c4"),
        ("edit_file", {"path": SEEDED, "old_string": "1", "new_string": "2"}, "c5"),
        "done",
    )
    with executor() as ex, scripted(*steps) as model:
        chain = llm.get_model(MODEL_ID).chain("Work on the files.", tools=tools(ex))
        assert chain.text() == "done"
        assert {"read_file", "write_file", "edit_file", "rm", "scribble"} <= set(model.tool_names)
        fs = workspace(ex)
        assert fs.read_text("a.md") == "one\n"
        assert not fs.exists("b.md")  # the failed call's write was rolled back
        assert fs.read_text(SEEDED) == "x = 2\n"
        wrote, failed, denied, _read, edited = model.seen
        assert "a.md" in wrote
        assert "failed after writing" in failed
        assert "Denied by policy 'vfs-read-before-write'" in denied
        assert "notes.md" in edited
        assert outcomes(ex) == [
            ("write_file", OK),
            ("scribble", ERROR),
            ("edit_file", DENIED),
            ("read_file", OK),
            ("edit_file", OK),
        ]


@pytest.mark.parametrize("answer", [True, False, None])
def test_a_held_call_is_put_to_approve(answer):
    steps = (
        ("write_file", {"path": "a.md", "content": "one\n"}, "w1"),
        ("rm", {"path": "a.md"}, "r1"),
        "finished",
    )
    asked = []

    def approve(pending):
        asked.append((pending.tool_name, pending.call_id, pending.policy))
        return answer

    with executor() as ex, scripted(*steps) as model:
        given = None if answer is None else approve
        chain = llm.get_model(MODEL_ID).chain("Remove a.md.", tools=tools(ex, approve=given))
        assert chain.text() == "finished"
        if answer is None:
            assert asked == []
            assert "No one is available to approve this call" in model.seen[-1]
        else:
            assert asked == [("rm", "r1", "approval")]
        if answer:
            assert not workspace(ex).exists("a.md")
            assert outcomes(ex) == [("write_file", OK), ("rm", PENDING), ("rm", OK)]
        else:
            assert workspace(ex).read_text("a.md") == "one\n"
            assert outcomes(ex) == [("write_file", OK), ("rm", PENDING), ("rm", DENIED)]
            assert ex.pending == ()
        if answer is False:
            assert "The user did not approve this call." in model.seen[-1]


def test_llm_cli_runs_the_installed_packs_tools_through_the_plugin(tmp_path, monkeypatch):
    monkeypatch.setenv("HAVERSACK_PACKS", "vfs")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    monkeypatch.chdir(tmp_path)  # no project configuration file applies
    steps = (
        ("write_file", {"path": "a.md", "content": "one\n"}, "c1"),
        ("write_file", {"path": "a.md", "content": "two\n"}, "c2"),
        ("read_file", {"path": "a.md"}, "c3"),
        "done",
    )
    with scripted(*steps) as model:
        listed = CliRunner().invoke(cli, ["tools", "list"])
        assert listed.exit_code == 0, listed.output
        for name in ("read_file", "write_file", "edit_file", "rm", "ls", "glob", "grep"):
            assert f"{name}(" in listed.output
        argv = ["prompt", "-m", MODEL_ID, "--no-log", "-T", "write_file", "-T", "read_file"]
        done = CliRunner().invoke(cli, [*argv, "Write a.md."])
        assert done.exit_code == 0, done.output
        assert "done" in done.output
        created, refused, read = model.seen
        assert "a.md" in created
        assert "already exists" in refused  # a failed call, as the tool's output
        assert "one" in read  # the refused write changed nothing
        assert "two" not in read
