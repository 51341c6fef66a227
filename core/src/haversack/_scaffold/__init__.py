"""``haversack new-pack``: write a ready-to-publish pack project from the bundled templates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

__all__ = ["PackNames", "ScaffoldError", "core_requirement", "pack_names", "scaffold"]

_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
_MAX_NAME = 32  # leaves room for the tool-name suffix within the 64-character limit
_SUFFIX = ".tmpl"


class ScaffoldError(ValueError):
    """The pack name is invalid or the target directory cannot be used."""


@dataclass(frozen=True, slots=True)
class PackNames:
    """Every spelling of one pack name: ``my-pack`` is imported as ``haversack_my_pack``."""

    pack: str
    snake: str
    distribution: str
    import_name: str
    class_prefix: str
    title: str


def pack_names(name: str) -> PackNames:
    """Validate ``name`` and derive the distribution, import and class names from it."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > _MAX_NAME:
        raise ScaffoldError(
            f"Invalid pack name {name!r}: use 1-{_MAX_NAME} lowercase ASCII letters and digits, "
            "starting with a letter, with single '-' or '_' between words (e.g. 'weather', "
            "'issue-tracker')."
        )
    if name.startswith("haversack"):
        raise ScaffoldError(
            f"Invalid pack name {name!r}: leave out the 'haversack' prefix; the distribution "
            f"is named haversack-<name> for you (try {name.removeprefix('haversack')[1:]!r})."
        )
    snake = name.replace("-", "_")
    words = snake.split("_")
    return PackNames(
        pack=name,
        snake=snake,
        distribution=f"haversack-{name.replace('_', '-')}",
        import_name=f"haversack_{snake}",
        class_prefix="".join(w.capitalize() for w in words),
        title=" ".join(words).capitalize(),
    )


def core_requirement(version: str | None = None) -> str:
    """``haversack>=X.Y,<X.(Y+1)`` for the installed core (or ``version``)."""
    from packaging.version import InvalidVersion, Version

    if version is None:
        from haversack._packs._compat import core_version

        version = core_version()
    try:
        release = Version(version).release
    except InvalidVersion:
        release = (0, 1)
    major, minor = (*release, 0)[:2]
    return f"haversack>={major}.{minor},<{major}.{minor + 1}"


def scaffold(name: str, target: Path | None = None, *, core_version: str | None = None) -> Path:
    """Write the project of pack ``name`` into ``target`` (default ``./haversack-<name>``).

    ``target`` must not exist or be an empty directory: nothing is ever overwritten.
    Returns the project directory.
    """
    names = pack_names(name)
    root = Path(target) if target is not None else Path.cwd() / names.distribution
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ScaffoldError(
            f"{root} already exists and is not an empty directory; choose another --dir or "
            "remove it first (nothing was written)."
        )
    values = {
        "pack": names.pack,
        "snake": names.snake,
        "distribution": names.distribution,
        "import_name": names.import_name,
        "class": names.class_prefix,
        "title": names.title,
        "core_requirement": core_requirement(core_version),
    }
    files = dict(_templates(resources.files(__name__) / "template", ()))
    root.mkdir(parents=True, exist_ok=True)
    for parts, text in files.items():
        path = root.joinpath(*(_fill(p, values) for p in parts))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(text, values), encoding="utf-8")
    return root


def _templates(folder: Traversable, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    found: list[tuple[tuple[str, ...], str]] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            found += _templates(entry, (*parts, entry.name))
        elif entry.name.endswith(_SUFFIX):
            # "dot-gitignore.tmpl" -> ".gitignore": dotfiles would be skipped by some tools
            target = entry.name.removesuffix(_SUFFIX)
            if target.startswith("dot-"):
                target = "." + target.removeprefix("dot-")
            found.append(((*parts, target), entry.read_text(encoding="utf-8")))
    return found


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text.replace("__import_name__", values["import_name"])
