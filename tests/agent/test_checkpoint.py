"""Checkpoint and resume of an agent run: every bundled pack's state round-trips, the
workspace comes back with the same tree hash, and bad checkpoints are refused whole."""

from __future__ import annotations

import functools
import hashlib
import json

import pytest

from haversack import CheckpointError, Session
from haversack._packs import compose
from haversack._policy_state import policy_values
from haversack.agent import Agent, load_checkpoint, save_checkpoint, tree_hash
from haversack.agent._checkpoint import CHECKPOINT_FILE, DEFAULT_MAX_CHECKPOINT_BYTES
from haversack.testing import FakeCall, FakeProvider, FakeReply

SETUP = FakeCall("planning_setup_plan", {"objective": "ship it", "steps": ["build", "test"]}, "c1")
STEP = FakeCall("planning_update_step", {"step_id": 1, "status": "done"}, "c2")
WRITE = FakeCall("write_file", {"path": "notes.md", "content": "one\n"}, "c3")
READ = FakeCall("read_file", {"path": "notes.md"}, "c4")
EDIT = FakeCall("edit_file", {"path": "notes.md", "old_string": "one", "new_string": "two"}, "c5")
SCRIPT = [
    FakeReply("plan", calls=[SETUP]),
    FakeReply("write", calls=[WRITE, STEP]),
    FakeReply("read", calls=[READ]),
    FakeReply("edit", calls=[EDIT]),
    FakeReply("All done."),
]


@functools.cache
def _prompt(workspace=None):
    # Composing is the slow part of these tests: once per workspace is enough.
    return compose(ns="haversack", key="cli", packs=["planning", "vfs"], workspace=workspace)


def _agent(fake, workspace=None, max_turns=20):
    return Agent(
        _prompt(workspace),
        "openai:m",
        base_url=fake.openai_base_url,
        api_key="sk-test",
        max_turns=max_turns,
    )


def _plan(session):
    from haversack_planning import Plan

    return session[Plan].latest()


def _summary(result, session):
    return (
        result.output,
        result.stop_reason,
        result.usage,
        [(t.index, t.text, t.tool_calls) for t in result.turns],
        [(c.tool_name, c.call_id, c.outcome, c.rendered) for c in result.calls],
        result.messages,
        _plan(session),
    )


def test_every_slice_and_the_memory_workspace_round_trip(tmp_path):
    whole_session = Session()
    with FakeProvider(SCRIPT) as fake:
        whole = _agent(fake).run("go", session=whole_session)
    for cut in range(1, len(SCRIPT)):
        directory = tmp_path / f"cut{cut}"
        first = Session()
        with FakeProvider(SCRIPT[:cut]) as fake:
            _agent(fake, max_turns=cut).run("go", session=first, checkpoint=directory)
        saved = load_checkpoint(directory)
        assert len(saved.turns) == cut
        if cut >= 3:  # the read recorded the file for read-before-write
            assert saved.policy_records["vfs-read-before-write"] == ("notes.md",)
        if cut >= 2:
            assert saved.workspace is not None
            assert saved.workspace.kind == "memory"
            text = "two\n" if cut >= 4 else "one\n"
            assert saved.workspace.files == {"notes.md": text}
        resumed = Session()
        with FakeProvider(SCRIPT[cut:]) as fake:
            result = _agent(fake).run("ignored", session=resumed, resume=saved)
            assert fake.remaining == 0
        assert _summary(result, resumed) == _summary(whole, whole_session)
        assert policy_values(resumed, "vfs-read-before-write") == policy_values(
            whole_session, "vfs-read-before-write"
        )
    final = _plan(whole_session)
    assert final.steps[0].status == "done"
    assert final.objective == "ship it"


def test_the_edit_after_resume_needs_the_read_recorded_before_it(tmp_path):
    # Without the policy records the edit after the resume would be refused (not read).
    with FakeProvider(SCRIPT[:3]) as fake:
        _agent(fake, max_turns=3).run("go", checkpoint=tmp_path)
    saved = load_checkpoint(tmp_path)
    with FakeProvider(SCRIPT[3:]) as fake:
        result = _agent(fake).run("", resume=saved, checkpoint=tmp_path)
    edit = [c for c in result.calls if c.tool_name == "edit_file"]
    assert edit[0].success, edit[0].rendered
    final = load_checkpoint(tmp_path)
    assert final.stop_reason == "completed"
    assert final.workspace.files == {"notes.md": "two\n"}


