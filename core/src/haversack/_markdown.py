"""``MarkdownSection``: a section whose body is a ``$placeholder`` template."""

from __future__ import annotations

import functools
import re
import string
import textwrap
from collections.abc import Sequence
from typing import Any, TypeVar

from ._policy import ToolPolicy
from ._section import EnabledPredicate, Section
from ._tool import Tool
from .errors import PromptRenderError, PromptValidationError

__all__ = ["MarkdownSection"]

ParamsT = TypeVar("ParamsT")

_TOOL_PREFIX = "tool:"


class _Template(string.Template):
    # ``${tool:name}`` refers to a tool by its original name, so renamed tools stay right.
    braceidpattern = r"(?a:[_a-z][_a-z0-9]*|tool:[a-z0-9_-]{1,64})"


#: ``${if tool:name}`` opens text that exists only while that tool does; ``${endif}`` ends
#: it. A line holding nothing but a marker goes with it.
_MARKER = re.compile(r"\$\{(?:if tool:(?P<if>[a-z0-9_-]{1,64})|(?P<end>endif))\}")
#: A line holding nothing but markers: it disappears with its newline.
_MARKER_LINE = re.compile(
    r"^[ \t]*(?:\$\{(?:if tool:[a-z0-9_-]{1,64}|endif)\}[ \t]*)+(?:\n|$)", re.MULTILINE
)
#: A text segment: the tools (original names) it needs, its text, the ``${tool:x}`` it names.
_Segment = tuple[frozenset[str], str, frozenset[str]]


@functools.lru_cache(maxsize=256)  # a pack builds the same template on every compose
def _segments(template: str, key: str) -> tuple[_Segment, ...] | None:
    """The template cut at ``${if tool:x}``/``${endif}`` markers; ``None`` if it has none."""
    if "${if tool:" not in template and "${endif}" not in template:
        return None
    found: list[_Segment] = []
    stack: list[str] = []
    start = 0

    def cut(end: int) -> None:
        text = template[start:end]
        if text:
            refs = frozenset(
                m.group("braced")[len(_TOOL_PREFIX) :]
                for m in _Template.pattern.finditer(text)
                if (m.group("braced") or "").startswith(_TOOL_PREFIX)
            )
            found.append((frozenset(stack), text, refs))

    markers: list[tuple[int, int, str | None]] = []
    on_own_line: set[int] = set()
    for line in _MARKER_LINE.finditer(template):
        inner = list(_MARKER.finditer(template, line.start(), line.end()))
        for index, match in enumerate(inner):
            # The line's first marker takes its indent, the last its newline.
            begin = line.start() if index == 0 else match.start()
            end = line.end() if index == len(inner) - 1 else match.end()
            markers.append((begin, end, match.group("if")))
            on_own_line.add(match.start())
    for match in _MARKER.finditer(template):
        if match.start() not in on_own_line:
            markers.append((match.start(), match.end(), match.group("if")))
    markers.sort()
    for begin, end, opened in markers:
        cut(begin)
        start = end
        if opened is not None:
            stack.append(opened)
        elif not stack:
            at = template.count("\n", 0, begin) + 1
            raise PromptValidationError(
                f"${{endif}} at line {at} of the template closes no ${{if tool:...}}.",
                section_path=(key,),
            )
        else:
            stack.pop()
    if stack:
        raise PromptValidationError(
            f"${{if tool:{stack[-1]}}} in the template is never closed: end it with ${{endif}}.",
            section_path=(key,),
        )
    cut(len(template))
    return tuple(found)


