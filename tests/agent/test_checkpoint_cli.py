"""``haversack run --checkpoint`` killed (SIGKILL) at turn boundaries and at random moments,
then ``--resume``d in a new process: the result equals an uninterrupted run's."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading

import pytest

from haversack.agent import load_checkpoint
from haversack.testing import FakeCall, FakeProvider, FakeReply

SCRIPT = [
    FakeReply("plan", calls=[FakeCall("planning_setup_plan", {"objective": "o", "steps": ["a"]})]),
    FakeReply("write", calls=[FakeCall("write_file", {"path": "n.md", "content": "one\n"}, "w")]),
    FakeReply("read", calls=[FakeCall("read_file", {"path": "n.md"}, "r")]),
    FakeReply(
        "edit",
        calls=[
            FakeCall("edit_file", {"path": "n.md", "old_string": "one", "new_string": "two"}, "e"),
            FakeCall("planning_update_step", {"step_id": 1, "status": "done"}, "u"),
        ],
    ),
    FakeReply("All done."),
]


def _env():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HAVERSACK_PACKS": "", "COLUMNS": "200", "OPENAI_API_KEY": "sk-test"})
    return env


def _command(tmp_path, fake, name, *extra):
    return [
        sys.executable,
        "-m",
        "haversack",
        "run",
        *extra,
        "-p",
        "planning",
        "-p",
        "vfs",
        "-m",
        "openai:m",
        "--base-url",
        fake.openai_base_url,
        "--transcript",
        str(tmp_path / f"{name}.jsonl"),
    ]


def _run(tmp_path, fake, name, *extra):
    return subprocess.run(
        _command(tmp_path, fake, name, *extra),
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=300,
        check=False,
    )


def _records(path):
    # Durations differ from run to run; everything else must be equal.
    return [
        {k: v for k, v in json.loads(line).items() if k != "duration_s"}
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _state(directory):
    saved = load_checkpoint(directory)
    return saved.stop_reason, saved.slices, saved.policy_records, saved.workspace, saved.messages


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("whole")
    with FakeProvider(SCRIPT) as fake:
        done = _run(tmp_path, fake, "whole", "go", "--checkpoint", str(tmp_path / "ck"))
    assert done.returncode == 0, done.stderr
    return _records(tmp_path / "whole.jsonl"), _state(tmp_path / "ck"), done.stdout


def _resume_and_compare(tmp_path, checkpoint, uninterrupted):
    records, state, stdout = uninterrupted
    done_turns = len(load_checkpoint(checkpoint).turns) if checkpoint.exists() else 0
    with FakeProvider(SCRIPT[done_turns:]) as fake:
        if done_turns:
            resumed = _run(tmp_path, fake, "resumed", "--resume", str(checkpoint))
        else:  # killed before the first turn ended: nothing to resume, start again
            resumed = _run(tmp_path, fake, "resumed", "go", "--checkpoint", str(checkpoint))
        assert fake.remaining == 0
    assert resumed.returncode == 0, resumed.stderr
    assert _records(tmp_path / "resumed.jsonl") == records
    assert _state(checkpoint) == state
    assert stdout.splitlines()[-2] == resumed.stdout.splitlines()[-2]  # the summary line
    assert "[completed: 5 turn(s), 5 tool call(s)" in resumed.stdout


@pytest.mark.parametrize("boundary", [1, 2, 3, 4])
def test_killed_at_a_turn_boundary_then_resumed(tmp_path, uninterrupted, boundary):
    checkpoint = tmp_path / "ck"
    process: list[subprocess.Popen[str]] = []

    def kill(request):
        # The run has finished `boundary` turns (and checkpointed them) and waits for the
        # model: it dies here, mid-request.
        process[0].send_signal(signal.SIGKILL)
        process[0].wait()
        return FakeReply("never seen")

    with FakeProvider([*SCRIPT[:boundary], kill]) as fake:
        popen = subprocess.Popen(
            _command(tmp_path, fake, "killed", "go", "--checkpoint", str(checkpoint)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(),
            cwd=tmp_path,
        )
        process.append(popen)
        assert popen.wait(timeout=300) == -signal.SIGKILL
    assert len(load_checkpoint(checkpoint).turns) == boundary
    _resume_and_compare(tmp_path, checkpoint, uninterrupted)


@pytest.mark.parametrize("seed", [1, 2])
def test_killed_at_a_random_moment_then_resumed(tmp_path, uninterrupted, seed):
    checkpoint = tmp_path / "ck"
    requests = threading.Semaphore(0)

    def counted(reply):
        def step(request):
            requests.release()
            return reply

        return step

    # Killed after a random number of model requests plus a random extra delay, so the
    # kill lands anywhere: in a tool call, in the middle of writing the checkpoint...
    rng = random.Random(seed)
    after, delay = rng.randint(1, len(SCRIPT) - 1), rng.uniform(0, 0.05)
    with FakeProvider([counted(reply) for reply in SCRIPT]) as fake:
        popen = subprocess.Popen(
            _command(tmp_path, fake, "killed", "go", "--checkpoint", str(checkpoint)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(),
            cwd=tmp_path,
        )
        for _ in range(after):
            assert requests.acquire(timeout=300)
        threading.Event().wait(delay)
        popen.send_signal(signal.SIGKILL)
        popen.wait(timeout=300)
    if checkpoint.exists():
        # Never a temporary file beside the checkpoint that a resume could mistake for it.
        assert load_checkpoint(checkpoint).task == "go"
    _resume_and_compare(tmp_path, checkpoint, uninterrupted)


def test_resume_refuses_a_bad_checkpoint_with_exit_2(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "checkpoint.json").write_text(
        '{"format": "haversack-checkpoint", "version": 99, "bytes": 0, "sha256": ""}\n'
    )
    with FakeProvider([]) as fake:
        done = _run(tmp_path, fake, "bad", "--resume", str(tmp_path / "ck"))
        assert fake.requests == []
    assert done.returncode == 2
    assert "format version 99; this haversack reads version 1 only" in done.stderr
    assert "hint: see docs/agents.md (checkpoint and resume)" in done.stderr
    with FakeProvider([]) as fake:
        both = _run(tmp_path, fake, "bad", "go", "--resume", str(tmp_path / "ck"))
    assert both.returncode == 2
    assert "give a TASK to start a run, or --resume DIR to continue one" in both.stderr


ASKED = [
    FakeReply("plan", calls=[FakeCall("planning_setup_plan", {"objective": "o", "steps": ["a"]})]),
    FakeReply(
        "write",
        calls=[
            FakeCall("planning_update_step", {"step_id": 1, "status": "done"}, "u"),
            FakeCall("write_file", {"path": "n.md", "content": "one\n"}, "w"),
        ],
    ),
    FakeReply("All done."),
]


def test_killed_at_the_approval_prompt_then_resumed_asks_the_same_question(tmp_path):
    import pty

    ask = ("--ask", "write_file")
    with FakeProvider(ASKED) as fake:
        whole = _run(tmp_path, fake, "whole", "go", *ask, "--yes")
    assert whole.returncode == 0, whole.stderr

    checkpoint = tmp_path / "ck"
    leader, follower = pty.openpty()  # a terminal, so the run waits for an answer
    try:
        with FakeProvider(ASKED[:2]) as fake:
            popen = subprocess.Popen(
                _command(tmp_path, fake, "killed", "go", *ask, "--checkpoint", str(checkpoint)),
                stdin=follower,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_env(),
                cwd=tmp_path,
                text=True,
            )
            seen = ""
            while "run it?" not in seen:
                chunk = popen.stdout.read(1)
                assert chunk, f"the run ended without asking: {seen!r}"
                seen += chunk
            popen.send_signal(signal.SIGKILL)
            assert popen.wait(timeout=300) == -signal.SIGKILL
            popen.stdout.close()
    finally:
        os.close(leader)
        os.close(follower)
    saved = load_checkpoint(checkpoint)
    assert [p.tool_name for p in saved.pending] == ["write_file"]
    assert not (tmp_path / "n.md").exists()

    with FakeProvider(ASKED[2:]) as fake:
        resumed = _run(tmp_path, fake, "resumed", "--resume", str(checkpoint), *ask, "--yes")
        assert fake.remaining == 0
    assert resumed.returncode == 0, resumed.stderr
    assert "[write_file was waiting for approval: asked again]" in resumed.stdout
    assert _records(tmp_path / "resumed.jsonl") == _records(tmp_path / "whole.jsonl")
    assert load_checkpoint(checkpoint).pending == ()
