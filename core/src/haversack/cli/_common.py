"""Options every command shares (pack selection, strictness, config file) and composing."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from haversack._prompt import Prompt

__all__ = ["NS", "add_common", "compose_from", "selection_kwargs", "workspace_config"]

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
    group.add_argument("--config", metavar="FILE", help="pyproject.toml or haversack.toml to read")
    group.add_argument(
        "--workspace",
        metavar="DIR",
        help="let the file tools (and the sandbox) work on this project directory for real",
    )


if TYPE_CHECKING:
    # Only for type checking: a TypedDict class costs a millisecond at start-up.
    class SelectionKwargs(TypedDict):
        """The keyword arguments of ``compose``/``discover`` the common options map to."""

        packs: list[str] | None
        exclude: tuple[str, ...]
        config_file: str | None
        config: dict[str, dict[str, str]] | None


def selection_kwargs(args: argparse.Namespace) -> SelectionKwargs:
    """The keyword arguments of ``compose``/``discover`` the common options map to."""
    return {
        "packs": args.packs,
        "exclude": tuple(args.disable),
        "config_file": args.config,
        "config": workspace_config(args),
    }


def workspace_config(args: argparse.Namespace) -> dict[str, dict[str, str]] | None:
    """``--workspace DIR`` as the ``workspace`` option of each installed pack that has one."""
    directory = getattr(args, "workspace", None)
    if directory is None:
        return None
    from importlib.metadata import entry_points
    from pathlib import Path

    installed = {ep.name for ep in entry_points(group="haversack")}
    path = str(Path(directory).absolute())
    return {name: {"workspace": path} for name in _WORKSPACE_PACKS if name in installed}


#: Packs with a ``workspace`` option (a directory the file tools and the sandbox work on).
_WORKSPACE_PACKS = ("vfs", "podman")


def compose_from(args: argparse.Namespace) -> Prompt:
    """Compose the prompt the common options describe."""
    from haversack._packs import compose

    return compose(ns=NS, key=KEY, strict=args.strict, **selection_kwargs(args))
