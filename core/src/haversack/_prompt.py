"""``Prompt`` (a validated section tree) and ``RenderedPrompt`` (its text and tools)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._bindings import ResourceRegistry, as_registry
from ._identity import YOUR_CODE, ToolIdentity, resolve_name
from ._policy import ToolPolicy
from ._rendering import RenderState
from ._section import Section
from ._tool import Tool
from ._tree import build_tree, walk
from ._validation import check_patterns, validate
from .errors import PromptValidationError

if TYPE_CHECKING:
    from ._deferred import DeferredPack

__all__ = ["Prompt", "RenderedPrompt"]


@dataclass(frozen=True, eq=False)
class RenderedPrompt:
    """The prompt as the model sees it: ``text`` and the ``tools`` of enabled sections.

    Tools are in depth-first declaration order. ``policies`` lists every active policy
    (prompt-wide first, then those of enabled sections); :meth:`policies_for` gives the
    ones that govern a tool, :meth:`resolve` what a name a policy holds means.
    """

    prompt: Prompt
    text: str
    tools: tuple[Tool[Any, Any], ...]
    policies: tuple[ToolPolicy, ...]
    _by_name: Mapping[str, Tool[Any, Any]] = field(repr=False)
    _governing: Mapping[str, tuple[ToolPolicy, ...]] = field(repr=False)
    _paths: Mapping[str, tuple[str, ...]] = field(repr=False)
    # (id(policy), name) -> final names; filled on first use, so rendering pays nothing.
    _resolved: dict[tuple[int, str], frozenset[str]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _scopes: dict[int, dict[str, Tool[Any, Any]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def tool(self, name: str) -> Tool[Any, Any] | None:
        """The tool called ``name``, or ``None``."""
        return self._by_name.get(name)

    def policies_for(self, name: str) -> tuple[ToolPolicy, ...]:
        """Policies governing tool ``name``: prompt-wide ones, then its sections' from the root."""
        return self._governing.get(name, ())

    def section_path(self, name: str) -> tuple[str, ...]:
        """Keys from the root to the section declaring tool ``name``."""
        return self._paths.get(name, ())

    def scope(self, policy: ToolPolicy) -> Mapping[str, Tool[Any, Any]]:
        """The tools ``policy`` may name, by final name: every tool for a prompt-wide policy;
        for a section's, the tools of the contributors of the sections it governs (a pack's
        policy sees its own pack's tools, never another contributor's). Empty when the
        policy is not part of this render."""
        key = id(policy)
        found = self._scopes.get(key)
        if found is None:
            prompt = self.prompt
            everything = {t.name: t for t in self.tools}
            if any(p is policy for p in prompt.policies):
                found = everything
            else:
                owners = {
                    prompt.contributor(t.name)
                    for t in self.tools
                    if any(p is policy for p in self._governing.get(t.name, ()))
                }
                found = {n: t for n, t in everything.items() if prompt.contributor(n) in owners}
            self._scopes[key] = found
        return found

    def resolve(self, policy: ToolPolicy, name: str) -> frozenset[str]:
        """The final names of the tools in ``policy``'s :meth:`scope` that its ``name`` means.

        For a pack's section policy ``name`` is an original name (what the pack registered,
        before a ``prefix`` or ``rename``). For yours (prompt-wide, or on your sections) it is
        the final name of a tool in scope, or else the original name of every tool in scope
        registered under it. The answer is fixed per render (cached).
        """
        key = (id(policy), name)
        found = self._resolved.get(key)
        if found is None:
            scope = self.scope(policy)
            if self._packs_policy(policy):
                # A pack's own policy was written with its tools' registered names: a
                # rename of another of its tools to that name never stands in for it.
                found = frozenset(n for n, t in scope.items() if t.original_name == name)
            else:
                found = resolve_name(name, scope)
            self._resolved[key] = found
        return found

    def _packs_policy(self, policy: ToolPolicy) -> bool:
        """Whether ``policy`` is attached to sections a pack contributed (not yours)."""
        prompt = self.prompt
        if any(p is policy for p in prompt.policies):
            return False
        owners = {
            prompt.contributor(t.name)
            for t in self.tools
            if any(p is policy for p in self._governing.get(t.name, ()))
        }
        return bool(owners) and YOUR_CODE not in owners

    def identity(self, name: str) -> ToolIdentity | None:
        """The identity (contributor, original name) of the tool called ``name``, or ``None``."""
        return self.prompt.identity(name)


