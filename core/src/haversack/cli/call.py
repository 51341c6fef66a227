"""``haversack call TOOL [ARGS_JSON]``: run one tool call through the executor."""

from __future__ import annotations

import argparse

from haversack.cli._common import compose_from
from haversack.cli._terminal import printable

HELP = "call one tool of the composed prompt and print its result"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``TOOL`` and the optional JSON ``ARGS_JSON`` (default ``{}``)."""
    parser.add_argument("tool", metavar="TOOL", help="the tool name")
    parser.add_argument(
        "arguments", metavar="ARGS_JSON", nargs="?", default="{}", help="JSON object of arguments"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 on a successful result, 1 on a failed one (the result text is printed)."""
    from haversack._executor import ToolExecutor
    from haversack._packs._watch import budget_from_env
    from haversack._session import Session
    from haversack.cli._resources import resource_error_line
    from haversack.errors import ResourceError

    # A pack nobody named whose import never returns is left out after the budget (and named
    # on stderr), as for the listing commands; one the user named is an error.
    rendered = compose_from(args, import_budget=budget_from_env()).render()
    try:
        executor = ToolExecutor(rendered, session=Session())
    except ResourceError as exc:
        # The chain (binding, factory, cause) is for HAVERSACK_DEBUG=1; the user needs the cause.
        raise ResourceError(resource_error_line(exc)) from exc
    with executor:
        result = executor.execute(args.tool, args.arguments)
    print(printable(result.render()))
    return 0 if result.success else 1
