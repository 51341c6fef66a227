"""The hooks a tool pack implements, and the ``hookimpl`` marker to implement them with.

A pack is a distribution with an entry point in the ``haversack`` group whose module
holds hook implementations::

    # pyproject.toml
    [project.entry-points.haversack]
    mypack = "mypack.plugin"

    # mypack/plugin.py
    import haversack

    @haversack.hookimpl
    def register_tools(register, config):
        register(my_tool)

How the core calls these hooks (this is different from plain pluggy fan-out): every
registration hook is called **once per pack**, with that pack's own ``config``, so the
core knows which pack contributed what and can report a clash naming both packs. An
implementation may leave out parameters it does not use (``def register_tools(register)``).
Packs are called in order of pack name; within a pack, contributions keep the order in
which ``register`` was called. The ``register`` callbacks validate what they receive and
raise :class:`haversack.errors.PackLoadError` naming the pack on a wrong type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ._bindings import Binding
    from ._policy import ToolPolicy
    from ._section import Section
    from ._tool import Tool

__all__ = [
    "PROJECT",
    "config_type",
    "hookimpl",
    "hookspec",
    "register_commands",
    "register_policies",
    "register_resources",
    "register_sections",
    "register_tools",
]

#: The pluggy project name and the entry-point group of packs.
PROJECT = "haversack"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Mark a pack's hook implementations with ``@haversack.hookimpl``.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def config_type() -> type[Any] | None:
    """Return the dataclass describing this pack's configuration options.

    Called once per pack, before any registration hook. The options a user gives for the
    pack (``compose(config={"mypack": {...}})``, or ``[tool.haversack.packs.mypack]`` in
    ``pyproject.toml`` / ``haversack.toml``) are parsed strictly into this dataclass: unknown
    keys and wrong types are rejected with a message naming the pack and the field. The
    instance is then passed as ``config`` to the registration hooks. Every field needs a
    default, so a pack works without configuration.

    Return ``None`` (or do not implement the hook) when the pack has no options; the
    registration hooks then receive ``config=None``, and any options given for the pack are
    rejected as unknown.
    """


@hookspec
def register_sections(register: Callable[[Section[Any]], None], config: Any) -> None:
    """Contribute prompt sections by calling ``register(section)`` for each.

    A section may carry tools, child sections and policies; the policies govern that
    section's tools. Called once per pack with the pack's parsed ``config`` (or ``None``).
    Pack sections follow the caller's own sections in the composed prompt, packs in name
    order. Section keys, tool names and policy names must be unique across the whole
    composed prompt; a clash raises :class:`haversack.NameConflictError` naming both
    contributors. The return value is ignored.
    """


@hookspec
def register_tools(register: Callable[[Tool[Any, Any]], None], config: Any) -> None:
    """Contribute loose tools (tools without a section of their own) via ``register(tool)``.

    The core gathers a pack's loose tools into one section keyed by the pack name, placed
    after the pack's own sections, so every tool still sits in the section tree. Called
    once per pack with the pack's parsed ``config``. The return value is ignored.
    """


@hookspec
def register_policies(register: Callable[[ToolPolicy], None], config: Any) -> None:
    """Contribute prompt-wide policies (governing every tool) via ``register(policy)``.

    Policies that should govern only a pack's own tools belong on its sections instead.
    Policy names must be unique across the composed prompt. Called once per pack with the
    pack's parsed ``config``. The return value is ignored.
    """


@hookspec
def register_resources(register: Callable[[Binding[Any]], None], config: Any) -> None:
    """Contribute resource bindings via ``register(binding)``.

    A binding marked ``default=True`` gives way to a non-default binding of the same type
    from another pack or from the caller: this is how the VFS pack offers an in-memory
    workspace ``Filesystem`` that the Podman pack replaces with its sandbox workspace. Two
    non-default bindings of one type are a conflict, reported with both packs. Called once
    per pack with the pack's parsed ``config``. The return value is ignored.
    """


@hookspec
def register_commands(
    register: Callable[..., None],
) -> None:
    """Add sub-commands to the ``haversack`` command line by calling
    ``register(name, help=..., add_arguments=..., run=...)`` for each.

    ``add_arguments(parser: argparse.ArgumentParser)`` adds the command's own options (every
    command also gets the shared pack-selection options: see
    :func:`haversack.cli.selection_kwargs`), and ``run(args: argparse.Namespace) -> int`` runs
    it and returns the exit status. Import
    what the command needs inside ``run``: this hook is called only when the command line
    names a command the core does not have (or asks for ``--help``), and then for every
    installed pack, so it must stay cheap. A name the core already uses, or that another pack
    registered first, is refused with a warning naming both. Not called by ``compose``: a pack
    may contribute only commands. The return value is ignored.
    """
