"""Command line: ``python -m haversack_podman build-images [--force] | cleanup [--all]``."""

from __future__ import annotations

import argparse
import sys

from ._cleanup import cleanup
from ._errors import SandboxError
from ._images import build_images


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m haversack_podman")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build-images", help="build the offline sandbox images")
    build.add_argument("--force", action="store_true", help="rebuild images that exist")
    build.add_argument("--no-python", action="store_true", help="only the busybox image")
    clean = sub.add_parser("cleanup", help="remove leftover sandbox containers and workspaces")
    clean.add_argument(
        "--all",
        action="store_true",
        help="also remove sandboxes of processes that are still running",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "build-images":
            for result in build_images(force=args.force, python=not args.no_python):
                state = f"built in {result.seconds:.1f} s" if result.built else "exists"
                print(f"{result.name}: {state} ({result.size_bytes / 1e6:.1f} MB)")
        else:
            report = cleanup(include_live=args.all)
            print(
                f"removed {report.containers} container(s), {report.directories} "
                f"directory(ies), {report.services} orphaned service(s)"
            )
    except SandboxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
