"""The prompt every bridge test hands to a framework: the real VFS pack (an in-memory
workspace), a tool that writes a file and then fails, and approval for ``rm``."""

from __future__ import annotations

from dataclasses import dataclass, field

import haversack
from haversack import (
    ApprovalPolicy,
    CallOutcome,
    Filesystem,
    MarkdownSection,
    Session,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
    tool,
)

#: A file put in the workspace by the user, not through a tool: it was never read.
SEEDED = "notes.md"


@dataclass(frozen=True)
class ScribbleArgs:
    path: str = field(metadata={"description": "The file to write before failing."})


@tool
def scribble(params: ScribbleArgs, *, context: ToolContext) -> ToolResult[None]:
    """Write a file, then fail (its write must be rolled back)."""
    context.filesystem.write(params.path, "half done\n")
    raise RuntimeError("failed after writing")


def executor() -> ToolExecutor:
    """A fresh executor over vfs + scribble, with ``rm`` needing approval and one seeded file."""
    prompt = haversack.compose(
        ns="tests",
        key="bridges",
        packs=["vfs"],
        sections=[
            MarkdownSection(
                title="Scribbles", key="scribbles", template="Scribble.", tools=[scribble]
            )
        ],
        policies=[ApprovalPolicy(["rm"])],
    )
    ex = ToolExecutor(prompt.render(), session=Session())
    workspace(ex).write(SEEDED, "x = 1\n")
    return ex


def workspace(ex: ToolExecutor) -> Filesystem:
    return ex.resources.get(Filesystem)


def outcomes(ex: ToolExecutor) -> list[tuple[str, CallOutcome]]:
    """Each call the executor ran, in order: (tool name, outcome)."""
    return [(event.tool_name, event.outcome) for event in ex.session[ToolInvoked].all()]
