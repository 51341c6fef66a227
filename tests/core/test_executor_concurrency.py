"""Two sessions, two executors, one rendered prompt, parallel threads: nothing is shared."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from haversack import (
    Binding,
    Filesystem,
    MarkdownSection,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack._policy_state import policy_values
from haversack_vfs import InMemoryFilesystem


@dataclass(frozen=True)
class Mark:
    owner: str
    step: int


@dataclass(frozen=True)
class Step:
    owner: str
    step: int


@dataclass(frozen=True)
class PathArgs:
    path: str


def _step(params: Step, *, context: ToolContext) -> ToolResult[None]:
    context.session[Mark].append(Mark(params.owner, params.step))
    return ToolResult.ok(None)


def _read(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None)


def test_parallel_sessions_never_see_each_others_state() -> None:
    prompt = Prompt(
        ns="t",
        key="par",
        policies=[SequentialDependencyPolicy({"deploy": {"build"}}), ReadBeforeWritePolicy()],
        sections=[
            MarkdownSection(
                title="S",
                key="s",
                template="s",
                tools=[
                    Tool[Step, None](name="build", description="b", handler=_step),
                    Tool[Step, None](name="deploy", description="d", handler=_step),
                    Tool[PathArgs, None](name="read_file", description="r", handler=_read),
                ],
            )
        ],
    )
    rendered = prompt.render()  # one rendered prompt shared by both threads
    rounds = 200
    barrier = threading.Barrier(2)
    outcome: dict[str, tuple[Session, list[bool], list[BaseException]]] = {}

    def worker(owner: str, builds: bool) -> None:
        session = Session(session_id=owner)
        denials: list[bool] = []
        errors: list[BaseException] = []
        outcome[owner] = (session, denials, errors)
        registry = ResourceRegistry.of(Binding.instance(Filesystem, InMemoryFilesystem()))
        try:
            with ToolExecutor(rendered, session=session, resources=registry) as executor:
                barrier.wait()
                for i in range(rounds):
                    if builds:
                        executor.execute("build", {"owner": owner, "step": i})
                    executor.execute("read_file", {"path": f"{owner}/{i}.txt"})
                    result = executor.execute("deploy", {"owner": owner, "step": i})
                    denials.append(not result.success)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=("builder", True)),
        threading.Thread(target=worker, args=("idle", False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    builder, builder_denials, builder_errors = outcome["builder"]
    idle, idle_denials, idle_errors = outcome["idle"]
    assert builder_errors == []
    assert idle_errors == []
    # The builder's successful builds never unlock the idle session's deploy.
    assert not any(builder_denials)
    assert all(idle_denials)
    assert {m.owner for m in builder[Mark].all()} == {"builder"}
    assert len(builder[Mark].all()) == 2 * rounds
    assert idle[Mark].all() == ()
    assert set(policy_values(builder, "sequential-dependency")) == {"build"}
    assert len(policy_values(idle, "sequential-dependency")) == 0
    assert {p.split("/")[0] for p in policy_values(builder, "read-before-write")} == {"builder"}
    assert {p.split("/")[0] for p in policy_values(idle, "read-before-write")} == {"idle"}
    assert len(policy_values(idle, "read-before-write")) == rounds
