"""Checkpoints as untrusted input, and checkpoints written while the process is killed.

A damaged checkpoint (cut at random points, random bytes flipped, random fields given
random JSON values with a valid header, random header versions) must be refused with a
``CheckpointError`` (never another exception) and leave the resuming session untouched; a
process killed (SIGKILL) at random moments while it writes checkpoints must leave one that
loads and equals one of the versions it wrote.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from haversack import CheckpointError, Session
from haversack._packs import compose
from haversack.agent import Agent, load_checkpoint
from haversack.agent._checkpoint import CHECKPOINT_FILE
from haversack.testing import FakeCall, FakeProvider, FakeReply

from ._harness import budget

AREA = "checkpoints"

SCRIPT = [
    FakeReply("plan", calls=[FakeCall("planning_setup_plan", {"objective": "o", "steps": ["a"]})]),
    FakeReply("write", calls=[FakeCall("write_file", {"path": "n.md", "content": "one\n"})]),
    FakeReply("read", calls=[FakeCall("read_file", {"path": "n.md"})]),
    FakeReply("All done."),
]

# Values a hostile checkpoint may put anywhere in the body.
VALUES = [None, True, 0, -1, 2**70, 1.5, "", "x" * 1000, [], {}, [[[]]], {"a": {"b": []}}]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A completed run's checkpoint (a resume of it asks the model nothing) and its agent."""
    directory = tmp_path_factory.mktemp("finished")
    prompt = compose(ns="haversack", key="cli", packs=["planning", "vfs"])
    with FakeProvider(SCRIPT) as fake:
        agent = Agent(prompt, "openai:m", base_url=fake.openai_base_url, api_key="sk-test")
        agent.run("go", checkpoint=directory)
    return (directory / CHECKPOINT_FILE).read_bytes(), agent


def _signed(header: dict, body: bytes) -> bytes:
    header = {**header, "bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    return json.dumps(header).encode() + b"\n" + body


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _mutants(raw: bytes, rng: random.Random, count: int):
    head, _, body = raw.partition(b"\n")
    header = json.loads(head)
    data = json.loads(body)
    paths = [p for p in _paths(data) if p]
    for index in range(count):
        kind = index % 4
        if kind == 0:
            yield "cut", raw[: rng.randrange(len(raw))]
        elif kind == 1:
            flipped = bytearray(raw)
            for _ in range(rng.randint(1, 8)):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            yield "flip", bytes(flipped)
        elif kind == 2:
            mutated = json.loads(body)
            path = rng.choice(paths)
            target = mutated
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = rng.choice(VALUES)
            yield f"field {'.'.join(map(str, path))}", _signed(header, json.dumps(mutated).encode())
        else:
            version = rng.choice([0, 2, -1, 10**30, "1", 1.0, None, [1]])
            yield f"version {version!r}", _signed({**header, "version": version}, body)


def test_hostile_checkpoints_are_refused_or_resumed_whole(tmp_path, finished, figure):
    fig = figure(AREA, "hostile checkpoint files")
    raw, agent = finished
    rng = random.Random(29)
    target = tmp_path / CHECKPOINT_FILE
    for label, data in _mutants(raw, rng, budget(120, 2000)):
        fig.case()
        target.write_bytes(data)
        try:
            saved = load_checkpoint(tmp_path)
        except CheckpointError as exc:
            fig.check(bool(str(exc).strip()), f"{label}: refused without a message")
            continue
        except Exception as exc:
            fig.problem(f"{label}: load raised {type(exc).__name__}: {exc}")
            continue
        if label.startswith(("cut", "flip", "version")):
            fig.problem(f"{label}: a damaged or foreign checkpoint was loaded")
            continue
        if saved.stop_reason is None:
            continue  # a valid checkpoint of a run still going: resuming would ask the model
        session = Session()
        try:
            agent.run("", session=session, resume=saved)
        except CheckpointError:
            fig.check(session.slice_types == (), f"{label}: refused, yet the session changed")
        except Exception as exc:  # a value the checks let through that the resume tripped on
            fig.problem(f"{label}: resume raised {type(exc).__name__}: {exc}")
    fig.assert_clean()


WRITER = textwrap.dedent(
    """
    import dataclasses, sys
    from haversack.agent import load_checkpoint, save_checkpoint
    directory = sys.argv[1]
    base = load_checkpoint(directory)
    version = 0
    while True:
        version += 1
        # About 1 MB a version, so the kill often lands inside a write.
        extra = {"version": version, "padding": str(version) * (1_000_000 // len(str(version)))}
        save_checkpoint(directory, dataclasses.replace(base, extra=extra))
        print(version, flush=True)
    """
)


def test_a_writer_killed_at_random_leaves_a_whole_checkpoint(tmp_path, finished, figure):
    fig = figure(AREA, "checkpoint writer killed at random moments")
    raw, _ = finished
    rng = random.Random(2929)
    (tmp_path / CHECKPOINT_FILE).write_bytes(raw)
    for _ in range(budget(4, 40)):
        fig.case()
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert writer.stdout is not None
        # Kill once a random number of versions were written, after a random extra delay.
        wanted, written = rng.randint(1, 6), 0
        for line in writer.stdout:
            written = int(line)
            if written >= wanted:
                break
        threading.Event().wait(rng.uniform(0, 0.02))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        try:
            saved = load_checkpoint(tmp_path)
        except CheckpointError as exc:
            fig.problem(f"killed after version {written}: the checkpoint is broken: {exc}")
            continue
        version = saved.extra.get("version")
        fig.check(
            isinstance(version, int) and version >= written,
            f"killed after version {written}: loaded version {version!r}",
        )
        leftovers = [p.name for p in tmp_path.iterdir() if p.name != CHECKPOINT_FILE]
        fig.note("temporary files left by kills", len(leftovers))
    fig.assert_clean()
