"""``haversack demo``: a scripted model drives the installed packs through the executor."""

from __future__ import annotations

import argparse
import json
import sys

from haversack.cli import selection_kwargs

HELP = "play a scripted session (plan, edit files, run commands) with the installed packs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json``, ``--no-sandbox``, ``--color`` and ``--full-prompt``."""
    parser.add_argument(
        "--json", action="store_true", help="print the transcript as JSON at the end"
    )
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="skip the Podman part (the podman pack is left out)",
    )
    parser.add_argument("--color", action="store_true", help="colour the terminal output")
    parser.add_argument(
        "--full-prompt", action="store_true", help="print the whole prompt text, not its start"
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every step behaved as scripted (scripted denials and failures included),
    1 when any did not."""
    from haversack_demo import SCENARIO, DemoOptions, TextPrinter, run_scenario

    selection = selection_kwargs(args)
    options = DemoOptions(
        packs=selection["packs"],
        exclude=selection["exclude"],
        config_file=selection["config_file"],
        strict=args.strict,
        sandbox=args.sandbox,
    )
    if args.json:
        transcript = run_scenario(SCENARIO, options)
        print(json.dumps(transcript.as_dict(), indent=2))
    else:
        printer = TextPrinter(
            sys.stdout, color=args.color, prompt_lines=None if args.full_prompt else 14
        )
        transcript = run_scenario(SCENARIO, options, on_ready=printer.ready, on_step=printer.step)
        printer.summary(transcript)
    return 0 if transcript.ok else 1
