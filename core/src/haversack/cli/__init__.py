"""The ``haversack`` command: inspect, render, check and call composed tool packs.

Each sub-command is one module of this package listed in :data:`COMMANDS`; adding a
command is adding a module with ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
Packs add commands of their own through the ``register_commands`` hook; their ``run`` gets
the shared pack-selection options, which :func:`selection_kwargs` turns into the keyword
arguments of ``compose``/``discover``.
"""

from __future__ import annotations

from ._common import selection_kwargs
from ._main import COMMANDS, main

__all__ = ["COMMANDS", "main", "selection_kwargs"]
