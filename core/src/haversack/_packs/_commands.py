"""Sub-commands that packs add to the ``haversack`` command line (``register_commands``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from haversack.errors import PackLoadError

if TYPE_CHECKING:
    import argparse

__all__ = ["COMMAND_HOOKS", "PackCommand", "pack_commands"]

#: Hooks the command line calls (never ``compose``).
COMMAND_HOOKS: tuple[str, ...] = ("register_commands",)


@dataclass(frozen=True, slots=True)
class PackCommand:
    """A command a pack registered: its name, help line, argument hook, runner and pack."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    pack: str


def pack_commands(
    *, reserved: Collection[str], warn: Callable[[str], None]
) -> dict[str, PackCommand]:
    """Every installed pack's commands by name, packs in name order.

    A pack that fails to import or whose hook raises is reported through ``warn`` and left
    out (nobody named it); so is a command whose name is ``reserved`` (a core command) or
    already taken by another pack.
    """
    from ._discovery import scan
    from ._manager import import_pack, new_manager, register

    pm = new_manager()
    commands: dict[str, PackCommand] = {}
    for candidate in scan():
        try:
            register(pm, import_pack(candidate), candidate.name, candidate.label)
        except PackLoadError as exc:
            warn(str(exc))
            continue
        for impl in pm.hook.register_commands.get_hookimpls():
            if impl.plugin_name != candidate.name:
                continue
            adder = _Adder(candidate.label, candidate.name, reserved, commands, warn)
            try:
                impl.function(**dict.fromkeys(impl.argnames, adder))
            except Exception as exc:  # noqa: BLE001 - a broken pack nobody named is reported
                warn(f"{candidate.label}: register_commands raised {type(exc).__name__}: {exc}")
    return commands


class _Adder:
    """The ``register`` callback one pack's ``register_commands`` receives."""

    __slots__ = ("_commands", "_label", "_pack", "_reserved", "_warn")

    def __init__(
        self,
        label: str,
        pack: str,
        reserved: Collection[str],
        commands: dict[str, PackCommand],
        warn: Callable[[str], None],
    ) -> None:
        self._label, self._pack, self._reserved = label, pack, reserved
        self._commands, self._warn = commands, warn

    def __call__(self, name: str, *, help: str, add_arguments: Any, run: Any) -> None:
        if not isinstance(name, str) or not name or name.startswith("-"):
            self._warn(f"{self._label} registered a command with an invalid name {name!r}.")
            return
        if not callable(add_arguments) or not callable(run):
            self._warn(f"{self._label}: command {name!r} needs callable add_arguments and run.")
            return
        if name in self._reserved:
            self._warn(f"{self._label} registers command {name!r}, a core command; left out.")
            return
        taken = self._commands.get(name)
        if taken is not None:
            self._warn(
                f"{self._label} registers command {name!r}, already registered by pack "
                f"{taken.pack!r}; left out."
            )
            return
        self._commands[name] = PackCommand(name, str(help), add_arguments, run, self._pack)
