"""``haversack run TASK --model provider:name``: the agent loop from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from haversack._interaction import Interaction
from haversack.cli._common import (
    KEY,
    NS,
    add_ask,
    add_defer,
    approval_policies,
    selection_kwargs,
)
from haversack.cli._terminal import printable

if TYPE_CHECKING:
    from haversack._approval import Approval, PendingApproval
    from haversack._interaction import Answer, Progress, Question
    from haversack._prompt import RenderedPrompt
    from haversack.agent import AgentEvent

HELP = "run a task with a model and the composed tools until the model is done"

#: Exit statuses of ``haversack run`` (2, a usage or composition error, comes from the CLI).
EXIT_COMPLETED = 0
EXIT_STOPPED = 1  # the turn cap or the model's output limit stopped the run
EXIT_PROVIDER = 3  # the provider failed: unreachable, refused, an unreadable reply, no key
EXIT_TIMEOUT = 4  # --timeout passed
#: Seconds ``--timeout`` gives a run by default.
DEFAULT_TIMEOUT_S = 600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The task, the model, approval and transcript options."""
    add_defer(parser)
    parser.add_argument(
        "task", metavar="TASK", nargs="?", help="what the model should do (not with --resume)"
    )
    parser.add_argument(
        "-m",
        "--model",
        required=True,
        metavar="PROVIDER:NAME",
        help="openai:NAME, openai-responses:NAME or anthropic:NAME (keys from OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="API endpoint (an OpenAI-compatible server: llama.cpp, vLLM, Ollama...; an "
        "Anthropic-compatible proxy); with one, an API key is optional",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help="the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY from the environment)",
    )
    parser.add_argument(
        "--tool-choice",
        metavar="CHOICE",
        help="auto, required, none or a tool's name: whether the model must call a tool "
        "(required and a name hold until it has called one, then auto)",
    )
    parser.add_argument(
        "--max-turns",
        type=_at_least_one,
        default=20,
        metavar="N",
        help="most model turns (default 20)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the run after this long, model requests and tool calls included "
        f"(default {DEFAULT_TIMEOUT_S:g}; 0 for no limit); exit status {EXIT_TIMEOUT}",
    )
    add_ask(parser)
    parser.add_argument(
        "--yes", action="store_true", help="approve every call that asks, without prompting"
    )
    parser.add_argument(
        "--no-stream", action="store_true", help="print each model turn whole, not as it comes"
    )
    parser.add_argument(
        "--transcript",
        metavar="FILE",
        default="haversack-run.jsonl",
        help="where to write the run as JSON lines (default haversack-run.jsonl; '-' for none)",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="write a checkpoint of the run to DIR after every turn (see --resume)",
    )
    parser.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run checkpointed in DIR (and keep checkpointing there unless "
        "--checkpoint names another directory); give the same packs, options and provider",
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the model finished, 1 when the turn cap or its token limit stopped it,
    3 when the provider failed, 4 when ``--timeout`` passed."""
    from haversack._deadline import Deadline
    from haversack._packs import compose
    from haversack.agent import Agent, StopReason, load_checkpoint
    from haversack.errors import DeadlineExceededError, HaversackError, ProviderError

    if (args.task is None) == (args.resume is None):
        raise HaversackError(
            "give a TASK to start a run, or --resume DIR to continue one (not both)"
        )
    # Read and validated whole before anything else happens: a bad checkpoint changes nothing.
    resume = load_checkpoint(args.resume) if args.resume is not None else None
    policies = approval_policies(args)
    rendered = compose(
        ns=NS,
        key=KEY,
        strict=args.strict,
        policies=policies,
        deferred=tuple(args.defer),
        **selection_kwargs(args),
    ).render()
    out = _Output(sys.stdout)
    options: dict[str, Any] = {"base_url": args.base_url, "stream": not args.no_stream}
    if args.api_key:
        options["api_key"] = args.api_key
    if args.tool_choice is not None:
        options["tool_choice"] = _tool_choice(args.tool_choice, rendered)
    agent = Agent(
        rendered,
        args.model,
        max_turns=args.max_turns,
        approve=_Approver(args.yes, out),
        on_event=out.event,
        interaction=_Terminal(out),
        **options,
    )
    if resume is not None:
        out.records = _transcript(resume.extra)
        out.print(f"[resumed from {args.resume}: {len(resume.turns)} turn(s) done]")
        for held in resume.pending:
            out.print(f"[{printable(held.tool_name)} was waiting for approval: asked again]")
    checkpoint = args.checkpoint if args.checkpoint is not None else args.resume
    deadline = Deadline.after(args.timeout) if args.timeout else None
    try:
        result = agent.run(
            args.task or "",
            deadline=deadline,
            resume=resume,
            checkpoint=checkpoint,
            checkpoint_extra=lambda: {"transcript": list(out.records)},
        )
    except (ProviderError, DeadlineExceededError) as exc:
        error = {"type": "end", "stop_reason": "error", "error": f"{type(exc).__name__}: {exc}"}
        _write(args.transcript, [*out.records, error], out)
        timed_out = isinstance(exc, DeadlineExceededError)
        print(f"haversack: error: {printable(str(exc))}", file=sys.stderr)
        hint = (
            "raise --timeout (0 for no limit), or check that the provider answers."
            if timed_out
            else "see docs/agents.md (models, API keys, base URLs)."
        )
        print(f"hint: {hint}", file=sys.stderr)
        return EXIT_TIMEOUT if timed_out else EXIT_PROVIDER
    except BaseException as exc:
        # What happened up to a failure (or Ctrl-C) is worth keeping too.
        error = {"type": "end", "stop_reason": "error", "error": f"{type(exc).__name__}: {exc}"}
        _write(args.transcript, [*out.records, error], out)
        raise
    out.end_text()
    out.print(
        f"[{result.stop_reason}: {len(result.turns)} turn(s), {len(result.calls)} tool call(s), "
        f"{result.usage.input_tokens} input + {result.usage.output_tokens} output tokens]"
    )
    _write(args.transcript, [*out.records, _end(result)], out)
    return EXIT_COMPLETED if result.stop_reason is StopReason.COMPLETED else EXIT_STOPPED


def _tool_choice(choice: str, rendered: RenderedPrompt) -> str:
    """``--tool-choice``, checked against the composed tools (a usage error, exit 2)."""
    from haversack.agent._clients import TOOL_CHOICES
    from haversack.errors import HaversackError

    if choice in TOOL_CHOICES:
        return choice
    names = sorted(tool.name for tool in rendered.tools)
    if choice not in names:
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "") or "(none)"
        raise HaversackError(
            f"--tool-choice {choice!r} is neither {', '.join(TOOL_CHOICES)} nor one of the "
            f"composed tools: {shown}"
        )
    return choice


def _transcript(extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The transcript records a checkpoint kept (only JSON objects; anything else is dropped)."""
    records = extra.get("transcript")
    if not isinstance(records, list):
        return []
    return [record for record in records if isinstance(record, dict)]


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds (0 or more), got {text!r}")
    return value


def _write(path: str, records: list[dict[str, Any]], out: _Output) -> None:
    if path == "-":
        return
    with open(path, "w", encoding="utf-8") as file:
        for record in records:
            file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    out.print(f"[transcript: {path}]")


class _Output:
    """Live output of a run, and the transcript records collected on the way."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.records: list[dict[str, Any]] = []
        self._in_text = False

    def print(self, line: str) -> None:
        self.end_text()
        print(line, file=self.stream, flush=True)

    def end_text(self) -> None:
        if self._in_text:
            print(file=self.stream, flush=True)
            self._in_text = False

    def event(self, event: AgentEvent) -> None:
        from haversack.agent import (
            ApprovalRequested,
            ModelTurn,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
        )

        if isinstance(event, TextDelta):
            self.stream.write(printable(event.text))
            self.stream.flush()
            self._in_text = True
        elif isinstance(event, ToolCallStarted):
            name = printable(event.call.name, newlines=False)
            self.print(f"→ {name} {_arguments(event.call.arguments)}")
        elif isinstance(event, ToolCallFinished):
            mark = "←" if event.result.success else "✗"
            text = event.result.render()
            lines = text.splitlines() or [""]
            more = f"  (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
            self.print(f"{mark} {_short(printable(lines[0], newlines=False))}{more}")
            self.records.append(
                {
                    "type": "tool",
                    "call_id": event.call.call_id,
                    "tool": event.call.name,
                    "arguments": event.call.arguments,
                    "success": event.result.success,
                    "result": text,
                }
            )
        elif isinstance(event, ApprovalRequested):
            self.records.append(
                {
                    "type": "approval",
                    "call_id": event.pending.call_id,
                    "tool": event.pending.tool_name,
                    "reason": event.pending.reason,
                }
            )
        elif isinstance(event, ModelTurn):
            self.end_text()
            self.records.append(
                {
                    "type": "turn",
                    "index": event.index,
                    "provider": event.provider,
                    "model": event.model,
                    "text": event.text,
                    "tool_calls": [
                        {"call_id": c.call_id, "tool": c.name, "arguments": c.arguments}
                        for c in event.tool_calls
                    ],
                    "input_tokens": event.usage.input_tokens,
                    "output_tokens": event.usage.output_tokens,
                    "stop": event.stop,
                    "duration_s": round(event.duration_s, 6),
                }
            )


class _Approver:
    """Asks y/n/e on a terminal; approves all with ``--yes``; refuses when no one can answer."""

    def __init__(self, yes: bool, out: _Output) -> None:
        self.yes = yes
        self.out = out

    def __call__(self, pending: PendingApproval) -> Approval:
        self.out.print(_approval_prompt(pending))
        if self.yes:
            self.out.print("  approved (--yes)")
            return self._decided(pending.approve(), "approve")
        if not sys.stdin.isatty():
            self.out.print("  refused: no terminal to ask on (use --yes to approve)")
            return self._decided(
                pending.deny(
                    "No one is available to approve this call, so it was not run. Do not "
                    "retry it; finish without it."
                ),
                "deny",
            )
        while True:
            self.out.stream.write("  run it? [y]es / [n]o / [e]dit arguments: ")
            self.out.stream.flush()
            answer = sys.stdin.readline()
            if not answer:  # end of input: nobody is there
                return self._decided(pending.deny("The user did not answer."), "deny")
            answer = answer.strip().lower()
            if answer in ("y", "yes"):
                return self._decided(pending.approve(), "approve")
            if answer in ("n", "no"):
                return self._decided(
                    pending.deny("The user refused this call; do not retry it."), "deny"
                )
            if answer in ("e", "edit"):
                self.out.stream.write("  new arguments (JSON, one line): ")
                self.out.stream.flush()
                return self._decided(pending.edit(sys.stdin.readline().strip()), "edit")

    def _decided(self, approval: Approval, verdict: str) -> Approval:
        self.out.records.append({"type": "decision", "verdict": verdict})
        return approval


class _Terminal(Interaction):
    """A tool's questions asked on the terminal, its progress printed (at most one line per
    ``PROGRESS_EVERY_S``, the newest; a tool's final report is always printed).

    Each field of the question's form is read as one line: ``y``/``n`` for a yes-or-no,
    a number, a choice by its text; an empty line declines (a required field) or leaves
    the field out; end of input cancels. Without a terminal the tool is told nobody can be
    asked."""

    PROGRESS_EVERY_S = 0.5

    def __init__(self, out: _Output) -> None:
        self.out = out
        self._printed_at: float | None = None

    def ask(self, question: Question) -> Answer:
        from haversack._interaction import answer_from
        from haversack.errors import InteractionError

        tool = printable(question.tool or "a tool", newlines=False)
        self.out.print(f"? {tool} asks: {printable(question.message)}")
        if not sys.stdin.isatty():
            self.out.print("  not asked: no terminal to ask on")
            raise InteractionError(
                f"Tool {question.tool!r} needed to ask the user a question, but this run has "
                "no terminal to ask on, so it stopped. Do not retry it as it is: go on "
                "without it, or say in your answer what you would have asked."
            )
        content: dict[str, Any] = {}
        required = set(question.schema.get("required", ()))
        for name, spec in question.schema["properties"].items():
            while True:
                value = self._field(name, spec)
                if value is _EOF:
                    self.out.records.append({"type": "question", "action": "cancel"})
                    return answer_from(question, "cancel", None)
                if value is None:
                    if name in required:
                        self.out.records.append({"type": "question", "action": "decline"})
                        return answer_from(question, "decline", None)
                    break
                if value is not _AGAIN:
                    content[name] = value
                    break
        try:
            answer = answer_from(question, "accept", content)
        except InteractionError:
            self.out.print("  that answer does not fit the question: declined")
            return answer_from(question, "decline", None)
        self.out.records.append({"type": "question", "action": "accept"})
        return answer

    def _field(self, name: str, spec: Any) -> Any:
        kind = spec.get("type")
        label = printable(str(spec.get("title") or name), newlines=False)
        choices = spec.get("enum")
        hint = {"boolean": "y/n", "integer": "a whole number", "number": "a number"}.get(
            kind, "text"
        )
        if isinstance(choices, list):
            hint = " / ".join(printable(str(c), newlines=False) for c in choices)
        self.out.stream.write(f"  {label} ({hint}): ")
        self.out.stream.flush()
        line = sys.stdin.readline()
        if not line:
            return _EOF
        text = line.strip()
        if not text:
            return None
        try:
            if kind == "boolean":
                if text.lower() in ("y", "yes", "true"):
                    return True
                if text.lower() in ("n", "no", "false"):
                    return False
                raise ValueError(text)
            if kind == "integer":
                return int(text)
            if kind == "number":
                return float(text)
            if kind == "array":
                return [part.strip() for part in text.split(",") if part.strip()]
        except ValueError:
            self.out.print(f"  not {hint}; again")
            return _AGAIN
        return text

    def progress(self, update: Progress) -> None:
        import time

        now = time.monotonic()
        final = update.total is not None and update.progress >= update.total
        last = self._printed_at
        if not final and last is not None and now - last < self.PROGRESS_EVERY_S:
            return
        self._printed_at = now
        amount = f"{update.progress:g}" + (f"/{update.total:g}" if update.total is not None else "")
        message = f" {printable(update.message, newlines=False)}" if update.message else ""
        self.out.print(f"  … {amount}{message}")


_EOF = object()
_AGAIN = object()


def _arguments(arguments: object) -> str:
    return _short(printable(_text(arguments), newlines=False))


def _text(arguments: object) -> str:
    if isinstance(arguments, bytes):
        return arguments.decode(errors="replace")
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=repr)


def _approval_prompt(pending: PendingApproval) -> str:
    """The held call for a human: the arguments whole, never cut (a cut could hide the part
    that matters, after 300 harmless characters), and escaped like everything printed."""
    text = "" if pending.arguments is None else _text(pending.arguments)
    name = printable(pending.tool_name, newlines=False)
    return (
        f"? {name} needs approval: {printable(pending.reason)}\n"
        f"  arguments ({len(text)} characters, shown whole):\n"
        f"{printable(text)}"
    )


def _short(text: str, limit: int = 160) -> str:
    """A one-line preview; says how much it left out (the approval prompt shows it all)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 3]}... (+{len(text) - limit + 3} characters)"


def _end(result: Any) -> dict[str, Any]:
    return {
        "type": "end",
        "stop_reason": str(result.stop_reason),
        "output": result.output,
        "turns": len(result.turns),
        "tool_calls": len(result.calls),
        "input_tokens": result.usage.input_tokens,
        "output_tokens": result.usage.output_tokens,
    }
