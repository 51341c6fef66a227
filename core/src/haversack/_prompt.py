"""``Prompt`` (a validated section tree) and ``RenderedPrompt`` (its text and tools)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._policy import ToolPolicy
from ._section import Section
from ._tool import TOOL_REFERENCE, Tool
from .errors import PromptRenderError, PromptValidationError

if TYPE_CHECKING:
    from ._resources import Binding, ResourceRegistry

__all__ = ["Prompt", "RenderedPrompt"]

_MAX_HEADING_LEVEL = 6


@dataclass(frozen=True, slots=True)
class _Node:
    section: Section[Any]
    path: tuple[str, ...]
    children: tuple[_Node, ...]


@dataclass(frozen=True, eq=False)
class RenderedPrompt:
    """The prompt as the model sees it: ``text`` and the ``tools`` of enabled sections.

    Tools are in depth-first declaration order. ``policies`` lists every active policy
    (prompt-wide first, then those of enabled sections); :meth:`policies_for` gives the
    ones that govern a tool.
    """

    prompt: Prompt
    text: str
    tools: tuple[Tool[Any, Any], ...]
    policies: tuple[ToolPolicy, ...]
    _by_name: Mapping[str, Tool[Any, Any]] = field(repr=False)
    _governing: Mapping[str, tuple[ToolPolicy, ...]] = field(repr=False)
    _paths: Mapping[str, tuple[str, ...]] = field(repr=False)

    def tool(self, name: str) -> Tool[Any, Any] | None:
        """The tool called ``name``, or ``None``."""
        return self._by_name.get(name)

    def policies_for(self, name: str) -> tuple[ToolPolicy, ...]:
        """Policies governing tool ``name``: prompt-wide ones, then its sections' from the root."""
        return self._governing.get(name, ())

    def section_path(self, name: str) -> tuple[str, ...]:
        """Keys from the root to the section declaring tool ``name``."""
        return self._paths.get(name, ())


class Prompt:
    """A namespaced, validated tree of sections.

    Construction checks the whole tree: sibling keys are unique, every placeholder is a
    field of its section's params, tool names are unique across the tree, policy names are
    unique, and every ``${tool:name}`` reference resolves. :meth:`bind` returns a new prompt
    with params and resources attached; :meth:`render` produces a :class:`RenderedPrompt`.
    """

    __slots__ = (
        "_bound",
        "_nodes",
        "_params_types",
        "_resolved_tools",
        "_tool_refs",
        "key",
        "name",
        "ns",
        "policies",
        "resources",
        "sections",
    )

    def __init__(
        self,
        *,
        ns: str,
        key: str,
        name: str | None = None,
        sections: Sequence[Section[Any]] = (),
        policies: Sequence[ToolPolicy] = (),
        resources: ResourceRegistry | None = None,
    ) -> None:
        for label, value in (("namespace (ns)", ns), ("key", key)):
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise PromptValidationError(
                    f"Prompt {label} must be a non-empty string without surrounding "
                    f"whitespace, got {value!r}."
                )
        self.ns = ns
        self.key = key
        self.name = name if name is not None else key
        self.sections: tuple[Section[Any], ...] = tuple(sections)
        self.policies: tuple[ToolPolicy, ...] = tuple(policies)
        for policy in self.policies:
            if not isinstance(policy, ToolPolicy):
                raise PromptValidationError(
                    f"Prompt policies must implement ToolPolicy, got {type(policy).__name__}."
                )
        self.resources = resources
        self._bound: dict[type, object] = {}
        self._nodes = _build_tree(self.sections, ())
        self._params_types = frozenset(
            node.section.params_type for node in _walk(self._nodes) if node.section.params_type
        )
        self._tool_refs, self._resolved_tools = _validate(self._nodes, self.policies)

    # ------------------------------------------------------------------ queries
    @property
    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """Every tool declared in the tree, enabled or not, depth-first."""
        return tuple(t for node in _walk(self._nodes) for t in node.section.tools)

    @property
    def params_types(self) -> frozenset[type]:
        """The params dataclasses some section renders with."""
        return self._params_types

    def walk(self) -> Iterator[tuple[tuple[str, ...], Section[Any]]]:
        """Every ``(path, section)`` depth-first."""
        for node in _walk(self._nodes):
            yield node.path, node.section

    # ------------------------------------------------------------------ binding
    def bind(
        self,
        *params: object,
        resources: ResourceRegistry | Mapping[type, object] | None = None,
    ) -> Prompt:
        """A copy of this prompt with ``params`` and ``resources`` attached (no mutation).

        Params replace earlier-bound params of the same type. ``resources`` is a
        ``ResourceRegistry`` or a mapping from type to an instance or a ``Binding``; it is
        merged over the resources already attached.
        """
        bound = dict(self._bound)
        bound.update(self._check_params(params))
        clone = object.__new__(Prompt)
        for slot in Prompt.__slots__:
            object.__setattr__(clone, slot, getattr(self, slot))
        clone._bound = bound
        if resources is not None:
            registry = _as_registry(resources)
            clone.resources = registry if self.resources is None else self.resources.merge(registry)
        return clone

    def _check_params(self, params: Sequence[object]) -> dict[type, object]:
        seen: dict[type, object] = {}
        for item in params:
            if not dataclasses.is_dataclass(item) or isinstance(item, type):
                raise PromptValidationError(
                    f"Prompt params must be dataclass instances, got {type(item).__name__}."
                )
            tp = type(item)
            if tp in seen:
                raise PromptValidationError(
                    f"Two params objects of type {tp.__qualname__} were given; pass one per type.",
                    dataclass_type=tp,
                )
            if tp not in self._params_types:
                raise PromptValidationError(
                    f"No section of prompt {self.ns}/{self.key} uses params of type "
                    f"{tp.__qualname__}.",
                    dataclass_type=tp,
                )
            seen[tp] = item
        return seen

    # ------------------------------------------------------------------ rendering
    def render(self, *params: object) -> RenderedPrompt:
        """Render enabled sections with hierarchical, contiguous heading numbers.

        ``params`` (dataclass instances, one per type) override params bound earlier. A
        section takes its params from them by type, else from its ``default_params``, else
        by constructing its params type with no arguments.
        """
        lookup = dict(self._bound)
        lookup.update(self._check_params(params))
        state = _RenderState(lookup, self._tool_refs, self._resolved_tools)
        for policy in self.policies:
            state.policies.append(policy)
        state.render_level(self._nodes, depth=0, prefix="", governing=self.policies)
        state.check_references()
        return RenderedPrompt(
            prompt=self,
            text="\n\n".join(state.blocks),
            tools=tuple(state.tools),
            policies=tuple(state.policies),
            _by_name={t.name: t for t in state.tools},
            _governing=state.governing,
            _paths=state.paths,
        )

    def __repr__(self) -> str:
        return f"Prompt(ns={self.ns!r}, key={self.key!r}, sections={len(self.sections)})"


