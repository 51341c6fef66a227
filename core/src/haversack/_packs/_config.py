"""Configuration: ``[tool.haversack]`` in pyproject.toml or haversack.toml, and per-pack options."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haversack.errors import PackConfigError, ToolValidationError

__all__ = [
    "ENV_CONFIG",
    "FileConfig",
    "PackOptions",
    "find_config_file",
    "load_config",
    "parse_options",
]

PYPROJECT = "pyproject.toml"
HAVERSACK_TOML = "haversack.toml"
#: The config file to read when no ``config_file``/``--config`` is given: what a desktop MCP
#: client (launched with the working directory ``/``) sets to find the project's options.
ENV_CONFIG = "HAVERSACK_CONFIG"
_TOP_KEYS = frozenset({"packs", "enable", "disable", "strict"})
#: Options the core handles for every pack; the rest go to the pack's ``config_type``.
CORE_OPTIONS = frozenset({"prefix", "rename", "tools", "exclude_tools"})
#: Field metadata marking a ``str`` option as a path: ``field(metadata={"path": True})``
#: (``"keys"`` for a mapping whose keys are paths). Fields typed ``pathlib.Path`` are paths
#: without it. A relative path given in a config file
#: is resolved against that file's folder, so the file means the same from any directory.
PATH_METADATA = "path"


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

    @property
    def base_dir(self) -> Path | None:
        """The folder relative paths in this file resolve against: the file's own."""
        return None if self.path is None else self.path.parent

    def where(self, pack: str) -> str:
        """Where the options of ``pack`` live in this file."""
        if self.path is not None and self.path.name == PYPROJECT:
            return f"{self.path} [tool.haversack.packs.{pack}]"
        return f"{self.path} [packs.{pack}]"


@dataclass(frozen=True, slots=True)
class PackOptions:
    """One pack's options split into the core's and the pack's own.

    The core's are ``prefix``, ``rename`` and the tool filters ``tools`` (keep only these,
    globs) and ``exclude_tools`` (drop these, globs). ``file_keys`` are the pack's own
    options that came from the config file in ``base_dir`` (not overridden in code): their
    relative paths resolve against ``base_dir``.
    """

    prefix: str = ""
    rename: Mapping[str, str] = field(default_factory=dict)
    own: Mapping[str, Any] = field(default_factory=dict)
    source: str = "defaults"
    tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    base_dir: Path | None = None
    file_keys: frozenset[str] = frozenset()


def find_config_file(start: Path) -> Path | None:
    """The nearest haversack.toml, or pyproject.toml with a ``[tool.haversack]`` table.

    Looks in ``start`` and then each parent; in one folder haversack.toml wins.
    """
    for folder in (start, *start.parents):
        candidate = folder / HAVERSACK_TOML
        if candidate.is_file():
            return candidate
        candidate = folder / PYPROJECT
        if candidate.is_file() and may_configure(candidate.read_bytes()):
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
#: A table header, ``[name]`` or ``[[name]]``, at the start of a line.
_HEADER = re.compile(rb"^[ \t]*\[\[?([^\]\n]*)\]", re.MULTILINE)


def may_configure(text: bytes) -> bool:
    """Whether a pyproject.toml's ``text`` can hold ``[tool.haversack]`` (parse only then).

    Never ``False`` for a file that does. A ``haversack = ...`` key at the start of a line
    counts only in the ``[tool]`` table: uv's ``[tool.uv.sources]`` entry for the core,
    the usual one in a project using it, then costs no parse. With a multi-line string in
    the file, which could hold a line looking like a header, every match counts.
    """
    matches = list(_MAY_CONFIGURE.finditer(text))
    if not matches:
        return False
    if b'"""' in text or b"'''" in text:
        return True
    headers = [
        (h.start(), h[1].replace(b" ", b"").replace(b"\t", b"")) for h in _HEADER.finditer(text)
    ]
    for match in matches:
        line = text.rfind(b"\n", 0, match.start()) + 1
        if text[line : match.start()].strip():
            return True  # in a header, a dotted key, an inline table or a comment
        table = next((name for start, name in reversed(headers) if start < line), b"")
        if table.strip(b"\"'") == b"tool":
            return True
    return False


def load_config(config_file: str | Path | None, *, search_from: Path | None = None) -> FileConfig:
    """Read ``config_file``, else ``$HAVERSACK_CONFIG``, else the file found upward from
    ``search_from`` (the cwd)."""
    import os

    source = "config file"
    if config_file is None and os.environ.get(ENV_CONFIG, "").strip():
        config_file, source = os.environ[ENV_CONFIG].strip(), ENV_CONFIG
    if config_file is not None:
        path = Path(config_file).expanduser()
        if not path.is_file():
            raise PackConfigError(
                f"Config file {path} ({source}) does not exist"
                + (
                    f" (relative to the working directory {Path.cwd()})"
                    if not path.is_absolute()
                    else ""
                )
                + "; pass the path of an existing pyproject.toml or haversack.toml, "
                "preferably absolute."
            )
        path = path.absolute()
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


