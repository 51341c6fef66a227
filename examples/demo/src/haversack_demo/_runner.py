"""Play a scenario through the ``ToolExecutor`` and record what every call did."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._availability import Availability
from ._model import Act, Scenario, Step
from ._podman import first_line, podman_problem
from ._transcript import PackLine, SandboxStatus, StepRecord, Summary, Transcript

if TYPE_CHECKING:
    from haversack import PackReport, RenderedPrompt, ToolExecutor

__all__ = ["DemoOptions", "run_scenario"]

NS, KEY = "haversack", "demo"
_SANDBOX_PACK = "podman"
_SANDBOX_TOOL = "shell_execute"


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """Pack selection (as the common CLI options give it) and whether to use the sandbox."""

    packs: Sequence[str] | None = None
    exclude: Sequence[str] = ()
    config_file: str | None = None
    strict: bool | None = None
    sandbox: bool = True


@dataclass(slots=True)
class _Setup:
    """The composed prompt, its executor and what decided them."""

    rendered: RenderedPrompt
    executor: ToolExecutor
    report: PackReport
    sandbox: SandboxStatus


def run_scenario(
    scenario: Scenario,
    options: DemoOptions,
    *,
    on_ready: Callable[[Transcript], None] | None = None,
    on_step: Callable[[StepRecord], None] | None = None,
) -> Transcript:
    """Compose the installed packs, play every step and summarise; resources are closed after.

    ``on_ready`` sees the transcript once packs and prompt are known; ``on_step`` sees each
    step as soon as it has run (or been skipped), so a printer can stream.
    """
    start = time.perf_counter()
    transcript = Transcript(title=scenario.title)
    setup = _set_up(options)
    with setup.executor as executor:
        transcript.packs = _pack_lines(setup.report, options)
        transcript.prompt_text = setup.rendered.text
        transcript.tools = tuple((t.name, _signature(t)) for t in setup.rendered.tools)
        transcript.sandbox = setup.sandbox
        if on_ready is not None:
            on_ready(transcript)
        availability = Availability(
            tools={t.name for t in setup.rendered.tools},
            packs={p.name: p for p in transcript.packs},
            providers=scenario.providers,
            sandbox=setup.sandbox,
        )
        _seed(executor, scenario)
        aborted: str | None = None
        for index, (act, step) in enumerate(scenario.steps(), start=1):
            if aborted is not None:
                record = _skipped(index, act, step, f"not run: {aborted}")
            else:
                reason = availability.skip_reason(act, step)
                if reason is None:
                    record = _play(executor, index, act, step)
                    if record.outcome == "aborted":
                        aborted = f"step {index} aborted the evaluation"
                else:
                    record = _skipped(index, act, step, reason)
            transcript.steps.append(record)
            if on_step is not None:
                on_step(record)
    transcript.summary = Summary.of(tuple(transcript.steps), time.perf_counter() - start)
    return transcript


# ---------------------------------------------------------------------------------- set-up
def _set_up(options: DemoOptions) -> _Setup:
    """Decide on the sandbox, compose, render and open the executor's resources."""
    from haversack import discover

    exclude = tuple(options.exclude)
    if not options.sandbox:
        exclude += (_SANDBOX_PACK,)
    report = discover(
        load=True, packs=options.packs, exclude=exclude, config_file=options.config_file
    )
    sandbox = _sandbox_status(options, report)
    if not sandbox.enabled and _loaded(report, _SANDBOX_PACK):
        # Leave the pack out so that opening the resources does not try to start a container.
        exclude += (_SANDBOX_PACK,)
    try:
        return _open(options, exclude, report, sandbox)
    except Exception as exc:
        if not sandbox.enabled:
            raise
        # The sandbox container could not start: run the rest without it, and say why.
        reason = f"podman not usable: {first_line(str(exc)) or type(exc).__name__}"
        return _open(options, (*exclude, _SANDBOX_PACK), report, SandboxStatus(False, reason))