class _RenderState:
    __slots__ = (
        "blocks",
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
        resolved_tools: dict[str, _ResolvedTool],
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
        nodes: tuple[_Node, ...],
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
            if refs:
                self.referring.append((node.path, refs, None))
            body = section.render_body(params, refs or {})
            heading = f"{hashes} {label} {section.title}"
            self.blocks.append(f"{heading}\n\n{body}" if body else heading)
            rules = governing + section.policies if section.policies else governing
            self.policies.extend(section.policies)
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

    def _params_for(self, node: _Node) -> object:
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


def _build_tree(sections: Sequence[Section[Any]], parent: tuple[str, ...]) -> tuple[_Node, ...]:
    nodes = []
    seen: set[str] = set()
    for section in sections:
        if not isinstance(section, Section):
            raise PromptValidationError(
                f"Prompt sections must be Section instances, got {type(section).__name__}.",
                section_path=parent,
            )
        path = (*parent, section.key)
        if section.key in seen:
            raise PromptValidationError(
                f"Two sibling sections share the key {section.key!r}; sibling keys must be unique.",
                section_path=path,
            )
        seen.add(section.key)
        nodes.append(_Node(section, path, _build_tree(section.children, path)))
    return tuple(nodes)


def _walk(nodes: tuple[_Node, ...]) -> Iterator[_Node]:
    for node in nodes:
        yield node
        yield from _walk(node.children)


#: A tool whose description names tools, with ``${tool:x}`` filled in, and what each resolved to.
_ResolvedTool = tuple["Tool[Any, Any]", dict[str, str]]


def _validate(
    nodes: tuple[_Node, ...], prompt_policies: tuple[ToolPolicy, ...]
) -> tuple[dict[tuple[str, ...], dict[str, str]], dict[str, _ResolvedTool]]:
    """Check the whole tree.

    Returns, per section path, its resolved ``${tool:x}`` names, and, per tool name, the
    copy of each tool whose description names tools, with the current names filled in.
    """
    tool_paths: dict[str, tuple[str, ...]] = {}
    originals: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    policies: dict[str, object] = {}
    for policy in prompt_policies:
        _claim_policy(policies, policy, ())
    for node in _walk(nodes):
        section = node.section
        _check_placeholders(node)
        for policy in section.policies:
            _claim_policy(policies, policy, node.path)
        for item in section.tools:
            if item.name in tool_paths:
                first = ".".join(tool_paths[item.name]) or "<prompt>"
                raise PromptValidationError(
                    f"Tool name {item.name!r} is declared twice: in section {first!r} and in "
                    f"section {'.'.join(node.path)!r}. Tool names must be unique in a prompt.",
                    section_path=node.path,
                    tool_name=item.name,
                )
            tool_paths[item.name] = node.path
            originals.setdefault(item.original_name, []).append((node.path, item.name))
    resolved: dict[tuple[str, ...], dict[str, str]] = {}
    described: dict[str, _ResolvedTool] = {}
    for node in _walk(nodes):
        refs = node.section.tool_references()
        if refs:
            resolved[node.path] = {ref: _resolve_tool(ref, node.path, originals) for ref in refs}
        for item in node.section.tools:
            named = item.tool_references()
            if named:
                actual = {
                    ref: _resolve_tool(ref, node.path, originals, describing=item.name)
                    for ref in named
                }
                described[item.name] = (_describe(item, actual, node.path), actual)
    return resolved, described


def _describe(
    item: Tool[Any, Any], actual: dict[str, str], path: tuple[str, ...]
) -> Tool[Any, Any]:
    """``item`` with every ``${tool:x}`` of its description replaced by the current name."""
    text = TOOL_REFERENCE.sub(lambda m: actual[m.group(1)], item.description)
    try:
        return dataclasses.replace(item, description=text)
    except PromptValidationError as exc:  # e.g. prefixed names pushed it over the length
        raise PromptValidationError(
            f"The description of tool {item.name!r} is invalid once its ${{tool:...}} names "
            f"are filled in: {exc.message}",
            section_path=path,
            tool_name=item.name,
        ) from exc


def _claim_policy(seen: dict[str, object], policy: ToolPolicy, path: tuple[str, ...]) -> None:
    other = seen.get(policy.name)
    if other is not None and other is not policy:
        raise PromptValidationError(
            f"Two different policies are named {policy.name!r}; policy names must be unique.",
            section_path=path,
        )
    seen[policy.name] = policy


def _check_placeholders(node: _Node) -> None:
    section = node.section
    names = section.placeholders()
    if not names:
        return
    tp = section.params_type
    if tp is None:
        first = sorted(names)[0]
        raise PromptValidationError(
            f"Section takes no params but its template uses placeholder ${first}; declare a "
            "params dataclass (MarkdownSection[Params]) or write $$ for a literal dollar.",
            section_path=node.path,
            placeholder=first,
        )
    fields = {f.name for f in dataclasses.fields(tp)}
    unknown = sorted(names - fields)
    if unknown:
        raise PromptValidationError(
            f"Template placeholder ${unknown[0]} is not a field of {tp.__qualname__} (fields: "
            f"{', '.join(sorted(fields)) or 'none'}).",
            section_path=node.path,
            dataclass_type=tp,
            placeholder=unknown[0],
        )


def _resolve_tool(
    ref: str,
    path: tuple[str, ...],
    originals: dict[str, list[tuple[tuple[str, ...], str]]],
    *,
    describing: str | None = None,
) -> str:
    candidates = originals.get(ref, [])
    if len(candidates) > 1:
        # Prefer the tool declared closest to the referring section (same root subtree).
        local = [c for c in candidates if c[0][:1] == path[:1]]
        candidates = local if len(local) == 1 else candidates
    if len(candidates) == 1:
        return candidates[0][1]
    where = "Template" if describing is None else f"The description of tool {describing!r}"
    if not candidates:
        raise PromptValidationError(
            f"{where} refers to ${{tool:{ref}}} but no tool of the prompt is (or was "
            "originally) called that.",
            section_path=path,
            tool_name=ref,
        )
    raise PromptValidationError(
        f"{where} refers to ${{tool:{ref}}}, which matches several tools "
        f"({', '.join(c[1] for c in candidates)}); rename one of them.",
        section_path=path,
        tool_name=ref,
    )


def _as_registry(resources: ResourceRegistry | Mapping[type, object]) -> ResourceRegistry:
    from ._resources import Binding, ResourceRegistry

    if isinstance(resources, ResourceRegistry):
        return resources
    bindings: list[Binding[Any]] = []
    for tp, value in resources.items():
        bindings.append(value if isinstance(value, Binding) else Binding.instance(tp, value))
    return ResourceRegistry.of(*bindings)