def split_options(
    pack: str,
    raw: Mapping[str, Any],
    source: str,
    *,
    base_dir: Path | None = None,
    file_keys: frozenset[str] = frozenset(),
) -> PackOptions:
    """Separate the core's options from the pack's own, checking their types."""
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
    tools = raw.get("tools")
    if tools is not None:
        tools = _globs(pack, "tools", tools, source)
    exclude = _globs(pack, "exclude_tools", raw.get("exclude_tools", []), source)
    return PackOptions(
        prefix,
        dict(rename),
        own,
        source,
        tools,
        exclude,
        base_dir,
        frozenset(file_keys) & frozenset(own),
    )


def _globs(pack: str, option: str, value: object, source: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        value = None
    if value is None or not all(isinstance(v, str) and v for v in value):
        raise PackConfigError(
            f"{option} for pack {pack!r} ({source}) must be a list of tool names or globs, "
            f'e.g. {option} = ["read_file", "grep*"].',
            pack=pack,
        )
    return tuple(value)


def parse_options(pack: str, config_type: type[Any] | None, options: PackOptions) -> Any:
    """The pack's options parsed strictly into its ``config_type`` (``None`` without one)."""
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
    from haversack.serde._parse import parse_as  # only for options given: may import pydantic

    own = dict(options.own)
    if options.file_keys and options.base_dir is not None:
        own = resolve_paths(config_type, own, options.base_dir, options.file_keys)
    heading = f"Invalid options for pack {pack!r} ({options.source})"
    try:
        return parse_as(config_type, own, heading, noun="option", listing="valid")
    except ToolValidationError as exc:
        raise PackConfigError(exc.message, pack=pack) from None


def resolve_paths(
    config_type: type[Any], raw: Mapping[str, Any], base: Path, keys: frozenset[str] | None = None
) -> dict[str, Any]:
    """``raw`` with each relative path option (of ``keys``, default all) joined to ``base``.

    A path option is a field typed ``pathlib.Path`` (also ``Path | None`` and
    ``tuple[Path, ...]``) or marked ``field(metadata={"path": True})`` (``"keys"``: the keys
    of a mapping, host path -> something; ``"program"``: the first item of a command line,
    when it holds a ``/``); nested dataclasses (a tuple of mount tables, or a mapping of
    name -> table, say) are followed. ``~`` is expanded. Other values are kept as
    given, for the pack's own validation to judge.
    """
    import typing

    try:
        hints = typing.get_type_hints(config_type)
    except Exception:  # noqa: BLE001 - an unresolvable annotation: nothing is known to be a path
        hints = {}
    out = dict(raw)
    for f in dataclasses.fields(config_type):
        if f.name not in out or (keys is not None and f.name not in keys):
            continue
        out[f.name] = _resolve_value(hints.get(f.name), f.metadata, out[f.name], base)
    return out


def _resolve_value(tp: Any, metadata: Mapping[str, Any], value: Any, base: Path) -> Any:
    import typing

    marked = metadata.get(PATH_METADATA)
    if marked == "keys" and isinstance(value, Mapping):
        return {_join(k, base): v for k, v in value.items()}
    if marked == "program" and isinstance(value, list) and value:
        # A command line: its program is a path only when it holds a '/' (a bare name is
        # looked up on PATH); its arguments are the program's business.
        first = value[0]
        if isinstance(first, str) and "/" in first:
            return [_join(first, base), *value[1:]]
        return value
    if marked is True or tp is Path:
        return _join(value, base)
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None) and a is not Ellipsis]
    if origin in (tuple, list) or (origin is not None and args and _is_union(tp)):
        if isinstance(value, list) and origin in (tuple, list):
            return [_resolve_value(args[0] if args else None, {}, v, base) for v in value]
        for arg in args:
            if arg is Path or dataclasses.is_dataclass(arg):
                return _resolve_value(arg, {}, value, base)
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
        return resolve_paths(tp, value, base)
    if origin in (dict, Mapping) and len(args) == 2 and isinstance(value, Mapping):
        # A table of nested option tables (name -> dataclass): each one's paths.
        item = args[1]
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return {k: _resolve_value(item, {}, v, base) for k, v in value.items()}
    return value


def _is_union(tp: Any) -> bool:
    import types
    import typing

    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _join(value: Any, base: Path) -> Any:
    if isinstance(value, list):
        return [_join(v, base) for v in value]
    if not isinstance(value, str) or not value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


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