class Prompt:
    """A namespaced, validated tree of sections.

    Construction checks the whole tree: sibling keys are unique, every placeholder is a
    field of its section's params, tool names are unique across the tree, policy names are
    unique, and every ``${tool:name}`` reference resolves. ``contributors`` maps a top-level
    section's key to who contributed it (:func:`~haversack.compose` fills it in; a section
    not in it is ``"your code"``): with each tool's original name, its
    :class:`~haversack.ToolIdentity`. :meth:`bind` returns a new prompt
    with params and resources attached; :meth:`render` produces a :class:`RenderedPrompt`.
    """

    __slots__ = (
        "_bound",
        "_contributors",
        "_deferred",
        "_identities",
        "_loaded",
        "_nodes",
        "_pack_policies",
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
        contributors: Mapping[str, str] | None = None,
        _pack_policies: Sequence[ToolPolicy] = (),
        _deferred: Sequence[DeferredPack] = (),
        _loaded: Sequence[str] = (),
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
        self._contributors: Mapping[str, str] = dict(contributors or {})
        self._identities: dict[object, Any] | None = None  # built on first use
        self._bound: dict[type, object] = {}
        self._nodes = build_tree(self.sections, ())
        self._params_types = frozenset(
            node.section.params_type for node in walk(self._nodes) if node.section.params_type
        )
        self._tool_refs, self._resolved_tools = validate(
            self._nodes, self.policies, self._contributors
        )
        # compose() names the prompt-wide policies packs registered: like a pack's section
        # policies, they may name tools your exclude_tools removed (see check_patterns).
        check_patterns(self._nodes, self.policies, self._contributors, _pack_policies)
        self._pack_policies = tuple(_pack_policies)
        # compose(deferred=...) checked these packs' names against everyone's already.
        self._deferred: tuple[DeferredPack, ...] = tuple(_deferred)
        self._loaded: tuple[str, ...] = tuple(_loaded)

    # ------------------------------------------------------------------ deferred packs
    @property
    def deferred_packs(self) -> tuple[str, ...]:
        """The packs composed with ``deferred=`` that are not loaded yet, in order."""
        loaded = set(self._loaded)
        return tuple(p.name for p in self._deferred if p.name not in loaded)

    @property
    def deferred_resources(self) -> frozenset[type]:
        """The resource types only deferred packs not loaded yet bind (built on their load)."""
        loaded = set(self._loaded)
        return frozenset(tp for p in self._deferred if p.name not in loaded for tp in p.resources)

    @property
    def loaded_packs(self) -> tuple[str, ...]:
        """The deferred packs loaded so far (:meth:`with_pack`), in load order."""
        return self._loaded

    def with_pack(self, name: str) -> Prompt:
        """A copy of this prompt with the deferred pack ``name`` added (no mutation).

        Its sections go after all others, its policies join the prompt-wide ones; params
        and resources bound stay. Loading a loaded pack returns this prompt unchanged. A
        name that is not a deferred pack raises :class:`~haversack.errors.PackLoadError`.
        """
        from .errors import PackLoadError

        if name in self._loaded:
            return self
        pack = next((p for p in self._deferred if p.name == name), None)
        if pack is None:
            names = ", ".join(self.deferred_packs) or "none"
            raise PackLoadError(
                f"No deferred pack {name!r:.80} in prompt {self.ns}/{self.key}; the packs that "
                f"can be loaded are: {names}.",
                pack=name,
            )
        contributors = dict(self._contributors)
        for section in pack.sections:
            contributors[section.key] = pack.name
        grown = Prompt(
            ns=self.ns,
            key=self.key,
            name=self.name,
            sections=(*self.sections, *pack.sections),
            policies=(*self.policies, *pack.policies),
            resources=self.resources,
            contributors=contributors,
            _pack_policies=(*self._pack_policies, *pack.policies),
            _deferred=self._deferred,
            _loaded=(*self._loaded, name),
        )
        grown._bound = dict(self._bound)
        return grown

    # ------------------------------------------------------------------ queries
    @property
    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """Every tool declared in the tree, enabled or not, depth-first."""
        return tuple(t for node in walk(self._nodes) for t in node.section.tools)

    def identity(self, name: str) -> ToolIdentity | None:
        """The identity of the tool whose final name is ``name``, or ``None``."""
        found = self._identity_table().get(name)
        return found if isinstance(found, ToolIdentity) else None

    def contributor(self, name: str) -> str | None:
        """Who contributed the tool whose final name is ``name`` (``None`` if none is)."""
        identity = self.identity(name)
        return None if identity is None else identity.contributor

    def tool_named(self, identity: ToolIdentity) -> str | None:
        """The final name of the tool with ``identity``, or ``None`` if the prompt has none."""
        found = self._identity_table().get(identity)
        return found if isinstance(found, str) else None

    def _identity_table(self) -> dict[object, Any]:
        # One dict both ways (final name -> identity, identity -> final name), built lazily:
        # composing and rendering never pay for it, only the first call that asks.
        table = self._identities
        if table is None:
            table = {}
            owners = self._contributors
            for node in walk(self._nodes):
                contributor = owners.get(node.path[0], YOUR_CODE)
                for item in node.section.tools:
                    identity = ToolIdentity(contributor, item.original_name)
                    table[item.name] = identity
                    table.setdefault(identity, item.name)
            self._identities = table
        return table

    @property
    def params_types(self) -> frozenset[type]:
        """The params dataclasses some section renders with."""
        return self._params_types

    def walk(self) -> Iterator[tuple[tuple[str, ...], Section[Any]]]:
        """Every ``(path, section)`` depth-first."""
        for node in walk(self._nodes):
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
            registry = as_registry(resources)
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
        state = RenderState(lookup, self._tool_refs, self._resolved_tools)
        for policy in self.policies:
            state.policies.append(policy)
        state.render_level(self._nodes, depth=0, prefix="", governing=self.policies)
        state.finish()
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
