"""Options every command shares (pack selection, strictness, config file) and composing."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from haversack._policy import ToolPolicy
    from haversack._prompt import Prompt

__all__ = [
    "NS",
    "add_ask",
    "add_common",
    "add_defer",
    "approval_policies",
    "compose_from",
    "require_resources",
    "selection_kwargs",
]

#: The namespace and key of the prompt the CLI composes.
NS, KEY = "haversack", "cli"


def add_common(parser: argparse.ArgumentParser) -> None:
    """``--pack/-p`` (repeatable allowlist), ``--disable``, ``--strict``, ``--config``,
    ``--workspace``."""
    group = parser.add_argument_group("pack selection")
    group.add_argument(
        "-p",
        "--pack",
        action="append",
        dest="packs",
        metavar="NAME",
        help="load only this pack (repeatable; overrides HAVERSACK_PACKS)",
    )
    group.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="NAME",
        help="leave this pack out (repeatable; '*' for all)",
    )
    group.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="fail on a broken or incompatible pack instead of leaving it out",
    )
    group.add_argument(
        "--config",
        metavar="FILE",
        help="pyproject.toml or haversack.toml to read (default: $HAVERSACK_CONFIG, else the "
        "nearest one from the working directory up); relative paths in it are relative to it",
    )
    group.add_argument(
        "--workspace",
        metavar="DIR",
        help="let the file tools (and the sandbox) work on this project directory for real",
    )


def add_defer(parser: argparse.ArgumentParser) -> None:
    """``--defer NAME`` (repeatable): a pack listed in one line, loaded when the model asks."""
    parser.add_argument(
        "--defer",
        action="append",
        default=[],
        metavar="NAME",
        help="compose this pack but only list it in one line; the model loads it with the "
        "load_pack tool when it needs it (repeatable)",
    )


if TYPE_CHECKING:
    # Only for type checking: a TypedDict class costs a millisecond at start-up.
    class SelectionKwargs(TypedDict):
        """The keyword arguments of ``compose``/``discover`` the common options map to."""

        packs: list[str] | None
        exclude: tuple[str, ...]
        config_file: str | None
        workspace: str | None


def selection_kwargs(args: argparse.Namespace) -> SelectionKwargs:
    """The keyword arguments of ``compose``/``discover`` the common options map to."""
    return {
        "packs": args.packs,
        "exclude": tuple(args.disable),
        "config_file": args.config,
        "workspace": getattr(args, "workspace", None),
    }


def compose_from(
    args: argparse.Namespace,
    *,
    import_budget: float | None = None,
    policies: Sequence[ToolPolicy] = (),
) -> Prompt:
    """Compose the prompt the common options describe, governed by ``policies`` too.

    ``import_budget`` (seconds) is for listing commands: a pack whose import has not
    returned by then is left out (or, if named, an error) instead of waited for.
    """
    from haversack._packs import compose

    return compose(
        ns=NS,
        key=KEY,
        strict=args.strict,
        import_budget=import_budget,
        policies=policies,
        deferred=tuple(getattr(args, "defer", ())),
        **selection_kwargs(args),
    )


def add_ask(parser: argparse.ArgumentParser) -> None:
    """``--ask GLOB`` (repeatable) and ``--ask-writes``: which tools need a person's approval."""
    parser.add_argument(
        "--ask",
        action="append",
        default=[],
        metavar="GLOB",
        help="ask before running tools whose name matches (repeatable)",
    )
    parser.add_argument(
        "--ask-writes", action="store_true", help="ask before running any tool not read-only"
    )


def approval_policies(args: argparse.Namespace) -> list[ToolPolicy]:
    """The :class:`~haversack.ApprovalPolicy` ``--ask``/``--ask-writes`` ask for, if any.

    A pattern that matches no tool is refused when the prompt is rendered (the policy
    declares its patterns), so a typo never leaves a tool unguarded.
    """
    if not (args.ask or args.ask_writes):
        return []
    from haversack._approval import ApprovalPolicy

    return [ApprovalPolicy(args.ask, not_read_only=args.ask_writes)]


def require_resources(prompt: Prompt) -> None:
    """Open (and close) every resource of ``prompt``; raise one line per failure.

    For long-running commands (``serve``) to fail at start-up, with the cause and the fix,
    instead of when the first client calls a tool. Raises
    :class:`~haversack.errors.ResourceError` whose message is one line per resource.
    """
    from haversack.cli._resources import check_resources
    from haversack.errors import ResourceError

    problems = check_resources(prompt)
    if problems:
        raise ResourceError("; ".join(p.line for p in problems))
