"""``haversack run``: the loop from the command line, in a subprocess, against the fake
provider (the planning pack's tools, so nothing touches the disk but the transcript)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from haversack.testing import FakeCall, FakeProvider, FakeReply

SETUP = FakeCall("planning_setup_plan", {"objective": "ship it", "steps": ["build"]}, "c1")
READ = FakeCall("planning_read_plan", {}, "c2")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HAVERSACK_PACKS": "", "COLUMNS": "200"}, **extra)
    return env


def haversack(args, *, env, cwd, stdin=subprocess.DEVNULL):
    return subprocess.run(
        [sys.executable, "-m", "haversack", "run", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("kind", ["openai", "openai-responses", "anthropic"])
def test_a_run_end_to_end(tmp_path, kind):
    transcript = tmp_path / "run.jsonl"
    script = [FakeReply("Planning now.", calls=[SETUP, READ]), FakeReply("The plan is ready.")]
    with FakeProvider(script) as fake:
        url = fake.anthropic_base_url if kind == "anthropic" else fake.openai_base_url
        done = haversack(
            [
                "Plan the release",
                "-p",
                "planning",
                "--model",
                f"{kind}:test-model",
                "--base-url",
                url,
                "--transcript",
                str(transcript),
            ],
            env=_env(OPENAI_API_KEY="sk-test", ANTHROPIC_API_KEY="sk-ant-test"),
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Planning now." in out
    assert '→ planning_setup_plan {"objective": "ship it", "steps": ["build"]}' in out
    assert "→ planning_read_plan {}" in out
    assert "The plan is ready." in out
    assert "[completed: 2 turn(s), 2 tool call(s), 20 input + 10 output tokens]" in out
    # The model was sent the composed prompt, the pack's tools and the results.
    first, second = fake.requests
    assert first.body["model"] == "test-model"
    assert "planning_setup_plan" in first.tool_names
    assert first.body.get("stream") is True
    assert "ship it" in second.tool_results["c2"]
    records = _records(transcript)
    assert [r["type"] for r in records] == ["turn", "tool", "tool", "turn", "end"]
    assert records[1]["tool"] == "planning_setup_plan"
    assert records[1]["success"] is True
    assert records[-1] == {
        "type": "end",
        "stop_reason": "completed",
        "output": "The plan is ready.",
        "turns": 2,
        "tool_calls": 2,
        "input_tokens": 20,
        "output_tokens": 10,
    }


def _ask_on_a_terminal(tmp_path, answer: bytes):
    transcript = tmp_path / "run.jsonl"
    master, slave = pty.openpty()
    try:
        os.write(master, answer)
        with FakeProvider([FakeReply(calls=[SETUP]), FakeReply("done")]) as fake:
            done = haversack(
                [
                    "go",
                    "-p",
                    "planning",
                    "-m",
                    "openai:m",
                    "--base-url",
                    fake.openai_base_url,
                    "--ask",
                    "planning_setup_*",
                    "--transcript",
                    str(transcript),
                ],
                env=_env(OPENAI_API_KEY="sk-test"),
                cwd=tmp_path,
                stdin=slave,
            )
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert (
        "? planning_setup_plan needs approval: 'planning_setup_plan' matches 'planning_setup_*'\n"
        "  arguments (44 characters, shown whole):\n"
        '{"objective": "ship it", "steps": ["build"]}\n'
    ) in done.stdout
    assert "run it? [y]es / [n]o / [e]dit arguments:" in done.stdout
    return fake.requests[1].tool_results["c1"], _records(transcript)


def test_yes_on_a_terminal_runs_the_call(tmp_path):
    sent, records = _ask_on_a_terminal(tmp_path, b"y\n")
    assert "ship it" in sent
    assert {"type": "decision", "verdict": "approve"} in records


def test_no_on_a_terminal_refuses_it(tmp_path):
    sent, records = _ask_on_a_terminal(tmp_path, b"n\n")
    assert sent == (
        "The call of 'planning_setup_plan' was not approved: The user refused this call; "
        "do not retry it."
    )
    assert {"type": "decision", "verdict": "deny"} in records


def test_edit_on_a_terminal_runs_the_new_arguments(tmp_path):
    sent, _ = _ask_on_a_terminal(tmp_path, b'e\n{"objective": "edited goal"}\n')
    assert "edited goal" in sent
    assert "ship it" not in sent


def test_without_a_terminal_asked_calls_are_refused_unless_yes(tmp_path):
    args = ["go", "-p", "planning", "-m", "openai:m", "--ask-writes", "--transcript", "-"]
    for extra, expected in (([], "not approved: No one is available"), (["--yes"], "ship it")):
        with FakeProvider([FakeReply(calls=[SETUP]), FakeReply("done")]) as fake:
            done = haversack(
                [*args, *extra, "--base-url", fake.openai_base_url],
                env=_env(OPENAI_API_KEY="sk-test"),
                cwd=tmp_path,
            )
        assert done.returncode == 0, done.stderr
        assert expected in fake.requests[1].tool_results["c1"]
    assert list(tmp_path.iterdir()) == []  # --transcript - writes none


def test_the_turn_cap_exits_1(tmp_path):
    with FakeProvider([FakeReply(calls=[READ])] * 3) as fake:
        done = haversack(
            [
                "go",
                "-p",
                "planning",
                "-m",
                "openai:m",
                "--base-url",
                fake.openai_base_url,
                "--max-turns",
                "2",
                "--transcript",
                str(tmp_path / "t.jsonl"),
            ],
            env=_env(OPENAI_API_KEY="sk-test"),
            cwd=tmp_path,
        )
    assert done.returncode == 1
    assert "[max_turns: 2 turn(s)" in done.stdout
    assert fake.remaining == 1


def test_a_missing_key_is_a_precise_error(tmp_path):
    done = haversack(["go", "-p", "planning", "-m", "anthropic:claude-x"], env=_env(), cwd=tmp_path)
    assert done.returncode == 3  # the provider cannot be used (docs/agents.md, exit statuses)
    assert done.stderr.splitlines() == [
        "haversack: error: No API key for the anthropic provider: set the environment "
        "variable ANTHROPIC_API_KEY or pass api_key=... (--api-key on the command line).",
        "hint: see docs/agents.md (models, API keys, base URLs).",
    ]


def test_a_failed_request_still_writes_the_transcript(tmp_path):
    transcript = tmp_path / "run.jsonl"
    with FakeProvider([FakeReply("Reading.", calls=[READ])]) as fake:  # no second reply
        done = haversack(
            [
                "go",
                "-p",
                "planning",
                "-m",
                "openai:m",
                "--base-url",
                fake.openai_base_url,
                "--transcript",
                str(transcript),
            ],
            env=_env(OPENAI_API_KEY="sk-test"),
            cwd=tmp_path,
        )
    assert done.returncode == 3
    assert "script is exhausted" in done.stderr
    records = _records(transcript)
    assert [r["type"] for r in records] == ["turn", "tool", "end"]
    assert records[-1]["stop_reason"] == "error"
    assert records[-1]["error"].startswith("ProviderError: The OpenAI chat completions request")


def test_max_turns_must_be_positive(tmp_path):
    done = haversack(["go", "-m", "openai:m", "--max-turns", "0"], env=_env(), cwd=tmp_path)
    assert done.returncode == 2
    assert "--max-turns: must be a whole number of at least 1, got '0'" in done.stderr