class MarkdownSection(Section[ParamsT]):
    """A section rendered from a markdown template.

    ``$name`` and ``${name}`` insert the field ``name`` of the section's params;
    ``${tool:name}`` inserts the current name of the tool originally called ``name``
    (correct even after a pack's tools are prefixed or renamed); ``$$`` is a literal
    dollar. The template is dedented and stripped.

    Text that only makes sense while a tool exists goes between ``${if tool:name}`` and
    ``${endif}`` (blocks nest; a line holding only a marker disappears with it): it is
    rendered only when the prompt offers the tool originally called ``name``, so a pack's
    ``exclude_tools`` (or a disabled section) takes the tool's sentences with it instead of
    refusing the prompt. A ``${tool:x}`` inside such a block must exist only when the block
    is kept.
    """

    __slots__ = (
        "_conditional",
        "_placeholders",
        "_segments",
        "_template",
        "_tool_refs",
        "template",
    )

    def __init__(
        self,
        *,
        title: str,
        key: str,
        template: str,
        default_params: ParamsT | None = None,
        children: Sequence[Section[Any]] = (),
        enabled: EnabledPredicate | bool | None = None,
        tools: Sequence[Tool[Any, Any]] = (),
        policies: Sequence[ToolPolicy] = (),
    ) -> None:
        super().__init__(
            title=title,
            key=key,
            default_params=default_params,
            children=children,
            enabled=enabled,
            tools=tools,
            policies=policies,
        )
        if not isinstance(template, str):
            raise PromptValidationError("Section template must be a string.", section_path=(key,))
        self.template: str = textwrap.dedent(template).strip()
        self._segments = _segments(self.template, key)
        plain = (
            self.template
            if self._segments is None
            else "".join(text for _, text, _ in self._segments)
        )
        self._template = _Template(self.template)
        names: set[str] = set()
        tool_refs: set[str] = set()
        for match in _Template.pattern.finditer(plain):
            if match.group("invalid") is not None:
                line = self.template.count("\n", 0, match.start()) + 1
                raise PromptValidationError(
                    f"Invalid '$' at line {line} of the template: write $name, ${{name}}, "
                    "${tool:name} or $$ for a literal dollar.",
                    section_path=(key,),
                )
            name = match.group("named") or match.group("braced")
            if name is None:
                continue
            if name.startswith(_TOOL_PREFIX):
                tool_refs.add(name[len(_TOOL_PREFIX) :])
            else:
                names.add(name)
        self._placeholders = frozenset(names)
        conditional: set[str] = set()
        if self._segments is not None:
            for needs, _, refs in self._segments:
                conditional |= needs
                if needs:
                    conditional |= refs
            # Only text outside every block must name tools that exist.
            tool_refs = {r for needs, _, refs in self._segments if not needs for r in refs}
            conditional -= tool_refs
        self._tool_refs = frozenset(tool_refs)
        self._conditional = frozenset(conditional)

    def placeholders(self) -> frozenset[str]:
        return self._placeholders

    def tool_references(self) -> frozenset[str]:
        return self._tool_refs

    def conditional_tool_references(self) -> frozenset[str]:
        return self._conditional

    def kept_tool_references(self, offered: frozenset[str]) -> frozenset[str]:
        """The ``${tool:x}`` names of the text kept when the tools ``offered`` exist."""
        if self._segments is None:
            return self._tool_refs
        return frozenset(
            ref for needs, _, refs in self._segments if needs <= offered for ref in refs
        )

    def render_body(self, params: ParamsT | None, tool_names: dict[str, str]) -> str:
        template = self._template
        if self._segments is not None:
            # A block is kept while every tool it needs is among the names given.
            text = "".join(t for needs, t, _ in self._segments if needs <= tool_names.keys())
            template = _Template(re.sub(r"\n{3,}", "\n\n", text).strip())
        elif not self._placeholders and not self._tool_refs:
            return self._template.template.replace("$$", "$")
        values: dict[str, object] = {
            _TOOL_PREFIX + original: actual for original, actual in tool_names.items()
        }
        for name in self._placeholders:
            if params is None:
                raise PromptRenderError(
                    "Section needs params to render but none were given.",
                    section_path=(self.key,),
                    placeholder=name,
                )
            values[name] = getattr(params, name)
        try:
            return template.substitute(values).strip()
        except KeyError as exc:  # a ${tool:x} the prompt could not resolve
            raise PromptRenderError(
                f"Cannot fill placeholder {exc.args[0]!r}.", section_path=(self.key,)
            ) from exc