def _open(
    options: DemoOptions, exclude: tuple[str, ...], report: PackReport, sandbox: SandboxStatus
) -> _Setup:
    from haversack import Session, ToolExecutor, compose

    prompt = compose(
        ns=NS,
        key=KEY,
        packs=options.packs,
        exclude=exclude,
        strict=options.strict,
        config_file=options.config_file,
    )
    rendered = prompt.render()
    executor = ToolExecutor(rendered, session=Session())
    return _Setup(rendered, executor, report, sandbox)


def _sandbox_status(options: DemoOptions, report: PackReport) -> SandboxStatus:
    if not options.sandbox:
        return SandboxStatus(False, "--no-sandbox given")
    info = next((p for p in report.packs if p.name == _SANDBOX_PACK), None)
    if info is None:
        return SandboxStatus(
            False, "the podman pack (haversack-podman) is not installed; install it to run this"
        )
    if info.status != "loaded":
        detail = f": {info.reason}" if info.reason else ""
        return SandboxStatus(False, f"the podman pack is {info.status}{detail}")
    if _SANDBOX_TOOL not in info.tools:
        return SandboxStatus(
            False, f"the podman pack ({info.version}) does not provide {_SANDBOX_TOOL} yet"
        )
    problem = podman_problem()
    if problem is not None:
        return SandboxStatus(False, f"podman not usable: {problem}")
    return SandboxStatus(True)


def _loaded(report: PackReport, name: str) -> bool:
    return any(p.name == name and p.status == "loaded" for p in report.packs)


def _pack_lines(report: PackReport, options: DemoOptions) -> tuple[PackLine, ...]:
    lines = []
    for p in report.visible():
        reason = p.reason
        if p.name == _SANDBOX_PACK and p.status == "disabled" and not options.sandbox:
            reason = "left out by --no-sandbox"
        lines.append(PackLine(p.name, p.distribution, p.version, p.status, reason, p.tools))
    return tuple(lines)


def _signature(tool: Any) -> str:
    from haversack import serde

    schema = serde.schema(tool.params_type)
    required = set(schema.get("required", ()))
    names = [n if n in required else f"{n}?" for n in schema.get("properties", {})]
    return f"{tool.name}({', '.join(names)})"


def _seed(executor: ToolExecutor, scenario: Scenario) -> None:
    """Put the seed files in the workspace, as a checked-out project would be."""
    from haversack.filesystem import Filesystem

    filesystem = executor.resources.get_optional(Filesystem)  # type: ignore[type-abstract]
    if filesystem is None:
        return
    for seed in scenario.seeds:
        filesystem.write(seed.path, seed.content, mode="overwrite")


# ---------------------------------------------------------------------------------- steps
def _skipped(index: int, act: Act, step: Step, reason: str) -> StepRecord:
    return StepRecord(
        index, act.title, step.tool, step.arguments, step.note, step.expect, skipped=reason
    )


def _play(executor: ToolExecutor, index: int, act: Act, step: Step) -> StepRecord:
    """Run one call through the executor; its ``ToolInvoked`` event gives outcome and time."""
    from haversack import ToolInvoked
    from haversack.errors import PromptEvaluationError

    events: list[ToolInvoked] = []
    unsubscribe = executor.session.subscribe(ToolInvoked, events.append)
    try:
        executor.execute(step.tool, dict(step.arguments), call_id=f"demo-{index}")
    except PromptEvaluationError:
        pass  # the ABORTED event says what happened
    finally:
        unsubscribe()
    event = events[-1]
    outcome = str(event.outcome)
    return StepRecord(
        index,
        act.title,
        step.tool,
        step.arguments,
        step.note,
        step.expect,
        outcome=outcome,
        result=event.rendered,
        duration_s=event.duration_s,
        problems=_problems(step, outcome, event.rendered),
    )


def _problems(step: Step, outcome: str, text: str) -> tuple[str, ...]:
    problems: list[str] = []
    if outcome not in step.expect:
        problems.append(f"outcome {outcome}, expected {' or '.join(step.expect)}")
    problems += [f"result lacks {s!r}" for s in step.contains if s not in text]
    problems += [f"result contains {s!r}" for s in step.absent if s in text]
    return tuple(problems)
