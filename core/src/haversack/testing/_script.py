"""``ScriptedModel`` and ``play``: replay a fixed list of tool calls through an executor."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from haversack._arguments import Arguments

if TYPE_CHECKING:
    from haversack import ToolExecutor, ToolResult

__all__ = ["ScriptStep", "ScriptedCall", "ScriptedModel", "Transcript", "TranscriptEntry", "play"]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One tool call the scripted model makes."""

    tool: str
    arguments: Arguments = None
    call_id: str | None = None


#: A step of a script: a call, a ``(tool, arguments)`` pair, or a function of the transcript
#: so far returning either (to use a value an earlier result produced).
ScriptStep = (
    ScriptedCall
    | tuple[str, Arguments]
    | Callable[["Transcript"], "ScriptedCall | tuple[str, Arguments]"]
)


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    """A call the scripted model made and what came back."""

    tool: str
    arguments: Arguments
    result: ToolResult[Any]
    call_id: str | None = None

    @property
    def success(self) -> bool:
        """Whether the call succeeded (its effects were kept)."""
        return self.result.success

    @property
    def rendered(self) -> str:
        """The exact text the model would see for this call."""
        return self.result.render()

    @property
    def value(self) -> Any:
        """The result's typed value."""
        return self.result.value


class Transcript(Sequence[TranscriptEntry]):
    """The calls of one scripted run, in order, with their results."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Iterable[TranscriptEntry] = ()) -> None:
        self._entries: list[TranscriptEntry] = list(entries)

    @overload
    def __getitem__(self, index: int) -> TranscriptEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TranscriptEntry]: ...

    def __getitem__(self, index: int | slice) -> TranscriptEntry | Sequence[TranscriptEntry]:
        return self._entries[index]

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self._entries)

    def _add(self, entry: TranscriptEntry) -> None:
        self._entries.append(entry)

    @property
    def outcomes(self) -> list[bool]:
        """``success`` of every call, in order."""
        return [entry.success for entry in self._entries]

    @property
    def failures(self) -> list[TranscriptEntry]:
        """The calls that failed."""
        return [entry for entry in self._entries if not entry.success]

    def text(self) -> str:
        """The whole run as the model saw it: ``> tool {args}`` then the result, per call."""
        blocks = []
        for entry in self._entries:
            args = entry.arguments
            shown = args if isinstance(args, str) else json.dumps(args, default=repr)
            blocks.append(f"> {entry.tool} {shown}\n{entry.rendered}")
        return "\n\n".join(blocks)

    def assert_all_ok(self) -> None:
        """Raise ``AssertionError`` showing every failed call, unless all succeeded."""
        failed = self.failures
        if failed:
            lines = [f"{e.tool}: {e.rendered}" for e in failed]
            raise AssertionError(
                f"{len(failed)} of {len(self)} scripted calls failed:\n" + "\n".join(lines)
            )

    def __repr__(self) -> str:
        return f"Transcript({len(self)} calls, {len(self.failures)} failed)"


class ScriptedModel:
    """A fake model that answers with a fixed list of tool calls (like ``llm-echo``).

    Give it the calls to make, as ``(tool, arguments)`` pairs, :class:`ScriptedCall`
    objects, or functions of the transcript so far (to use an id an earlier call
    returned). :func:`play` sends each call through a :class:`~haversack.ToolExecutor`,
    so policies, argument parsing and rollback all apply, and records what came back.
    """

    __slots__ = ("steps",)

    def __init__(self, steps: Iterable[ScriptStep]) -> None:
        self.steps: tuple[ScriptStep, ...] = tuple(steps)

    @classmethod
    def from_json(cls, text: str) -> ScriptedModel:
        """A model from ``[{"tool": ..., "arguments": {...}}, ...]`` (``llm-echo``'s idea)."""
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError("A JSON script must be a list of {tool, arguments} objects.")
        calls = []
        for item in data:
            if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
                raise ValueError(f"Script item {item!r} needs a 'tool' name.")
            calls.append(ScriptedCall(item["tool"], item.get("arguments"), item.get("call_id")))
        return cls(calls)

    def __len__(self) -> int:
        return len(self.steps)

    def next_call(self, transcript: Transcript) -> ScriptedCall | None:
        """The call to make after ``transcript``, or ``None`` when the script is done."""
        if len(transcript) >= len(self.steps):
            return None
        return _as_call(self.steps[len(transcript)], transcript)

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self.steps)} steps)"


def _as_call(step: object, transcript: Transcript) -> ScriptedCall:
    if callable(step) and not isinstance(step, ScriptedCall | tuple):
        step = step(transcript)
    if isinstance(step, ScriptedCall):
        return step
    if isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str):
        return ScriptedCall(step[0], step[1])
    raise TypeError(
        f"A script step must be (tool, arguments), a ScriptedCall or a function returning "
        f"one; got {step!r}."
    )


def play(
    executor: ToolExecutor,
    script: ScriptedModel | Iterable[ScriptStep],
    *,
    stop_on_failure: bool = False,
) -> Transcript:
    """Run every call of ``script`` through ``executor``; return the transcript.

    A failing call is recorded and the script goes on (a model would read the error and
    continue), unless ``stop_on_failure``. Exceptions the executor raises (an expired
    deadline, :class:`~haversack.PromptEvaluationError`) propagate.
    """
    model = script if isinstance(script, ScriptedModel) else ScriptedModel(script)
    transcript = Transcript()
    while (call := model.next_call(transcript)) is not None:
        result = executor.execute(call.tool, call.arguments, call_id=call.call_id)
        transcript._add(TranscriptEntry(call.tool, call.arguments, result, call.call_id))
        if stop_on_failure and not result.success:
            break
    return transcript
