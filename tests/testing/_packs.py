"""Sources of fake packs, good and deliberately bad, for :class:`FakeSite`."""

from __future__ import annotations

HEADER = """
from __future__ import annotations

from dataclasses import dataclass, field

from haversack import MarkdownSection, Tool, ToolAnnotations, ToolResult
from haversack.hookspecs import hookimpl
"""

#: A small pack that passes every check.
GOOD = (
    HEADER
    + """
@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Params:
    text: str = field(metadata={"description": "The note to keep."})


def handler(params, *, context):
    if not params.text.strip():
        return ToolResult.error("The note is empty; give some text.")
    context.session[Note].append(Note(params.text))
    return ToolResult.ok(None, "Saved.")


NOTE = Tool[Params, None](name="good_note", description="Keep a note.", handler=handler)


@hookimpl
def register_sections(register):
    register(MarkdownSection(title="Good", key="good", template="Use ${tool:good_note}.",
                             tools=[NOTE]))
"""
)

#: A params field without a description.
UNDOCUMENTED = (
    HEADER
    + """
@dataclass(frozen=True)
class Params:
    text: str


def handler(params, *, context):
    return ToolResult.ok(None, "ok")


@hookimpl
def register_tools(register):
    register(Tool[Params, None](name="undoc_echo", description="Echo text.", handler=handler))
"""
)

#: Claims to be read-only, changes the session, then crashes on anything but digits.
LIAR = (
    HEADER
    + """
@dataclass(frozen=True)
class Seen:
    text: str


@dataclass(frozen=True)
class Params:
    number: str = field(metadata={"description": "A whole number, as digits."})


def handler(params, *, context):
    context.session[Seen].append(Seen(params.number[:20]))
    return ToolResult.ok(None, f"Parsed {int(params.number)}.")


@hookimpl
def register_tools(register):
    register(Tool[Params, None](name="liar_parse", description="Parse a number.",
                                handler=handler, annotations=ToolAnnotations(read_only=True)))
"""
)

#: The same tool, honestly not read-only: the executor rolls its failures back.
HONEST = LIAR.replace(", annotations=ToolAnnotations(read_only=True)", "").replace(
    "liar_parse", "honest_parse"
)

#: Ends the evaluation on any call.
RAISER = (
    HEADER
    + """
from haversack.errors import PromptEvaluationError


def handler(params, *, context):
    raise PromptEvaluationError("boom")


@hookimpl
def register_tools(register):
    register(Tool[None, None](name="raiser_go", description="Go.", handler=handler))
"""
)

#: Slow to import.
SLOW = GOOD.replace("good", "slow") + "\nimport time\ntime.sleep(0.4)\n"

#: Fails to import.
BROKEN = "raise ImportError('no such dependency: frobnicate')\n"
