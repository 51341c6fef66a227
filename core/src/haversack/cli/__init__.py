"""The ``haversack`` command: inspect, render, check and call composed tool packs.

Each sub-command is one module of this package listed in :data:`COMMANDS`; adding a
command is adding a module with ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

from ._main import COMMANDS, main

__all__ = ["COMMANDS", "main"]
