"""Configuration: ``[tool.haversack]`` in pyproject.toml or haversack.toml, and per-pack options."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haversack.errors import PackConfigError

__all__ = ["FileConfig", "PackOptions", "find_config_file", "load_config", "parse_options"]

PYPROJECT = "pyproject.toml"
HAVERSACK_TOML = "haversack.toml"
_TOP_KEYS = frozenset({"packs", "enable", "disable", "strict"})
#: Options the core handles for every pack; the rest go to the pack's ``config_type``.
CORE_OPTIONS = frozenset({"prefix", "rename"})


@dataclass(frozen=True, slots=True)
class FileConfig:
    """The ``[tool.haversack]`` table (or a haversack.toml), checked for shape."""

    path: Path | None = None
    packs: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    strict: bool | None = None
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``pyproject.toml [tool.haversack]`` or ``haversack.toml``: for messages."""
        if self.path is None:
            return "no config file"
        if self.path.name == PYPROJECT:
            return f"{self.path} [tool.haversack]"
        return str(self.path)

    def where(self, pack: str) -> str:
        """Where the options of ``pack`` live in this file."""
        if self.path is not None and self.path.name == PYPROJECT:
            return f"{self.path} [tool.haversack.packs.{pack}]"
        return f"{self.path} [packs.{pack}]"


@dataclass(frozen=True, slots=True)
class PackOptions:
    """One pack's options split into the core's (``prefix``, ``rename``) and the pack's own."""

    prefix: str = ""
    rename: Mapping[str, str] = field(default_factory=dict)
    own: Mapping[str, Any] = field(default_factory=dict)
    source: str = "defaults"


def find_config_file(start: Path) -> Path | None:
    """The nearest haversack.toml, or pyproject.toml with a ``[tool.haversack]`` table.

    Looks in ``start`` and then each parent; in one folder haversack.toml wins.
    """
    for folder in (start, *start.parents):
        candidate = folder / HAVERSACK_TOML
        if candidate.is_file():
            return candidate
        candidate = folder / PYPROJECT
        if candidate.is_file() and _MAY_CONFIGURE.search(candidate.read_bytes()):
            data = _read_toml(candidate)
            if isinstance(data.get("tool"), dict) and "haversack" in data["tool"]:
                return candidate
    return None


#: ``haversack`` where TOML allows it as a key (bare or quoted, ended by ``.``, ``=`` or a
#: header's ``]``): only then can a pyproject.toml hold ``[tool.haversack]``, so only then is
#: it parsed. ``["haversack>=0.1"]``, ``["haversack"]`` or ``"haversack._x"`` do not match.
_MAY_CONFIGURE = re.compile(
    rb"""(?:"haversack"|'haversack')\s*[.=]"""  # "haversack".packs = / "haversack" =
    rb"""|\.\s*(?:"haversack"|'haversack')\s*\]"""  # [tool."haversack"]
    rb"""|(?<![\w"'-])haversack(?![\w-])\s*[.=\]]"""  # bare: [tool.haversack], haversack =
)


def load_config(config_file: str | Path | None, *, search_from: Path | None = None) -> FileConfig:
    """Read ``config_file``, or the file found from ``search_from`` (the cwd) upward."""
    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise PackConfigError(
                f"Config file {path} does not exist; pass an existing pyproject.toml or "
                "haversack.toml."
            )
    else:
        found = find_config_file(search_from or Path.cwd())
        if found is None:
            return FileConfig()
        path = found
    data = _read_toml(path)
    table = data.get("tool", {}).get("haversack", {}) if path.name == PYPROJECT else data
    return _shape(path, table)


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a candidate file

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PackConfigError(f"Cannot read config file {path}: {exc}.") from None


def _shape(path: Path, table: object) -> FileConfig:
    label = f"{path} [tool.haversack]" if path.name == PYPROJECT else str(path)
    if not isinstance(table, dict):
        raise PackConfigError(f"{label} must be a table.")
    unknown = sorted(set(table) - _TOP_KEYS)
    if unknown:
        raise PackConfigError(
            f"Unknown key {unknown[0]!r} in {label}; allowed keys: {', '.join(sorted(_TOP_KEYS))}."
        )
    allow: tuple[str, ...] | None = None
    options: dict[str, Mapping[str, Any]] = {}
    packs = table.get("packs")
    if isinstance(packs, list):
        allow = _names(packs, f"{label} packs")
    elif isinstance(packs, dict):
        for name, value in packs.items():
            if not isinstance(value, dict):
                raise PackConfigError(
                    f"Options for pack {name!r} in {label} must be a table "
                    f"([...packs.{name}]), got {type(value).__name__}."
                )
            options[name] = value
    elif packs is not None:
        raise PackConfigError(f"{label} packs must be a list of names or a table of pack options.")
    if "enable" in table:
        if allow is not None:
            raise PackConfigError(f"{label} has both packs = [...] and enable = [...]; keep one.")
        allow = _names(table["enable"], f"{label} enable")
    disable = _names(table.get("disable", []), f"{label} disable")
    strict = table.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise PackConfigError(f"{label} strict must be true or false.")
    return FileConfig(path, allow, disable, strict, options)


def _names(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PackConfigError(f"{what} must be a list of pack names.")
    return tuple(value)


def split_options(pack: str, raw: Mapping[str, Any], source: str) -> PackOptions:
    """Separate ``prefix``/``rename`` from the pack's own options, checking their types."""
    own = {k: v for k, v in raw.items() if k not in CORE_OPTIONS}
    prefix = raw.get("prefix", "")
    if not isinstance(prefix, str):
        raise PackConfigError(
            f"prefix for pack {pack!r} ({source}) must be a string such as {pack + '_'!r}.",
            pack=pack,
        )
    rename = raw.get("rename", {})
    if not isinstance(rename, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rename.items()
    ):
        raise PackConfigError(
            f"rename for pack {pack!r} ({source}) must map tool names to new names, e.g. "
            'rename = { read_file = "vfs_read" }.',
            pack=pack,
        )
    return PackOptions(prefix, dict(rename), own, source)


def parse_options(pack: str, config_type: type[Any] | None, options: PackOptions) -> Any:
    """The pack's options parsed strictly into its ``config_type`` (``None`` without one)."""
    from haversack import serde
    from haversack.errors import ToolValidationError

    if config_type is None:
        if options.own:
            keys = ", ".join(sorted(options.own))
            raise PackConfigError(
                f"Pack {pack!r} takes no options, but {options.source} gives: {keys}. "
                "Remove them (only prefix and rename apply to every pack).",
                pack=pack,
            )
        return None
    if not options.own:
        # Every field has a default (the hook's contract): skip pydantic on the common path.
        try:
            return config_type()
        except TypeError:
            pass  # a required field: let parse() name it
    try:
        return serde.parse(config_type, dict(options.own))
    except ToolValidationError as exc:
        detail = exc.message.removeprefix("Invalid arguments: ").rstrip(".")
        raise PackConfigError(
            f"Invalid options for pack {pack!r} ({options.source}): {detail}.", pack=pack
        ) from None


def check_config_type(pack: str, label: str, value: object) -> type[Any] | None:
    """Validate what a ``config_type`` hook returned."""
    if value is None:
        return None
    if isinstance(value, type) and dataclasses.is_dataclass(value):
        return value
    from haversack.errors import PackLoadError

    raise PackLoadError(
        f"{label}: config_type() must return a dataclass type or None, got {value!r}.",
        pack=pack,
    )
