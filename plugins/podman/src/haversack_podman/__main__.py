"""Command line: ``python -m haversack_podman setup | build-images | cleanup``."""

from __future__ import annotations

import argparse
import sys

from ._cleanup import cleanup
from ._errors import SandboxError
from ._images import build_images

#: The host set-up script shipped in this package (Debian/Ubuntu, apt-get, run as root).
SETUP_SCRIPT = "install-podman.sh"


def setup_script() -> str:
    """The text of the set-up script shipped with the pack."""
    from importlib.resources import files

    return files("haversack_podman").joinpath(SETUP_SCRIPT).read_text(encoding="utf-8")


def _setup(*, images: bool, print_script: bool) -> int:
    import os
    import subprocess

    if print_script:
        print(setup_script(), end="")
        return 0
    if os.geteuid() != 0:
        print(
            "error: the set-up installs packages with apt-get and uses rootful Podman: run it "
            f"as root: sudo {sys.executable} -m haversack_podman setup "
            "(--print-script shows what it runs)",
            file=sys.stderr,
        )
        return 1
    # bash reads the script from stdin: it needs no file of its own, wherever the pack lives.
    done = subprocess.run(["bash", "-s"], input=setup_script(), text=True, check=False)
    if done.returncode != 0:
        return done.returncode
    if images:
        _print_images(build_images())
    return 0


def _print_images(results: object) -> None:
    for result in results:  # type: ignore[attr-defined]
        state = f"built in {result.seconds:.1f} s" if result.built else "exists"
        print(f"{result.name}: {state} ({result.size_bytes / 1e6:.1f} MB)")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m haversack_podman")
    sub = parser.add_subparsers(dest="command", required=True)
    setup = sub.add_parser(
        "setup",
        help="install Podman and the sandbox's host packages (Debian/Ubuntu, as root), then "
        "build the sandbox images",
    )
    setup.add_argument("--no-images", action="store_true", help="do not build the images")
    setup.add_argument(
        "--print-script", action="store_true", help="print the set-up script and do nothing"
    )
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
        if args.command == "setup":
            return _setup(images=not args.no_images, print_script=args.print_script)
        if args.command == "build-images":
            _print_images(build_images(force=args.force, python=not args.no_python))
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
