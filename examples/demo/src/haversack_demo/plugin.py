"""Hook implementations of the demo (entry point ``demo``): the ``haversack demo`` command."""

from __future__ import annotations

from collections.abc import Callable

import haversack


@haversack.hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``haversack demo``: a scripted session through the installed packs."""
    from . import cli

    register("demo", help=cli.HELP, add_arguments=cli.add_arguments, run=cli.run)
