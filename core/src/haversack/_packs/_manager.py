"""The pluggy manager: specs, built-ins, pack modules, and misspelled-hook detection."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pluggy

from haversack import hookspecs
from haversack.errors import PackLoadError

from ._contribution import HOOKS
from ._discovery import Candidate

__all__ = ["HOOKS", "import_pack", "new_manager", "pending_errors", "register"]


def new_manager() -> pluggy.PluginManager:
    """A manager holding the hook specs and nothing else."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def import_pack(candidate: Candidate) -> ModuleType | Any:
    """Import the pack's entry-point object; any failure becomes ``PackLoadError``."""
    try:
        return candidate.entry_point.load()
    except Exception as exc:
        raise PackLoadError(
            f"{candidate.label} failed to import {candidate.module}: {type(exc).__name__}: {exc}",
            pack=candidate.name,
        ) from exc


def register(pm: pluggy.PluginManager, plugin: object, name: str, label: str) -> None:
    """Register ``plugin`` under ``name``; pluggy's validation errors become ``PackLoadError``."""
    try:
        pm.register(plugin, name=name)
    except (pluggy.PluginValidationError, ValueError) as exc:
        raise PackLoadError(f"{label} cannot be registered: {exc}", pack=name) from exc
    for impl in _impls_of(pm, name):
        if impl.wrapper or impl.hookwrapper:
            pm.unregister(name=name)
            raise PackLoadError(
                f"{label} implements {impl.function.__name__} as a hook wrapper; haversack "
                "calls each pack's hooks directly, so wrappers are not supported.",
                pack=name,
            )


def _impls_of(pm: pluggy.PluginManager, name: str) -> Iterable[Any]:
    plugin = pm.get_plugin(name)
    for caller in pm.get_hookcallers(plugin) or ():
        for impl in caller.get_hookimpls():
            if impl.plugin_name == name:
                yield impl


def pending_errors(pm: pluggy.PluginManager) -> dict[str, str]:
    """Hook implementations that match no spec (typos), by plugin name, and unregister those.

    Uses ``check_pending()`` and adds a "did you mean" from the real hook names.
    """
    errors: dict[str, str] = {}
    while True:
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            import difflib  # only for a typo's "did you mean"

            from ._commands import COMMAND_HOOKS  # its PackCommand is for the commands only

            name = pm.get_name(exc.plugin) or repr(exc.plugin)
            bad = _unknown_hooks(pm, name)
            hints = []
            for hook in bad:
                close = difflib.get_close_matches(hook, (*HOOKS, *COMMAND_HOOKS), n=1)
                hints.append(f"{hook!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            errors[name] = (
                f"implements unknown hook {', '.join(hints)}; the hooks are: "
                f"{', '.join((*HOOKS, *COMMAND_HOOKS))}."
            )
            pm.unregister(exc.plugin)
        else:
            return errors


def _unknown_hooks(pm: pluggy.PluginManager, name: str) -> list[str]:
    plugin = pm.get_plugin(name)
    return sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or ()
        if not caller.has_spec() and not all(i.optionalhook for i in caller.get_hookimpls())
    )
