"""Run discovery, selection, loading and conflict checks; build the prompt or the report."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    from haversack._policy import ToolPolicy
    from haversack._prompt import Prompt
    from haversack._resources import Binding, ResourceRegistry
    from haversack._section import Section

__all__ = ["Outcome", "compose", "discover", "run"]

ENV_STRICT = "HAVERSACK_STRICT"


def _warn(message: str, *args: object) -> None:
    import logging  # only when there is something to say

    logging.getLogger("haversack.packs").warning(message, *args)


@dataclass(slots=True)
class Outcome:
    """The result of one run: the report plus, when loading, the contributions in order."""

    report: PackReport
    contributions: list[Contribution] = field(default_factory=list)
    bindings: list[Binding[Any]] = field(default_factory=list)
    strict: bool = False
    #: Original tool name -> (pack, where the filter option was given), for messages.
    removed: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(slots=True)
class _Rules:
    """How pack problems are treated in one run."""

    strict: bool
    #: Raise for the user's own mistakes (packs they named, options they gave).
    user_errors: bool
    selection: Selection
    configured: frozenset[str]
    #: Per-pack import budget in seconds (listing commands), ``None`` to wait.
    budget: float | None = None
    #: A project directory for every pack whose options have a ``workspace`` field.
    workspace: str | None = None

    def named(self, candidate: Candidate) -> bool:
        return candidate.name in self.configured or self.selection.names(candidate)

    def fatal(self, candidate: Candidate) -> bool:
        return self.strict or (self.user_errors and self.named(candidate))


def run(
    *,
    load: bool,
    packs: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    config: Mapping[str, Mapping[str, Any]] | None = None,
    strict: bool | None = None,
    config_file: str | Path | None = None,
    caller: object | None = None,
    tokens: bool = False,
    user_errors: bool = False,
    import_budget: float | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> Outcome:
    """Discover, select, check and (when ``load``) import packs and collect contributions.

    Without ``user_errors`` and ``strict`` it never raises for a pack problem: everything
    is in the report (conflicts too). With ``user_errors`` the caller's own mistakes raise:
    a named pack (allowlist or options) that is missing, broken or incompatible, and wrong
    options. ``strict`` raises for every pack. A malformed config file always raises
    :class:`PackConfigError`.
    """
    file = load_config(config_file)
    strict = bool(strict if strict is not None else env_flag(ENV_STRICT) or file.strict)
    tracer = Tracer(env_flag(ENV_TRACE))
    selection = Selection.resolve(
        packs=packs,
        exclude=exclude,
        file_packs=file.packs,
        file_disable=file.disable,
        file_label=file.label,
    )
    candidates = scan()
    problems = selection.unknown(candidates)
    options, option_problems = _options(file, config, candidates)
    problems += option_problems
    if (strict or user_errors) and problems:
        raise PackConfigError(problems[0] + _more(len(problems) - 1))
    rules = _Rules(
        strict,
        user_errors,
        selection,
        frozenset(options),
        import_budget,
        None if workspace is None else os.path.abspath(workspace),
    )
    infos: dict[str, PackInfo] = {}
    conflicts: list[Conflict] = []
    loadable: list[Candidate] = []
    for every in _by_name(candidates):
        group = [c for c in every if not selection.why_not(c)]
        if not group:
            infos[every[0].name] = _info(every[0], "disabled", selection.why_not(every[0]))
            continue
        candidate = group[0]
        if len(group) > 1:
            for other in group[1:]:
                conflicts.append(_pack_conflict(candidate, other))
            for c in group:
                tracer.line(f"{c.name}: claimed by {len(group)} distributions; not loaded")
            infos[candidate.name] = _info(
                candidate, "broken", "pack name claimed by " + " and ".join(c.label for c in group)
            )
            continue
        why = incompatibility(candidate)
        if why:
            if rules.fatal(candidate):
                raise PackLoadError(
                    f"{candidate.label} is incompatible: {why}{_named_hint(rules, candidate)}",
                    pack=candidate.name,
                )
            infos[candidate.name] = _info(candidate, "incompatible", why)
            tracer.line(f"{candidate.name}: incompatible: {why}")
            continue
        if not load:
            infos[candidate.name] = _info(candidate, "not-imported")
            continue
        loadable.append(candidate)
    outcome = Outcome(PackReport(), strict=strict)
    if load:
        _load(outcome, loadable, caller, options, infos, conflicts, tracer, rules, tokens=tokens)
    ordered = sorted(infos.values(), key=lambda i: (not i.builtin, i.name))
    outcome.report = PackReport(tuple(ordered), tuple(conflicts), tuple(problems))
    return outcome


def _more(count: int) -> str:
    if count <= 0:
        return ""
    return f" ({count} more problem{'s' if count > 1 else ''}; `haversack check` lists them.)"


def _named_hint(rules: _Rules, candidate: Candidate) -> str:
    if rules.strict or not rules.named(candidate):
        return ""
    why = (
        "you gave it options"
        if candidate.name in rules.configured and not rules.selection.names(candidate)
        else f"it is named in {rules.selection.allow_source}"
    )
    return f" (an error because {why}; packs nobody named are left out with a warning instead)"


def _import(candidate: Candidate, rules: _Rules, tracer: Tracer) -> object:
    """Import one pack, watched: a notice names it when slow; a budget may give up on it."""
    from ._manager import import_pack
    from ._watch import watching, within

    what = f"importing {candidate.label} (module {candidate.module})"
    tracer.line(f"{candidate.name}: importing {candidate.module}")
    if rules.budget is None:
        with watching(what):
            return import_pack(candidate)
    done, module = within(lambda: import_pack(candidate), what, rules.budget)
    if not done:
        raise _TimedOutError(
            f"{candidate.label}: importing {candidate.module} did not finish within "
            f"{rules.budget:g} s (HAVERSACK_IMPORT_BUDGET); it may hang at import. Leave it "
            f"out (HAVERSACK_DISABLE={candidate.name}) and report it to its authors.",
            pack=candidate.name,
        )
    return module


class _TimedOutError(PackLoadError):
    """A pack's import outlasted the listing budget (reported as ``timed-out``)."""


