"""``PackLoader``: one run of the pack pipeline, discover -> select -> load -> check -> compose."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haversack.errors import (
    NameConflictError,
    PackConfigError,
    PackError,
    PackLoadError,
    PromptValidationError,
)

from ._cache import scan
from ._compat import core_version, incompatibility, requirement_on_core
from ._config import FileConfig, PackOptions, load_config, split_options
from ._conflicts import CALLER, check_internal, find_conflicts, loose_section_key, resolve_bindings
from ._contribution import Contribution, collect
from ._discovery import Candidate, normalize
from ._rename import all_tools, apply_names
from ._report import FAILED, Conflict, PackInfo, PackReport, PackStatus
from ._selection import Selection, closest, env_flag
from ._tokens import token_estimate
from ._trace import ENV_TRACE, Tracer

if TYPE_CHECKING:
    import pluggy

    from haversack._bindings import Binding
    from haversack._deferred import DeferredPack, DeferredSection
    from haversack._policy import ToolPolicy
    from haversack._prompt import Prompt

__all__ = ["ENV_STRICT", "PackLoader", "raise_conflicts"]

ENV_STRICT = "HAVERSACK_STRICT"
#: Who owns the core's own names (the ``load_pack`` tool and the list of deferred packs).
CORE = "haversack"


class PackLoader:
    """One run over the installed packs, in steps: :meth:`discover`, :meth:`select`,
    :meth:`load`, :meth:`check`, then :meth:`compose` (the prompt) or :meth:`report`.

    It holds what the run was given (selection, per-pack options, how problems are treated,
    the tracer) and what it found (a :class:`PackInfo` per pack, conflicts, contributions).
    Without ``user_errors`` and ``strict`` no step raises for a pack's problem: everything
    goes in the report. With ``user_errors`` the caller's own mistakes raise: a named pack
    (allowlist or options) that is missing, broken or incompatible, and wrong options.
    ``strict`` raises for every pack. A malformed config file always raises
    :class:`PackConfigError`.
    """

    def __init__(
        self,
        *,
        packs: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        config: Mapping[str, Mapping[str, Any]] | None = None,
        strict: bool | None = None,
        config_file: str | Path | None = None,
        user_errors: bool = False,
        tokens: bool = False,
        import_budget: float | None = None,
        workspace: str | os.PathLike[str] | None = None,
        deferred: Sequence[str] = (),
    ) -> None:
        self.file: FileConfig = load_config(config_file)
        self.strict = bool(
            strict if strict is not None else env_flag(ENV_STRICT) or self.file.strict
        )
        #: Raise for the user's own mistakes (packs they named, options they gave).
        self.user_errors = user_errors
        #: Estimate the tokens of each loaded pack's tools (listing commands).
        self.tokens = tokens
        #: Per-pack import budget in seconds (listing commands), ``None`` to wait.
        self.budget = import_budget
        #: A project directory for every pack whose options have a ``workspace`` field.
        self.workspace = None if workspace is None else os.path.abspath(workspace)
        self.tracer = Tracer(env_flag(ENV_TRACE))
        #: Packs composed and checked but left out of the prompt until loaded.
        self.deferred: tuple[str, ...] = _deferred_names(deferred)
        if packs is not None and self.deferred:
            packs = [*packs, *(n for n in self.deferred if n not in packs)]
        self.selection = Selection.resolve(
            packs=packs,
            exclude=exclude,
            file_packs=self.file.packs,
            file_disable=self.file.disable,
            file_label=self.file.label,
        )
        self._config = config
        self.candidates: list[Candidate] = []
        self.options: dict[str, PackOptions] = {}
        self.problems: list[str] = []
        self.infos: dict[str, PackInfo] = {}
        self.conflicts: list[Conflict] = []
        #: The packs :meth:`select` chose to import.
        self.loadable: list[Candidate] = []
        #: What :meth:`load` collected, the caller's first, then packs by name.
        self.contributions: list[Contribution] = []
        #: One binding per resource type, chosen by :meth:`check`.
        self.bindings: list[Binding[Any]] = []
        #: Original tool name -> (pack, where the filter option was given), for messages.
        self.removed: dict[str, tuple[str, str]] = {}

    # ----------------------------------------------------------------------------- steps
    def discover(self) -> None:
        """Find the installed packs; check the selection and the options against them."""
        self.candidates = scan()
        installed = {c.name for c in self.candidates}
        unknown = [
            f"Pack {name!r} is to be deferred, but no installed pack is called that"
            f"{closest(name, installed)} (installed: {', '.join(sorted(installed)) or 'none'})."
            for name in self.deferred
            if name not in installed
        ]
        if unknown and (self.strict or self.user_errors):
            raise PackConfigError(unknown[0] + _more(len(unknown) - 1))
        self.problems = unknown + self.selection.unknown(self.candidates)
        self.options, option_problems = _options(self.file, self._config, self.candidates)
        self.problems += option_problems
        if (self.strict or self.user_errors) and self.problems:
            raise PackConfigError(self.problems[0] + _more(len(self.problems) - 1))

    def select(self, *, load: bool) -> None:
        """Decide each pack's fate from metadata alone: disabled, claimed twice (a conflict),
        incompatible, or to be imported (``not-imported`` when not ``load``)."""
        for every in _by_name(self.candidates):
            group = [c for c in every if not self.selection.why_not(c)]
            if not group:
                self.infos[every[0].name] = _info(
                    every[0], "disabled", self.selection.why_not(every[0])
                )
                continue
            candidate = group[0]
            if len(group) > 1:
                self.conflicts.extend(_pack_conflict(candidate, other) for other in group[1:])
                for c in group:
                    self.tracer.line(f"{c.name}: claimed by {len(group)} distributions; not loaded")
                self.infos[candidate.name] = _info(
                    candidate,
                    "broken",
                    "pack name claimed by " + " and ".join(c.label for c in group),
                )
                continue
            why = incompatibility(candidate)
            if why:
                if self._fatal(candidate):
                    raise PackLoadError(
                        f"{candidate.label} is incompatible: {why}{self._named_hint(candidate)}",
                        pack=candidate.name,
                    )
                self.infos[candidate.name] = _info(candidate, "incompatible", why)
                self.tracer.line(f"{candidate.name}: incompatible: {why}")
                continue
            if load:
                self.loadable.append(candidate)
            else:
                self.infos[candidate.name] = _info(candidate, "not-imported")

    def load(self, caller: object | None = None) -> None:
        """Import the selected packs, register them after ``caller`` (the plugin holding the
        caller's own sections, policies and resources) and collect what each contributes,
        each checked on its own (its options, its names)."""
        from ._manager import new_manager, pending_errors, register

        pm = new_manager()
        if caller is None:
            from ._caller import CallerContributions

            caller = CallerContributions((), (), ())
        register(pm, caller, CALLER, CALLER)
        order: list[tuple[Contribution, Candidate | None]] = [
            (Contribution(CALLER, CALLER, builtin=True), None)
        ]
        for candidate in self.loadable:
            try:
                register(pm, self._import(candidate), candidate.name, candidate.label)
            except PackError as exc:
                self._broken(exc, candidate)
                continue
            order.append((Contribution(candidate.name, candidate.label), candidate))
        for name, message in pending_errors(pm).items():
            for contribution, pending in order:
                if contribution.name == name and pending is not None:
                    self._broken(PackLoadError(f"{pending.label} {message}", pack=name), pending)
        for contribution, source in order:
            if source is not None and source.name in self.infos:
                continue  # broken while importing or registering
            self._collect(pm, contribution, source)

    def check(self) -> None:
        """Find the clashes between contributors and choose one binding per resource type."""
        self.bindings, resource_conflicts = resolve_bindings(self.contributions)
        everyone = self.contributions
        if self.deferred:
            self._check_deferred()
            # The core's own load tool and listing claim their names like anyone's.
            everyone = [*everyone, Contribution(CORE, CORE, sections=[self._listing()])]
        self.conflicts.extend(find_conflicts(everyone))
        self.conflicts.extend(resource_conflicts)

    def compose(self, *, ns: str, key: str) -> Prompt:
        """The prompt of everything loaded: each contributor's sections, then its loose tools
        in a section of their own; its policies; the chosen bindings. Packs left out are
        logged; a conflict raises :class:`NameConflictError`."""
        from haversack._bindings import ResourceRegistry
        from haversack._prompt import Prompt
        from haversack._section import Section

        report = self.report()
        for info in report.packs:
            if info.status in FAILED:
                _warn("haversack: left out %s (%s): %s", info.label, info.status, info.reason)
        raise_conflicts(report)
        sections: list[Section[Any]] = []
        policies: list[ToolPolicy] = []
        theirs: list[ToolPolicy] = []
        contributors: dict[str, str] = {}
        deferred: list[DeferredPack] = []
        # A type someone loaded up front binds too is built up front, as always.
        upfront = {
            b.provides
            for c in self.contributions
            if c.name not in self.deferred
            for b in c.bindings
        }
        for c in self.contributions:
            if c.name in self.deferred:
                deferred.append(_deferred_pack(c, upfront))
                continue
            own = list(c.sections)
            if c.tools:
                loose = loose_section_key(c.name)
                own.append(Section(title=f"Tools from {c.name}", key=loose, tools=c.tools))
            # Registered policies are prompt-wide by contract (hookspecs): they govern, and
            # observe, every tool. A pack's section policies govern its own tools only.
            policies.extend(c.policies)
            if c.name != CALLER:
                theirs.extend(c.policies)
            for section in own:
                contributors[section.key] = c.name
            sections.extend(own)
        resources = ResourceRegistry.of(*self.bindings)
        try:
            if deferred:
                # Everything at once is checked now, so no later load can fail validation.
                every_pack = {s.key: p.name for p in deferred for s in p.sections}
                Prompt(
                    ns=ns,
                    key=key,
                    sections=[*sections, *(s for p in deferred for s in p.sections)],
                    policies=[*policies, *(q for p in deferred for q in p.policies)],
                    resources=resources,
                    contributors={**contributors, **every_pack},
                    _pack_policies=[*theirs, *(q for p in deferred for q in p.policies)],
                )
                listing = self._listing(deferred)
                contributors[listing.key] = CORE
                sections.append(listing)
            return Prompt(
                ns=ns,
                key=key,
                sections=sections,
                policies=policies,
                resources=resources,
                contributors=contributors,
                _pack_policies=theirs,
                _deferred=deferred,
            )
        except PromptValidationError as exc:
            removed = self.removed.get(exc.tool_name or "")
            if removed is None:
                raise
            pack, source = removed
            raise PackConfigError(
                f"The tool {exc.tool_name!r} of pack {pack!r} is removed by its tools/"
                f"exclude_tools options ({source}), but text of the prompt still names it: "
                f"{exc}. Keep the tool, or leave out the section that mentions it (as for a "
                "disabled section).",
                pack=pack,
            ) from None

    def report(self) -> PackReport:
        """What the steps run so far found: built-ins first, then packs by name."""
        ordered = sorted(self.infos.values(), key=lambda i: (not i.builtin, i.name))
        return PackReport(tuple(ordered), tuple(self.conflicts), tuple(self.problems))

    # ----------------------------------------------------------------------------- helpers
    def _check_deferred(self) -> None:
        """Every deferred pack must be loaded now, so that a later load cannot fail."""
        loaded = {c.name for c in self.contributions}
        for name in self.deferred:
            if name in loaded:
                continue
            info = self.infos.get(name)
            why = f"it is {info.status}: {info.reason}" if info else "it was not loaded"
            raise PackLoadError(f"Pack {name!r} cannot be deferred: {why}", pack=name)

    def _listing(self, packs: Sequence[DeferredPack] = ()) -> DeferredSection:
        from haversack._deferred import DeferredSection, load_tool

        return DeferredSection(packs, load_tool())

    def _collect(
        self, pm: pluggy.PluginManager, contribution: Contribution, source: Candidate | None
    ) -> None:
        from ._watch import watching

        options = self.options.get(contribution.name, PackOptions())
        try:
            with watching(f"running the hooks of {contribution.label}"):
                collect(pm, contribution, options, self.tracer, workspace=self.workspace)
            removed = _filter(contribution, options)
            apply_names(contribution, options)
            check_internal(contribution)
        except PackError as exc:
            if source is None:
                raise
            if isinstance(exc, PackConfigError) and options.source != "defaults":
                self._misconfigured(exc, source)
            else:
                self._broken(exc, source)
            return
        for tool in removed:
            self.removed[tool.original_name] = (contribution.name, options.source)
        self.contributions.append(contribution)
        self.infos[contribution.name] = _loaded(source, contribution, removed, tokens=self.tokens)

    def _import(self, candidate: Candidate) -> object:
        """Import one pack, watched: a notice names it when slow; a budget may give up on it."""
        from ._manager import import_pack
        from ._watch import watching, within

        what = f"importing {candidate.label} (module {candidate.module})"
        self.tracer.line(f"{candidate.name}: importing {candidate.module}")
        if self.budget is None:
            with watching(what):
                return import_pack(candidate)
        done, module = within(lambda: import_pack(candidate), what, self.budget)
        if not done:
            raise _TimedOutError(
                f"{candidate.label}: importing {candidate.module} did not finish within "
                f"{self.budget:g} s (HAVERSACK_IMPORT_BUDGET); it may hang at import. Leave it "
                f"out (HAVERSACK_DISABLE={candidate.name}) and report it to its authors.",
                pack=candidate.name,
            )
        return module

    def _named(self, candidate: Candidate) -> bool:
        return candidate.name in self.options or self.selection.names(candidate)

    def _fatal(self, candidate: Candidate) -> bool:
        return self.strict or (self.user_errors and self._named(candidate))

    def _named_hint(self, candidate: Candidate) -> str:
        if self.strict or not self._named(candidate):
            return ""
        why = (
            "you gave it options"
            if candidate.name in self.options and not self.selection.names(candidate)
            else f"it is named in {self.selection.allow_source}"
        )
        return f" (an error because {why}; packs nobody named are left out with a warning instead)"

    def _broken(self, exc: PackError, candidate: Candidate) -> None:
        timed_out = isinstance(exc, _TimedOutError)
        self.tracer.line(f"{candidate.name}: {'timed out' if timed_out else 'broken'}: {exc}")
        if self._fatal(candidate):
            hint = self._named_hint(candidate)
            if hint:
                raise PackLoadError(f"{exc}{hint}", pack=candidate.name) from exc
            raise exc
        reason = str(exc).removeprefix(candidate.label).lstrip(": ")
        self.infos[candidate.name] = _info(
            candidate, "timed-out" if timed_out else "broken", reason
        )

    def _misconfigured(self, exc: PackConfigError, candidate: Candidate) -> None:
        """The options the user gave a pack are wrong: always their error when composing."""
        self.tracer.line(f"{candidate.name}: misconfigured: {exc}")
        if self.strict or self.user_errors:
            raise exc
        self.infos[candidate.name] = _info(candidate, "misconfigured", str(exc))


def raise_conflicts(report: PackReport) -> None:
    """Raise :class:`NameConflictError` for the first conflict (mentioning how many more)."""
    if not report.conflicts:
        return
    first = report.conflicts[0]
    more = len(report.conflicts) - 1
    message = first.message + (
        f" ({more} more conflict{'s' if more > 1 else ''}; run `haversack check` to list them.)"
        if more
        else ""
    )
    raise NameConflictError(
        message, kind=first.kind, name=first.name, contributors=first.contributors
    )


def _deferred_names(names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        names = [names]
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise PackConfigError(f"deferred= takes pack names, got {name!r}.")
        if name not in out:
            out.append(name)
    return tuple(out)


def _deferred_pack(c: Contribution, upfront: set[type]) -> DeferredPack:
    from haversack._deferred import DeferredPack, summary_of
    from haversack._section import Section

    own = list(c.sections)
    if c.tools:
        key = loose_section_key(c.name)
        own.append(Section(title=f"Tools from {c.name}", key=key, tools=c.tools))
    later = tuple(b.provides for b in c.bindings if b.provides not in upfront)
    return DeferredPack(c.name, summary_of(c.sections), tuple(own), tuple(c.policies), later)


def _warn(message: str, *args: object) -> None:
    import logging  # only when there is something to say

    logging.getLogger("haversack.packs").warning(message, *args)


class _TimedOutError(PackLoadError):
    """A pack's import outlasted the listing budget (reported as ``timed-out``)."""


def _more(count: int) -> str:
    if count <= 0:
        return ""
    return f" ({count} more problem{'s' if count > 1 else ''}; `haversack check` lists them.)"


def _filter(contribution: Contribution, options: PackOptions) -> list[Any]:
    if options.tools is None and not options.exclude_tools:
        return []
    from ._filter import filter_tools  # only when a pack's tools are filtered

    return filter_tools(contribution, options)


def _by_name(candidates: list[Candidate]) -> list[list[Candidate]]:
    groups: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(candidate.name, []).append(candidate)
    return list(groups.values())


def _pack_conflict(first: Candidate, second: Candidate) -> Conflict:
    return Conflict(
        "pack",
        first.name,
        (first.label, second.label),
        "To fix it, uninstall one distribution or disable one by distribution name "
        f"(HAVERSACK_DISABLE={normalize(second.distribution)}).",
    )


def _options(
    file: FileConfig,
    config: Mapping[str, Mapping[str, Any]] | None,
    candidates: list[Candidate],
) -> tuple[dict[str, PackOptions], list[str]]:
    """Per-pack options, code keys over file keys, plus problems for packs not installed."""
    installed = {c.name for c in candidates}
    raw: dict[str, dict[str, Any]] = {}
    sources: dict[str, list[str]] = {}
    for name, table in file.options.items():
        raw.setdefault(name, {}).update(table)
        sources.setdefault(name, []).append(file.where(name))
    for name, table in (config or {}).items():
        if not isinstance(table, Mapping):
            raise PackConfigError(
                f"config[{name!r}] must be a mapping of options, got {type(table).__name__}.",
                pack=name,
            )
        raw.setdefault(name, {}).update(table)
        sources.setdefault(name, []).append(f"config={{{name!r}: ...}}")
    problems: list[str] = []
    result: dict[str, PackOptions] = {}
    for name, table in raw.items():
        source = " and ".join(sources[name])
        if name not in installed:
            problems.append(
                f"Options are given for pack {name!r} ({source}), but no installed pack is "
                f"called that{closest(name, installed)} (installed: "
                f"{', '.join(sorted(installed)) or 'none'}); install it or fix the name."
            )
            continue
        from_file = set(file.options.get(name, {})) - set((config or {}).get(name, {}))
        result[name] = split_options(
            name, table, source, base_dir=file.base_dir, file_keys=frozenset(from_file)
        )
    return result, problems


def _info(candidate: Candidate, status: PackStatus, reason: str = "") -> PackInfo:
    return PackInfo(
        name=candidate.name,
        distribution=candidate.distribution,
        version=candidate.version,
        status=status,
        reason=reason,
        module=candidate.module,
        requires=requirement_on_core(candidate),
    )


def _loaded(
    candidate: Candidate | None, c: Contribution, removed: Sequence[Any], *, tokens: bool
) -> PackInfo:
    sections = [s.key for s in c.sections] + ([loose_section_key(c.name)] if c.tools else [])
    tools = list(all_tools(c))
    return PackInfo(
        name=c.name,
        distribution=candidate.distribution if candidate else "haversack",
        version=candidate.version if candidate else core_version(),
        status="loaded",
        module=candidate.module if candidate else "haversack._packs._caller",
        requires=requirement_on_core(candidate) if candidate else "",
        builtin=c.builtin,
        sections=tuple(sections),
        tools=tuple(t.name for t in tools),
        policies=tuple(p.name for p in c.policies),
        resources=tuple(b.provides.__qualname__ for b in c.bindings),
        token_estimate=token_estimate(tools) if tokens else None,
        tokens_saved=token_estimate(removed) if tokens and removed else None,
        removed_tools=tuple(t.name for t in removed),
    )
