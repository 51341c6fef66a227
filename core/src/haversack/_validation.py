"""Whole-tree checks of a ``Prompt``: unique names, placeholders, ``${tool:x}`` references."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ._identity import YOUR_CODE
from ._names import Claims, in_prompt
from ._policy import ToolPolicy
from ._tool import TOOL_REFERENCE, Tool
from ._tree import Node, walk
from .errors import PromptValidationError

__all__ = ["ResolvedTool", "check_patterns", "validate"]

#: A tool whose description names tools, with ``${tool:x}`` filled in, and what each resolved to.
ResolvedTool = tuple["Tool[Any, Any]", dict[str, str]]


def validate(
    nodes: tuple[Node, ...],
    prompt_policies: tuple[ToolPolicy, ...],
    owners: Mapping[str, str] | None = None,
) -> tuple[dict[tuple[str, ...], dict[str, str]], dict[str, ResolvedTool]]:
    """Check the whole tree.

    Returns, per section path, its resolved ``${tool:x}`` names, and, per tool name, the
    copy of each tool whose description names tools, with the current names filled in.
    """
    sections = tuple(node.section for node in nodes)
    clashes = Claims[None]().add_tree(sections, prompt_policies, owner=None)
    if clashes:
        claim, first, _ = clashes[0]
        raise PromptValidationError(
            in_prompt(first, claim),
            section_path=claim.path,
            tool_name=claim.name if claim.kind == "tool" else None,
        )
    originals: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    owners = owners or {}
    for node in walk(nodes):
        _check_placeholders(node)
        for item in node.section.tools:
            originals.setdefault(item.original_name, []).append((node.path, item.name))

    def own(owner: str, ref: str) -> list[tuple[tuple[str, ...], str]]:
        # A contributor's text means its own tools: filtered per reference, not per tool, so
        # a prompt of a thousand tools pays nothing for it.
        return [c for c in originals.get(ref, ()) if owners.get(c[0][0], YOUR_CODE) == owner]

    resolved: dict[tuple[str, ...], dict[str, str]] = {}
    described: dict[str, ResolvedTool] = {}
    for node in walk(nodes):
        refs = node.section.tool_references()
        optional = node.section.conditional_tool_references()
        if refs or optional:
            owner = owners.get(node.path[0], YOUR_CODE)
            names = {}
            for ref in refs:
                mine = own(owner, ref)
                names[ref] = _resolve_tool(ref, node.path, {ref: mine} if mine else originals)
            for ref in optional:
                # Text that exists only with a tool is about its contributor's own tool:
                # another contributor's tool of that name (the own one excluded) never
                # stands in for it. Absent is fine.
                mine = own(owner, ref)
                if mine:
                    names[ref] = _resolve_tool(ref, node.path, {ref: mine})
            resolved[node.path] = names
        for item in node.section.tools:
            text = item.description
            owner = owners.get(node.path[0], YOUR_CODE)
            if "${if tool:" in text or "${endif}" in text:
                # Text that exists only with a tool of the same contributor (as in a section).
                text = _kept(text, node.path, frozenset(o for o in originals if own(owner, o)))
            named = frozenset(TOOL_REFERENCE.findall(text)) if "${tool:" in text else frozenset()
            if named or text is not item.description:
                actual = {}
                for ref in named:
                    mine = own(owner, ref)
                    scope = {ref: mine} if mine else originals
                    actual[ref] = _resolve_tool(ref, node.path, scope, describing=item.name)
                described[item.name] = (_describe(item, text, actual, node.path), actual)
    return resolved, described


def _kept(text: str, path: tuple[str, ...], offered: frozenset[str]) -> str:
    """A description without its ``${if tool:x}`` ... ``${endif}`` blocks whose tool the
    prompt does not offer (its markers removed)."""
    from ._markdown import _segments

    segments = _segments(text, path[0]) or ()
    return "".join(part for needs, part, _ in segments if needs <= offered).strip()


def _describe(
    item: Tool[Any, Any], text: str, actual: dict[str, str], path: tuple[str, ...]
) -> Tool[Any, Any]:
    """``item`` with ``text`` (its description, conditional blocks decided) as description,
    every ``${tool:x}`` replaced by the current name."""
    text = TOOL_REFERENCE.sub(lambda m: actual[m.group(1)], text)
    try:
        return dataclasses.replace(item, description=text)
    except PromptValidationError as exc:  # e.g. prefixed names pushed it over the length
        raise PromptValidationError(
            f"The description of tool {item.name!r} is invalid once its ${{tool:...}} names "
            f"are filled in: {exc.message}",
            section_path=path,
            tool_name=item.name,
        ) from exc


def _check_placeholders(node: Node) -> None:
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


def check_patterns(
    nodes: tuple[Node, ...],
    prompt_policies: tuple[ToolPolicy, ...],
    owners: Mapping[str, str],
    pack_policies: Sequence[ToolPolicy] = (),
) -> None:
    """Refuse a policy whose ``tool_patterns()`` has a glob matching no tool it may name, or
    one of yours whose ``tool_names()`` has a name meaning no tool.

    Fail closed: an approval pattern that matches nothing (a typo, a tool removed or
    renamed) would let the tool it meant run unasked, and a read-before-write or
    sequential-dependency setting naming no tool would never apply. A prompt-wide policy may
    name every tool; a section's, the tools of its section's contributor (``owners``:
    top-level key -> contributor). A glob matches a tool's final or original name; a name is
    a tool's final name or its original name. A pack's own policy names its tools by
    ``tool_names()`` unchecked (a section's, or a prompt-wide one in ``pack_policies``):
    your ``exclude_tools`` may have removed them.
    """
    from fnmatch import fnmatchcase

    def names_tools(policy: ToolPolicy) -> bool:
        return hasattr(policy, "tool_patterns") or hasattr(policy, "tool_names")

    if not any(names_tools(p) for p in prompt_policies) and not any(
        names_tools(p) for node in walk(nodes) for p in node.section.policies
    ):
        return  # the common case: nothing to check, no table built
    by_owner: dict[str, list[Tool[Any, Any]]] = {}
    attached: dict[int, tuple[ToolPolicy, set[str]]] = {}
    for node in walk(nodes):
        owner = owners.get(node.path[0], YOUR_CODE)
        by_owner.setdefault(owner, []).extend(node.section.tools)
        for policy in node.section.policies:
            attached.setdefault(id(policy), (policy, set()))[1].add(owner)
    everything = [t for tools in by_owner.values() for t in tools]
    theirs = {id(p) for p in pack_policies}
    scoped = [(p, everything, id(p) not in theirs) for p in prompt_policies]
    for policy, policy_owners in attached.values():
        tools = [t for o in sorted(policy_owners) for t in by_owner.get(o, [])]
        scoped.append((policy, tools, policy_owners == {YOUR_CODE}))
    for policy, tools, yours in scoped:
        patterns = getattr(policy, "tool_patterns", None)
        for pattern in patterns() if patterns is not None else ():
            if any(
                fnmatchcase(t.name, pattern) or fnmatchcase(t.original_name, pattern) for t in tools
            ):
                continue
            raise PromptValidationError(
                f"Policy {policy.name!r} names tools by {pattern!r}, which matches none of the "
                f"tools it governs{_closest(pattern, tools)}, so it would never apply. Fix the "
                "pattern, or remove it (patterns match a tool's final name, after a pack's "
                "prefix or rename, or its original name).",
                tool_name=pattern,
            )
        names = getattr(policy, "tool_names", None)
        if names is None or not yours:
            continue
        known = {t.name for t in tools} | {t.original_name for t in tools}
        for name in names():
            if name in known:
                continue
            raise PromptValidationError(
                f"Policy {policy.name!r} names the tool {name!r}, which is none of the tools "
                f"it governs{_closest(name, tools)}, so that part of it would never apply. "
                "Fix the name, or remove it (a name is a tool's final name, after a pack's "
                "prefix or rename, or its original name).",
                tool_name=name,
            )


def _closest(pattern: str, tools: list[Tool[Any, Any]]) -> str:
    import difflib  # only for a message

    names = sorted({t.name for t in tools} | {t.original_name for t in tools})
    if not names:
        return " (it governs no tool)"
    close = difflib.get_close_matches(pattern, names, n=3, cutoff=0.4)
    if close:
        return " (closest: " + ", ".join(close) + ")"
    shown = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
    return f" (its tools: {shown})"