def test_a_host_workspace_is_checked_by_tree_hash(tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("kept\n")
    checkpoint = tmp_path / "ckpt"
    with FakeProvider(SCRIPT[:2]) as fake:
        _agent(fake, workspace=workspace, max_turns=2).run("go", checkpoint=checkpoint)
    saved = load_checkpoint(checkpoint)
    assert saved.workspace.kind == "directory"
    assert saved.workspace.files == {}
    assert saved.workspace.tree_hash == tree_hash(workspace)
    (workspace / "notes.md").write_text("changed by someone else\n")
    session = Session()
    with FakeProvider(SCRIPT[2:]) as fake, pytest.raises(CheckpointError, match="changed since"):
        _agent(fake, workspace=workspace).run("", session=session, resume=saved)
    assert fake.requests == []  # refused before the model was asked anything
    assert all(len(session[tp]) == 0 for tp in session.slice_types)  # nothing half loaded
    (workspace / "notes.md").write_text("one\n")  # back as the checkpoint saw it
    with FakeProvider(SCRIPT[2:]) as fake:
        result = _agent(fake, workspace=workspace).run("", resume=saved)
    assert result.output == "All done."
    assert (workspace / "notes.md").read_text() == "two\n"


def test_tree_hash_sees_content_names_kinds_and_links(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("x")
    base = tree_hash(tmp_path)
    assert tree_hash(tmp_path) == base
    (tmp_path / "a" / "f").write_text("y")
    changed = tree_hash(tmp_path)
    assert changed != base
    (tmp_path / "a" / "f").write_text("x")
    assert tree_hash(tmp_path) == base
    (tmp_path / "a" / "empty").mkdir()
    with_dir = tree_hash(tmp_path)
    assert with_dir != base
    (tmp_path / "a" / "empty").rmdir()
    (tmp_path / "link").symlink_to("a/f")
    assert tree_hash(tmp_path) not in (base, with_dir)


# ---------------------------------------------------------------------- hostile checkpoints
@pytest.fixture
def good(tmp_path):
    directory = tmp_path / "good"
    with FakeProvider(SCRIPT[:2]) as fake:
        _agent(fake, max_turns=2).run("go", checkpoint=directory)
    return directory


def _rewrite(directory, mutate_header=None, mutate_body=None):
    raw = (directory / CHECKPOINT_FILE).read_bytes()
    head, _, body = raw.partition(b"\n")
    header = json.loads(head)
    if mutate_body is not None:
        body = mutate_body(body)
        header["bytes"] = len(body)
        header["sha256"] = hashlib.sha256(body).hexdigest()
    if mutate_header is not None:
        mutate_header(header)
    (directory / CHECKPOINT_FILE).write_bytes(json.dumps(header).encode() + b"\n" + body)


def _refused(directory, match):
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(directory)


def test_truncated_checkpoints_are_refused(good):
    raw = (good / CHECKPOINT_FILE).read_bytes()
    for length in (0, 10, raw.index(b"\n"), raw.index(b"\n") + 1, len(raw) // 2, len(raw) - 1):
        (good / CHECKPOINT_FILE).write_bytes(raw[:length])
        _refused(good, "not a haversack checkpoint|damaged or truncated")


def test_a_flipped_byte_is_refused(good):
    raw = bytearray((good / CHECKPOINT_FILE).read_bytes())
    raw[-20] ^= 0x01
    (good / CHECKPOINT_FILE).write_bytes(bytes(raw))
    _refused(good, "damaged or truncated")


def test_another_version_is_refused_with_the_version_named(good):
    _rewrite(good, mutate_header=lambda h: h.update(version=2))
    _refused(good, "format version 2; this haversack reads version 1 only")
    _rewrite(good, mutate_header=lambda h: h.update(version="1"))
    _refused(good, "format version '1'")


def test_an_oversized_checkpoint_is_refused_before_it_is_read(good):
    size = (good / CHECKPOINT_FILE).stat().st_size
    _refused_big = pytest.raises(CheckpointError, match=f"is {size} bytes, over the limit of 100")
    with _refused_big:
        load_checkpoint(good, max_bytes=100)
    assert load_checkpoint(good, max_bytes=DEFAULT_MAX_CHECKPOINT_BYTES).task == "go"


def test_valid_json_of_the_wrong_shape_is_refused(good):
    _rewrite(good, mutate_body=lambda b: b'{"task": 5}')
    _refused(good, "is not valid")
    _rewrite(good, mutate_body=lambda b: b"[" * 100_000 + b"]" * 100_000)
    _refused(good, "is not valid")


def test_a_missing_checkpoint_says_so(tmp_path):
    _refused(tmp_path, "checkpoint.json is missing")


def _body_edit(good, edit):
    def mutate(body):
        data = json.loads(body)
        edit(data)
        return json.dumps(data).encode()

    _rewrite(good, mutate_body=mutate)
    return load_checkpoint(good)


def test_an_unknown_slice_type_or_bad_item_loads_nothing(good):
    def unknown(data):
        data["slices"][0]["type"] = "os:system"

    saved = _body_edit(good, unknown)
    session = Session()
    with FakeProvider(SCRIPT[2:]) as fake, pytest.raises(CheckpointError, match="not know"):
        _agent(fake).run("", session=session, resume=saved)
    assert session.slice_types == ()  # nothing was loaded, not even the logs

    def bad_item(data):
        data["slices"][0]["type"] = "haversack_planning._model:Plan"
        data["slices"][0]["items"][0]["steps"] = "not a list"

    saved = _body_edit(good, bad_item)
    session = Session()
    with FakeProvider(SCRIPT[2:]) as fake, pytest.raises(CheckpointError, match="steps"):
        _agent(fake).run("", session=session, resume=saved)
    assert session.slice_types == ()


def test_a_checkpoint_for_another_prompt_or_provider_is_refused(good):
    saved = load_checkpoint(good)
    with FakeProvider(SCRIPT[2:]) as fake:
        other = Agent(
            compose(ns="haversack", key="cli", packs=["planning"]),
            "openai:m",
            base_url=fake.openai_base_url,
            api_key="sk-test",
        )
        with pytest.raises(CheckpointError, match="another prompt or tool set"):
            other.run("", resume=saved)
        anthropic = Agent(
            _prompt(), "anthropic:m", base_url=fake.anthropic_base_url, api_key="sk-test"
        )
        with pytest.raises(CheckpointError, match="provider 'openai'"):
            anthropic.run("", resume=saved)
    assert fake.requests == []


def test_a_failed_save_leaves_the_previous_checkpoint(good):
    before = (good / CHECKPOINT_FILE).read_bytes()
    saved = load_checkpoint(good)

    class Unwritable:
        pass

    import dataclasses

    broken = dataclasses.replace(saved, extra={"x": Unwritable()})
    with pytest.raises(CheckpointError):
        save_checkpoint(good, broken)
    assert (good / CHECKPOINT_FILE).read_bytes() == before
    assert [p.name for p in good.iterdir()] == [CHECKPOINT_FILE]  # no temporary left


def test_a_memory_workspace_that_does_not_match_its_hash_loads_nothing(good):
    def tamper(data):
        data["workspace"]["files"]["notes.md"] = "planted\n"

    saved = _body_edit(good, tamper)
    session = Session()
    with FakeProvider(SCRIPT[2:]) as fake, pytest.raises(CheckpointError, match="own tree hash"):
        _agent(fake).run("", session=session, resume=saved)
    assert session.slice_types == ()


def test_arun_checkpoints_and_resumes_too(tmp_path):
    import asyncio

    whole_session = Session()
    with FakeProvider(SCRIPT) as fake:
        whole = _agent(fake).run("go", session=whole_session)
    with FakeProvider(SCRIPT[:2]) as fake:
        asyncio.run(_agent(fake, max_turns=2).arun("go", checkpoint=tmp_path))
    saved = load_checkpoint(tmp_path)
    assert len(saved.turns) == 2
    resumed = Session()
    with FakeProvider(SCRIPT[2:]) as fake:
        result = asyncio.run(_agent(fake).arun("", session=resumed, resume=saved))
    assert _summary(result, resumed) == _summary(whole, whole_session)


# -------------------------------------------------- a run that dies while a human is asked
class _Died(BaseException):
    """The process ending while the approval prompt waits (as a kill or Ctrl-C would)."""


HELD = [
    FakeReply("plan", calls=[SETUP]),
    FakeReply("write", calls=[STEP, WRITE]),
    FakeReply("read", calls=[READ]),
    FakeReply("All done."),
]


@functools.cache
def _asking_prompt():
    from haversack import ApprovalPolicy

    return compose(
        ns="haversack",
        key="cli",
        packs=["planning", "vfs"],
        policies=[ApprovalPolicy(["write_file"])],
    )


def _asking_agent(fake, approve):
    return Agent(
        _asking_prompt(),
        "openai:m",
        base_url=fake.openai_base_url,
        api_key="sk-test",
        approve=approve,
    )


def _die(pending):
    raise _Died


def test_a_run_killed_at_the_approval_prompt_resumes_with_the_same_question(tmp_path):
    whole_session = Session()
    with FakeProvider(HELD) as fake:
        whole = _asking_agent(fake, lambda p: p.approve()).run("go", session=whole_session)
    assert _plan(whole_session).steps[0].status == "done"

    with FakeProvider(HELD[:2]) as fake, pytest.raises(_Died):
        _asking_agent(fake, _die).run("go", checkpoint=tmp_path)
    saved = load_checkpoint(tmp_path)
    assert saved.stop_reason is None
    assert [p.tool_name for p in saved.pending] == ["write_file"]
    assert json.loads(saved.pending[0].arguments) == WRITE.arguments
    # The step update ran before the write was held: it is answered, never run twice.
    assert [d.call.name for d in saved.open_turn.done] == ["planning_update_step"]
    assert saved.workspace.files == {}  # the held write did not run

    asked = []
    resumed = Session()
    with FakeProvider(HELD[2:]) as fake:
        result = _asking_agent(fake, lambda p: asked.append(p) or p.approve()).run(
            "", session=resumed, resume=saved, checkpoint=tmp_path
        )
        assert fake.remaining == 0
    assert [(p.tool_name, p.call_id) for p in asked] == [("write_file", WRITE.call_id)]
    assert _summary(result, resumed) == _summary(whole, whole_session)
    steps = [c for c in result.calls if c.tool_name == "planning_update_step"]
    assert len(steps) == 1
    final = load_checkpoint(tmp_path)
    assert final.open_turn is None
    assert final.pending == ()
    assert final.workspace.files == {"notes.md": "one\n"}


def test_a_held_call_denied_after_the_resume_is_told_to_the_model(tmp_path):
    with FakeProvider(HELD[:2]) as fake, pytest.raises(_Died):
        _asking_agent(fake, _die).run("go", checkpoint=tmp_path)
    saved = load_checkpoint(tmp_path)
    with FakeProvider(HELD[2:]) as fake:
        result = _asking_agent(fake, lambda p: p.deny("not today")).run("", resume=saved)
        tool_messages = [m for m in fake.requests[0].body["messages"] if m.get("role") == "tool"]
    # One answer for every call the model made: none lost, none given twice.
    assert [m["tool_call_id"] for m in tool_messages] == [
        SETUP.call_id,
        STEP.call_id,
        WRITE.call_id,
    ]
    assert "not today" in tool_messages[-1]["content"]
    assert result.output == "All done."


def test_arun_resumes_a_run_killed_at_the_approval_prompt(tmp_path):
    import asyncio

    with FakeProvider(HELD[:2]) as fake, pytest.raises(_Died):
        asyncio.run(_asking_agent(fake, _die).arun("go", checkpoint=tmp_path))
    saved = load_checkpoint(tmp_path)
    assert [d.call.name for d in saved.open_turn.done] == ["planning_update_step"]
    with FakeProvider(HELD[2:]) as fake:
        result = asyncio.run(_asking_agent(fake, lambda p: p.approve()).arun("", resume=saved))
    assert [c.tool_name for c in result.calls if c.success] == [
        "planning_setup_plan",
        "planning_update_step",
        "write_file",
        "read_file",
    ]