def _load(
    outcome: Outcome,
    loadable: list[Candidate],
    caller: object | None,
    options: dict[str, PackOptions],
    infos: dict[str, PackInfo],
    conflicts: list[Conflict],
    tracer: Tracer,
    rules: _Rules,
    *,
    tokens: bool,
) -> None:
    from ._manager import new_manager, pending_errors, register
    from ._watch import watching

    pm = new_manager()
    tracer.install(pm)
    order: list[tuple[Contribution, Candidate | None]] = []
    if caller is None:
        from ._caller import CallerContributions

        caller = CallerContributions((), (), ())
    register(pm, caller, CALLER, CALLER)
    order.append((Contribution(CALLER, CALLER, builtin=True), None))
    for candidate in loadable:
        try:
            module = _import(candidate, rules, tracer)
            register(pm, module, candidate.name, candidate.label)
        except PackError as exc:
            _broken(rules, exc, candidate, infos, tracer)
            continue
        order.append((Contribution(candidate.name, candidate.label), candidate))
    for name, message in pending_errors(pm).items():
        for contribution, pending in order:
            if contribution.name == name and pending is not None:
                error = PackLoadError(f"{pending.label} {message}", pack=name)
                _broken(rules, error, pending, infos, tracer)
    done: list[Contribution] = []
    for contribution, source in order:
        if source is not None and source.name in infos:
            continue  # broken while importing or registering
        pack_options = options.get(contribution.name, PackOptions())
        try:
            with watching(f"running the hooks of {contribution.label}"):
                collect(pm, contribution, pack_options, tracer, workspace=rules.workspace)
            removed = _filter(contribution, pack_options)
            apply_names(contribution, pack_options)
            check_internal(contribution)
        except PackError as exc:
            if source is None:
                raise
            if isinstance(exc, PackConfigError) and pack_options.source != "defaults":
                _misconfigured(rules, exc, source, infos, tracer)
            else:
                _broken(rules, exc, source, infos, tracer)
            continue
        for tool in removed:
            outcome.removed[tool.original_name] = (contribution.name, pack_options.source)
        done.append(contribution)
        infos[contribution.name] = _loaded(source, contribution, removed, tokens=tokens)
    bindings, resource_conflicts = resolve_bindings(done)
    conflicts.extend(find_conflicts(done))
    conflicts.extend(resource_conflicts)
    outcome.contributions = done
    outcome.bindings = bindings


def _filter(contribution: Contribution, options: PackOptions) -> list[Any]:
    if options.tools is None and not options.exclude_tools:
        return []
    from ._filter import filter_tools  # only when a pack's tools are filtered

    return filter_tools(contribution, options)


def _broken(
    rules: _Rules, exc: PackError, candidate: Candidate, infos: dict[str, PackInfo], tracer: Tracer
) -> None:
    timed_out = isinstance(exc, _TimedOutError)
    tracer.line(f"{candidate.name}: {'timed out' if timed_out else 'broken'}: {exc}")
    if rules.fatal(candidate):
        hint = _named_hint(rules, candidate)
        if hint:
            raise PackLoadError(f"{exc}{hint}", pack=candidate.name) from exc
        raise exc
    reason = str(exc).removeprefix(candidate.label).lstrip(": ")
    infos[candidate.name] = _info(candidate, "timed-out" if timed_out else "broken", reason)


def _misconfigured(
    rules: _Rules,
    exc: PackConfigError,
    candidate: Candidate,
    infos: dict[str, PackInfo],
    tracer: Tracer,
) -> None:
    """The options the user gave a pack are wrong: always their error when composing."""
    tracer.line(f"{candidate.name}: misconfigured: {exc}")
    if rules.strict or rules.user_errors:
        raise exc
    infos[candidate.name] = _info(candidate, "misconfigured", str(exc))


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


