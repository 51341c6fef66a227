"""Deferred packs: composed and checked up front, listed in one line each, loaded on demand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._context import ToolContext
from ._result import ToolResult
from ._section import Section
from ._tool import Tool, ToolAnnotations
from ._tool_decorator import tool

if TYPE_CHECKING:
    from ._policy import ToolPolicy

__all__ = [
    "DEFERRED_SECTION",
    "LOAD_TOOL",
    "DeferredPack",
    "DeferredSection",
    "LoadPackParams",
    "load_tool",
]

#: The core's own names while packs are deferred, reserved like any contributor's.
LOAD_TOOL = "load_pack"
DEFERRED_SECTION = "deferred-packs"
#: Tool names shown in a pack's line; the rest are counted.
_NAMES_SHOWN = 6


@dataclass(frozen=True, slots=True)
class DeferredPack:
    """One pack composed (its names checked against everyone's) but not in the prompt yet."""

    name: str
    summary: str
    sections: tuple[Section[Any], ...]
    policies: tuple[ToolPolicy, ...]
    #: Resource types only this pack binds: built when it is loaded, not before.
    resources: tuple[type, ...] = ()

    @property
    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """Every tool of the pack's sections, depth-first."""
        out: list[Tool[Any, Any]] = []
        stack = list(reversed(self.sections))
        while stack:
            section = stack.pop()
            out.extend(section.tools)
            stack.extend(reversed(section.children))
        return tuple(out)

    def line(self) -> str:
        """The pack's line in the prompt: name, what it is about, its tools."""
        names = [t.name for t in self.tools]
        shown = ", ".join(names[:_NAMES_SHOWN])
        more = f" and {len(names) - _NAMES_SHOWN} more" if len(names) > _NAMES_SHOWN else ""
        about = f"{self.summary}; " if self.summary else ""
        count = f"{len(names)} tool{'s' if len(names) != 1 else ''}"
        return f"- {self.name}: {about}{count}" + (f" ({shown}{more})" if names else "")


def summary_of(sections: Sequence[Section[Any]]) -> str:
    """A pack's one-line summary: the titles of its top sections (loose tools' excepted)."""
    titles = [s.title for s in sections if not s.title.startswith("Tools from ")]
    return "; ".join(titles)


@dataclass(frozen=True, slots=True)
class LoadPackParams:
    """Arguments of ``load_pack``."""

    pack: str
    """The name of a pack listed under "Packs you can load"."""


class DeferredSection(Section[None]):
    """Lists the deferred packs one line each and carries the ``load_pack`` tool."""

    __slots__ = ("packs",)

    def __init__(self, packs: Sequence[DeferredPack], tool: Tool[Any, Any]) -> None:
        super().__init__(title="Packs you can load", key=DEFERRED_SECTION, tools=(tool,))
        self.packs = tuple(packs)

    def render_body(self, params: None, tool_names: dict[str, str]) -> str:
        lines = "\n".join(p.line() for p in self.packs)
        return (
            f"More tools are installed than shown. Call `{LOAD_TOOL}` with a pack's name to "
            "add its tools (usable from your next step) and read its instructions:\n" + lines
        )


def load_tool() -> Tool[Any, Any]:
    """The ``load_pack`` tool: its handler only checks the name; the executor does the load
    (the tool set it runs grows), because a handler cannot change its executor."""

    def load_pack(params: LoadPackParams, *, context: ToolContext) -> ToolResult[None]:
        prompt = context.prompt
        if params.pack in prompt.loaded_packs:
            return ToolResult.ok(message=f"Pack {params.pack!r} is already loaded.")
        # A model's garbage name is echoed bounded.
        if params.pack not in prompt.deferred_packs:
            names = ", ".join(prompt.deferred_packs) or "none (all are loaded)"
            return ToolResult.error(
                f"No pack {params.pack!r:.80} can be loaded; the packs you can load are: {names}."
            )
        return ToolResult.ok(message=f"Loaded pack {params.pack!r}.")

    return tool(
        name=LOAD_TOOL,
        description=(
            "Load one of the packs listed under 'Packs you can load': its tools become "
            "available from your next step and the result gives its instructions."
        ),
        annotations=ToolAnnotations(idempotent=True, title="Load a pack"),
    )(load_pack)
