"""Rendering a ``Prompt``: numbered headings, params by type, the enabled tools and policies."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ._tree import Node
from .errors import PromptRenderError

if TYPE_CHECKING:
    from ._policy import ToolPolicy
    from ._tool import Tool
    from ._validation import ResolvedTool

__all__ = ["RenderState"]

_MAX_HEADING_LEVEL = 6


class RenderState:
    __slots__ = (
        "blocks",
        "deferred",
        "governing",
        "lookup",
        "paths",
        "policies",
        "referring",
        "resolved_tools",
        "tool_refs",
        "tools",
    )

    def __init__(
        self,
        lookup: dict[type, object],
        tool_refs: dict[tuple[str, ...], dict[str, str]],
        resolved_tools: dict[str, ResolvedTool],
    ) -> None:
        self.lookup = lookup
        self.tool_refs = tool_refs
        self.resolved_tools = resolved_tools
        self.blocks: list[str] = []
        self.tools: list[Tool[Any, Any]] = []
        self.policies: list[ToolPolicy] = []
        self.governing: dict[str, tuple[ToolPolicy, ...]] = {}
        self.paths: dict[str, tuple[str, ...]] = {}
        #: Rendered text naming tools with ``${tool:x}``: the section's path, what the names
        #: resolved to, and the tool whose description it is (``None`` for section text).
        self.referring: list[tuple[tuple[str, ...], dict[str, str], str | None]] = []
        #: Sections with text conditional on tools, rendered once every tool is known:
        #: (index in blocks, heading, node, params, resolved names).
        self.deferred: list[tuple[int, str, Node, object, dict[str, str]]] = []

    def finish(self) -> None:
        """Render the deferred sections, keeping each block whose tools this render offers,
        then refuse text naming a tool the render does not offer."""
        for index, heading, node, params, refs in self.deferred:
            section = node.section
            optional = section.conditional_tool_references()
            offered = frozenset(o for o in optional if refs.get(o, "") in self.governing)
            kept = section.kept_tool_references(offered)
            missing = sorted(kept - refs.keys())
            if missing:
                raise PromptRenderError(
                    f"Section text kept in this render names ${{tool:{missing[0]}}}, but no "
                    "tool of the prompt is (or was originally) called that; put the sentence "
                    f"inside ${{if tool:{missing[0]}}} ... ${{endif}}.",
                    section_path=node.path,
                    tool_name=missing[0],
                )
            names = {o: refs[o] for o in kept | offered}
            if names:
                self.referring.append((node.path, {o: refs[o] for o in kept}, None))
            body = section.render_body(params, names)
            self.blocks[index] = f"{heading}\n\n{body}" if body else heading
        self.check_references()

    def check_references(self) -> None:
        """Refuse text that names a tool this render does not offer (its section is off)."""
        for path, refs, describing in self.referring:
            for original, actual in refs.items():
                if actual in self.governing:
                    continue
                where = (
                    f"The description of tool {describing!r}"
                    if describing is not None
                    else "Section text"
                )
                raise PromptRenderError(
                    f"{where} names the tool {actual!r} (${{tool:{original}}}), but the "
                    "section that carries it is disabled in this render, so the model would "
                    "be told to call a tool it does not have. Disable both under the same "
                    "condition, or move the mention where it is enabled with the tool.",
                    section_path=path,
                    tool_name=actual,
                )

    def render_level(
        self,
        nodes: tuple[Node, ...],
        *,
        depth: int,
        prefix: str,
        governing: tuple[ToolPolicy, ...],
    ) -> None:
        number = 0
        hashes = "#" * min(depth + 2, _MAX_HEADING_LEVEL)
        for node in nodes:
            section = node.section
            params = None
            if section.enabled_needs_params:
                params = self._params_for(node)
            if not section.is_enabled(params):
                continue
            if params is None and section.params_type is not None:
                params = self._params_for(node)
            number += 1
            label = f"{prefix}{number}."
            refs = self.tool_refs.get(node.path)
            heading = f"{hashes} {label} {section.title}"
            if section.conditional_tool_references():
                # Which tools exist is known only once every section is walked.
                self.deferred.append((len(self.blocks), heading, node, params, refs or {}))
                self.blocks.append(heading)
            else:
                if refs:
                    self.referring.append((node.path, refs, None))
                body = section.render_body(params, refs or {})
                self.blocks.append(f"{heading}\n\n{body}" if body else heading)
            rules = governing + section.policies if section.policies else governing
            for policy in section.policies:
                # One policy object may govern several sections (a pack's, over each of its
                # sections): it is listed once.
                if not any(policy is p for p in self.policies):
                    self.policies.append(policy)
            for item in section.tools:
                resolved = self.resolved_tools.get(item.name)
                if resolved is not None:
                    item, refs = resolved
                    self.referring.append((node.path, refs, item.name))
                self.tools.append(item)
                self.governing[item.name] = rules
                self.paths[item.name] = node.path
            if node.children:
                self.render_level(node.children, depth=depth + 1, prefix=label, governing=rules)

    def _params_for(self, node: Node) -> object:
        section = node.section
        tp = section.params_type
        if tp is None:
            return None
        found = self.lookup.get(tp)
        if found is not None:
            return found
        if section.default_params is not None:
            return section.default_params
        try:
            return tp()
        except TypeError:
            missing = [
                f.name
                for f in dataclasses.fields(tp)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ]
            raise PromptRenderError(
                f"Section needs params of type {tp.__qualname__}; none were given and it has "
                f"required fields without defaults: {', '.join(missing)}. Pass an instance to "
                "render() or bind(), or give the section default_params.",
                section_path=node.path,
                dataclass_type=tp,
                placeholder=missing[0] if missing else None,
            ) from None