# ---------------------------------------------------------------------- public entry points
def discover(
    *,
    load: bool = False,
    packs: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    config: Mapping[str, Mapping[str, Any]] | None = None,
    config_file: str | Path | None = None,
    import_budget: float | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> PackReport:
    """List installed packs; with ``load=True`` also import them and report contributions.

    Without ``load`` no pack module is imported: statuses are ``not-imported``, ``disabled``
    or ``incompatible`` (decided from metadata). With ``load``, packs run their hooks (with
    their configuration) and the report adds ``loaded``/``broken``/``misconfigured``
    statuses, the names each pack contributes, token estimates (and the tokens saved by
    ``tools``/``exclude_tools``) and cross-pack conflicts. Never raises for a pack's
    problem: everything is in the report. ``import_budget`` (seconds) stops waiting for a
    pack whose import has not returned by then and reports it ``timed-out``. ``workspace``
    is as for :func:`compose`.
    """
    return run(
        load=load,
        packs=packs,
        exclude=exclude,
        config=config,
        config_file=config_file,
        strict=False,
        tokens=load,
        import_budget=import_budget,
        workspace=workspace,
    ).report


def compose(
    *,
    ns: str,
    key: str,
    sections: Sequence[Section[Any]] = (),
    packs: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    config: Mapping[str, Mapping[str, Any]] | None = None,
    strict: bool | None = None,
    config_file: str | Path | None = None,
    policies: Sequence[ToolPolicy] = (),
    resources: ResourceRegistry | Mapping[type, object] | None = None,
    import_budget: float | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> Prompt:
    """Build a :class:`~haversack.Prompt` from your sections plus every selected pack.

    Order: your ``sections``, then each pack's sections in pack-name order, each pack's loose
    tools in a section keyed by the pack name right after its own sections. ``policies``
    and packs' prompt-wide policies govern every tool. Resource bindings are merged: a
    ``default=True`` binding gives way to a non-default one (yours or a pack's).

    Names are unique across every contributor (you are ``"your code"``): section keys, tool
    names, policy names, resource types and pack names. A clash raises
    :class:`~haversack.NameConflictError` naming both contributors and a fix.

    Your own mistakes raise: a pack you named (``packs=``, ``HAVERSACK_PACKS``, the config
    file's ``packs`` list, or options you gave it) that is missing (with the closest
    installed name), broken or incompatible raises :class:`~haversack.errors.PackLoadError`
    or :class:`~haversack.errors.PackConfigError`; wrong options (an unknown option, a wrong
    type, a ``tools``/``exclude_tools`` pattern matching no tool, text naming a tool those
    options removed) raise :class:`~haversack.errors.PackConfigError` naming the pack, the
    option and the valid ones. A pack nobody named that fails to import, raises, registers
    garbage or is incompatible is left out and logged (``haversack.packs`` logger); with
    ``strict=True`` (or ``HAVERSACK_STRICT=1``) it raises too. ``import_budget`` (seconds)
    gives up on a pack whose import has not returned by then (as a broken pack).

    ``workspace`` is a project directory for the file tools (and a sandbox) to work on for
    real: it becomes the ``workspace`` option of every loaded pack whose options have such a
    field (over what a config file says), so the core needs to know no pack by name.
    """
    from haversack._prompt import Prompt
    from haversack._resources import ResourceRegistry

    from ._caller import CallerContributions

    caller = CallerContributions(sections, policies, _caller_bindings(resources))
    outcome = run(
        load=True,
        packs=packs,
        exclude=exclude,
        config=config,
        strict=strict,
        config_file=config_file,
        caller=caller,
        user_errors=True,
        import_budget=import_budget,
        workspace=workspace,
    )
    for info in outcome.report.packs:
        if info.status in FAILED:
            _warn("haversack: left out %s (%s): %s", info.label, info.status, info.reason)
    raise_conflicts(outcome.report)
    prompt_sections: list[Section[Any]] = []
    prompt_policies: list[ToolPolicy] = []
    for c in outcome.contributions:
        prompt_sections.extend(c.sections)
        if c.tools:
            prompt_sections.append(_loose_section(c))
        prompt_policies.extend(c.policies)
    try:
        return Prompt(
            ns=ns,
            key=key,
            sections=prompt_sections,
            policies=prompt_policies,
            resources=ResourceRegistry.of(*outcome.bindings),
        )
    except PromptValidationError as exc:
        removed = outcome.removed.get(exc.tool_name or "")
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


def _loose_section(c: Contribution) -> Section[Any]:
    from haversack._section import Section

    return Section(title=f"Tools from {c.name}", key=loose_section_key(c.name), tools=c.tools)


def _caller_bindings(resources: object) -> list[Binding[Any]]:
    from haversack._resources import Binding, ResourceRegistry

    if resources is None:
        return []
    if isinstance(resources, ResourceRegistry):
        return list(resources.bindings)
    if isinstance(resources, Mapping):
        return [
            value if isinstance(value, Binding) else Binding.instance(tp, value)
            for tp, value in resources.items()
        ]
    raise TypeError(
        f"resources must be a ResourceRegistry or a mapping of type to instance, got "
        f"{type(resources).__qualname__}."
    )
