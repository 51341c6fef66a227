"""Check that every distribution in the repository carries the version in the root VERSION file.

Run ``python scripts/check_versions.py``; it exits 1 and names each disagreeing file. Checks:

* ``project.version`` of the root, ``core/``, every ``plugins/*/`` and ``examples/*/``
  ``pyproject.toml``;
* every dependency on one of the repository's own distributions (``haversack==``,
  ``haversack-vfs==``, ...) must be pinned with ``==<VERSION>``;
* a literal ``__version__ = "..."`` in a package ``__init__.py``, if there is one.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)"
)
_LITERAL_VERSION = re.compile(
    r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE
)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_files(root: Path) -> list[Path]:
    """The ``pyproject.toml`` files whose version must equal VERSION (root, core, every pack,
    every example distribution)."""
    files = [root / "pyproject.toml", root / "core" / "pyproject.toml"]
    files += sorted((root / "plugins").glob("*/pyproject.toml"))
    files += sorted((root / "examples").glob("*/pyproject.toml"))
    return [f for f in files if f.is_file()]


def check(root: Path) -> list[str]:
    """Return one message per disagreement found under ``root``; an empty list means all agree."""
    version_file = root / "VERSION"
    if not version_file.is_file():
        return [f"{version_file}: missing; it is the single source of the version"]
    version = version_file.read_text(encoding="utf-8").strip()
    if not version:
        return [f"{version_file}: empty; write the version (e.g. 0.1.0) in it"]

    problems: list[str] = []
    projects: dict[Path, dict[str, Any]] = {}
    for path in pyproject_files(root):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            problems.append(f"{path.relative_to(root)}: not valid TOML ({exc})")
            continue
        project = data.get("project", {})
        projects[path] = project
        found = project.get("version")
        if found != version:
            problems.append(
                f"{path.relative_to(root)}: project.version is {found!r} but VERSION says "
                f"{version!r}; set it to {version!r}"
            )

    own = {
        _normalize(str(p.get("name", "")))
        for path, p in projects.items()
        if path != root / "pyproject.toml"
    }
    for path, project in projects.items():
        requirements = list(project.get("dependencies", []) or [])
        extras = project.get("optional-dependencies", {}) or {}
        for group in extras.values():
            requirements.extend(group)
        for requirement in requirements:
            match = _REQUIREMENT.match(str(requirement))
            if match is None or _normalize(match["name"]) not in own:
                continue
            spec = match["spec"].replace(" ", "")
            if spec != f"=={version}":
                problems.append(
                    f"{path.relative_to(root)}: dependency {requirement!r} must pin "
                    f"{match['name']}=={version} (the VERSION file)"
                )

    for init in sorted(root.glob("core/src/*/__init__.py")) + sorted(
        root.glob("plugins/*/src/*/__init__.py")
    ):
        literal = _LITERAL_VERSION.search(init.read_text(encoding="utf-8"))
        if literal and literal[1] != version:
            problems.append(
                f"{init.relative_to(root)}: __version__ is {literal[1]!r} but VERSION says "
                f"{version!r}; set it or read it from importlib.metadata"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check the repository containing this script (or the directory given); 0 when consistent."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    problems = check(root)
    if problems:
        print(f"version check failed ({len(problems)} problem(s)):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    version = (root / "VERSION").read_text(encoding="utf-8").strip()
    print(f"versions agree: {version} ({len(pyproject_files(root))} pyproject.toml files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
