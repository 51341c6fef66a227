"""``discover()`` and ``compose()``: the pack pipeline's public entry points."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._loader import PackLoader
from ._report import PackReport

if TYPE_CHECKING:
    from haversack._bindings import ResourceRegistry
    from haversack._policy import ToolPolicy
    from haversack._prompt import Prompt
    from haversack._section import Section

__all__ = ["compose", "discover"]


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
    loader = PackLoader(
        packs=packs,
        exclude=exclude,
        config=config,
        config_file=config_file,
        strict=False,
        tokens=load,
        import_budget=import_budget,
        workspace=workspace,
    )
    loader.discover()
    loader.select(load=load)
    if load:
        loader.load()
        loader.check()
    return loader.report()


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
    deferred: Sequence[str] = (),
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

    ``deferred`` names installed packs to load later: they are imported and checked now
    (their names against everyone's, so a later load cannot clash) and their resources
    bound, but their sections and tools stay out of the prompt. It lists them one line
    each instead, with the core's ``load_pack`` tool; :meth:`ToolExecutor.load_pack`
    (which that tool calls) adds one to a running executor. A deferred pack that is not
    installed or cannot be loaded raises.
    """
    from haversack._bindings import as_registry

    from ._caller import CallerContributions

    bindings = () if resources is None else as_registry(resources).bindings
    caller = CallerContributions(sections, policies, bindings)
    loader = PackLoader(
        packs=packs,
        exclude=exclude,
        config=config,
        strict=strict,
        config_file=config_file,
        user_errors=True,
        import_budget=import_budget,
        workspace=workspace,
        deferred=deferred,
    )
    loader.discover()
    loader.select(load=True)
    loader.load(caller)
    loader.check()
    return loader.compose(ns=ns, key=key)
