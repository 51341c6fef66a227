"""The terminal presentation: header, prompt, one block per step, summary (plain text)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from ._transcript import StepRecord, Transcript

__all__ = ["TextPrinter", "compact_arguments"]

_WIDTH = 100
_RESULT_LINES = 12
_STRING_CHARS = 48
_LINE_CHARS = 160

_GREEN, _YELLOW, _RED, _DIM, _BOLD = "32", "33", "31", "2", "1"


def compact_arguments(arguments: Mapping[str, Any]) -> str:
    """One-line JSON of ``arguments`` with long strings cut (their length is shown)."""
    return json.dumps({k: _cut(v) for k, v in arguments.items()}, ensure_ascii=False)


def _rows(items: list[str], width: int) -> list[str]:
    """Join ``items`` with two spaces into lines of at most ``width``, never splitting one."""
    rows: list[str] = []
    for item in items:
        if rows and len(rows[-1]) + 2 + len(item) <= width:
            rows[-1] += "  " + item
        else:
            rows.append(item)
    return rows


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _STRING_CHARS:
        return f"{value[:_STRING_CHARS]}... ({len(value)} chars)"
    if isinstance(value, list | tuple):
        return [_cut(v) for v in value]
    return value


class TextPrinter:
    """Streams a transcript to ``out`` as the runner produces it."""

    def __init__(self, out: TextIO, *, color: bool = False, prompt_lines: int | None = 14) -> None:
        self.out = out
        self.color = color
        self.prompt_lines = prompt_lines
        self._act = ""
        self._skip = ""

    # ------------------------------------------------------------------ helpers
    def _paint(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def _print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def _heading(self, title: str) -> None:
        self._print()
        self._print(self._paint(f"== {title} " + "=" * max(3, _WIDTH - len(title) - 4), _BOLD))

    # ------------------------------------------------------------------ sections
    def ready(self, transcript: Transcript) -> None:
        """The title, the packs, the prompt text and tools, and the sandbox decision."""
        self._print(self._paint(f"Haversack demo: {transcript.title}", _BOLD))
        self._print(
            "A scripted model (no LLM) calls the installed packs' tools through the ToolExecutor."
        )
        self._heading("Packs")
        width = max((len(p.name) for p in transcript.packs), default=4)
        for pack in transcript.packs:
            label = f"{pack.distribution} {pack.version}"
            detail = f"{len(pack.tools)} tools" if pack.status == "loaded" else pack.reason
            self._print(f"  {pack.name:<{width}}  {label:<26} {pack.status:<9} {detail}")
        if not transcript.packs:
            self._print("  (no pack installed or selected)")
        self._prompt(transcript)
        self._heading("Sandbox")
        if transcript.sandbox.enabled:
            self._print("  enabled: the podman pack runs commands in a container")
        else:
            self._print("  " + self._paint(f"SKIPPED: {transcript.sandbox.reason}", _YELLOW))

    def _prompt(self, transcript: Transcript) -> None:
        lines = transcript.prompt_text.splitlines()
        self._heading(f"Prompt ({len(lines)} lines, {len(transcript.tools)} tools)")
        shown = lines if self.prompt_lines is None else lines[: self.prompt_lines]
        for line in shown:
            self._print(f"  | {line}" if line else "  |")
        if len(shown) < len(lines):
            self._print(
                f"  | ... {len(lines) - len(shown)} more lines "
                "(--full-prompt, or `haversack render`, prints them all)"
            )
        self._print("  Tools:")
        for line in _rows([sig for _, sig in transcript.tools] or ["(none)"], _WIDTH - 4):
            self._print(f"    {line}")

    def step(self, record: StepRecord) -> None:
        """One step: the call, the note, the outcome and the result text (cut)."""
        if record.act != self._act:
            self._act = record.act
            self._heading(record.act)
        call = f"[{record.index}] {record.tool} {compact_arguments(record.arguments)}"
        if record.skipped is not None:
            if record.skipped == self._skip:
                self._print(self._paint(f"{call}  (skipped: same reason)", _DIM))
            else:
                self._print(self._paint(call, _DIM))
                self._print("    " + self._paint(f"SKIPPED: {record.skipped}", _YELLOW))
            self._skip = record.skipped
            return
        self._skip = ""
        self._print(self._paint(call, _BOLD))
        self._print(f"    {record.note}")
        self._print("    -> " + self._outcome(record) + f"  {record.duration_s * 1000:.1f} ms")
        lines = record.result.splitlines() or [""]
        for line in lines[:_RESULT_LINES]:
            cut = line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 3] + "..."
            self._print(f"    | {cut}" if cut else "    |")
        if len(lines) > _RESULT_LINES:
            self._print(f"    | ... {len(lines) - _RESULT_LINES} more lines")
        for problem in record.problems:
            self._print("    " + self._paint(f"UNEXPECTED: {problem}", _RED))

    def _outcome(self, record: StepRecord) -> str:
        outcome = record.outcome or "?"
        if record.rolled_back:
            outcome += ", rolled back"
        if not record.as_expected:
            return self._paint(outcome.upper(), _RED)
        if record.outcome == "ok":
            return self._paint("ok", _GREEN)
        return self._paint(f"{outcome} (as scripted)", _YELLOW)

    def summary(self, transcript: Transcript) -> None:
        """Counts, per-tool timings, total time and the verdict."""
        summary = transcript.summary
        if summary is None:
            return
        self._heading("Summary")
        self._print(
            f"  calls {summary.calls}: ok {summary.ok}, denied {summary.denied}, "
            f"failed and rolled back {summary.rolled_back}"
            + (f", other {summary.other}" if summary.other else "")
        )
        self._print(f"  skipped steps {summary.skipped}, unexpected outcomes {summary.unexpected}")
        if summary.timings:
            width = max(len(t.tool) for t in summary.timings)
            self._print(f"  {'tool':<{width}}  calls  total ms  mean ms")
            for t in summary.timings:
                self._print(
                    f"  {t.tool:<{width}}  {t.calls:>5}  {t.total_s * 1000:>8.1f}  "
                    f"{t.mean_s * 1000:>7.1f}"
                )
        self._print(f"  total time {summary.total_s:.2f} s (composing, resources and calls)")
        if transcript.ok:
            self._print("  " + self._paint("Every step behaved as scripted.", _GREEN))
        else:
            bad = ", ".join(f"[{s.index}] {s.tool}" for s in transcript.steps if s.problems)
            self._print("  " + self._paint(f"UNEXPECTED outcomes in steps {bad}.", _RED))
