"""``MarkdownSection``: a section whose body is a ``$placeholder`` template."""

from __future__ import annotations

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


class MarkdownSection(Section[ParamsT]):
    """A section rendered from a markdown template.

    ``$name`` and ``${name}`` insert the field ``name`` of the section's params;
    ``${tool:name}`` inserts the current name of the tool originally called ``name``
    (correct even after a pack's tools are prefixed or renamed); ``$$`` is a literal
    dollar. The template is dedented and stripped.
    """

    __slots__ = ("_placeholders", "_template", "_tool_refs", "template")

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
        self._template = _Template(self.template)
        names: set[str] = set()
        tool_refs: set[str] = set()
        for match in _Template.pattern.finditer(self.template):
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
        self._tool_refs = frozenset(tool_refs)

    def placeholders(self) -> frozenset[str]:
        return self._placeholders

    def tool_references(self) -> frozenset[str]:
        return self._tool_refs

    def render_body(self, params: ParamsT | None, tool_names: dict[str, str]) -> str:
        if not self._placeholders and not self._tool_refs:
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
            return self._template.substitute(values).strip()
        except KeyError as exc:  # a ${tool:x} the prompt could not resolve
            raise PromptRenderError(
                f"Cannot fill placeholder {exc.args[0]!r}.", section_path=(self.key,)
            ) from exc
