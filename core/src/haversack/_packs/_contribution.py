"""Call one contributor's hooks and collect what it registers, attributed to it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haversack.errors import PackError, PackLoadError

from ._config import PackOptions, check_config_type, parse_options
from ._trace import Tracer

if TYPE_CHECKING:
    import pluggy

    from haversack._bindings import Binding
    from haversack._policy import ToolPolicy
    from haversack._section import Section
    from haversack._tool import Tool

__all__ = ["HOOKS", "Contribution", "collect"]

#: Hook names in the order the core calls them for each pack.
HOOKS: tuple[str, ...] = (
    "config_type",
    "register_sections",
    "register_tools",
    "register_policies",
    "register_resources",
)


@dataclass(slots=True)
class Contribution:
    """Everything one contributor (a pack, or the caller's own code) registered."""

    name: str
    label: str
    sections: list[Section[Any]] = field(default_factory=list)
    tools: list[Tool[Any, Any]] = field(default_factory=list)
    policies: list[ToolPolicy] = field(default_factory=list)
    bindings: list[Binding[Any]] = field(default_factory=list)
    builtin: bool = False


def _has_field(config_type: type[Any], name: str) -> bool:
    return any(f.name == name for f in dataclasses.fields(config_type))


def _expected() -> dict[str, tuple[str, type, str]]:
    from haversack._bindings import Binding
    from haversack._policy import ToolPolicy
    from haversack._section import Section
    from haversack._tool import Tool

    return {
        "register_sections": ("sections", Section, "a haversack.Section"),
        "register_tools": ("tools", Tool, "a haversack.Tool"),
        "register_policies": ("policies", ToolPolicy, "a haversack.ToolPolicy"),
        "register_resources": ("bindings", Binding, "a haversack Binding"),
    }


def collect(
    pm: pluggy.PluginManager,
    contribution: Contribution,
    options: PackOptions,
    tracer: Tracer,
    *,
    workspace: str | None = None,
) -> Contribution:
    """Run ``config_type`` then each registration hook of one contributor, in hook order.

    Raises :class:`PackLoadError` (a hook raised, returned a value, or registered the wrong
    type) or :class:`PackConfigError` (its options do not fit its ``config_type``).
    """
    name, label = contribution.name, contribution.label
    impls = {
        hook: impl
        for hook in HOOKS
        for impl in getattr(pm.hook, hook).get_hookimpls()
        if impl.plugin_name == name
    }
    config_impl = impls.get("config_type")
    config_type = None
    if config_impl is not None:
        config_type = check_config_type(
            name, label, _call(config_impl, {}, name, label, tracer, "config_type", returns=True)
        )
    if workspace is not None and config_type is not None and _has_field(config_type, "workspace"):
        options = dataclasses.replace(options, own={**options.own, "workspace": workspace})
    config = parse_options(name, config_type, options)
    expected = _expected()
    for hook in HOOKS[1:]:
        impl = impls.get(hook)
        if impl is None:
            continue
        attr, kind, what = expected[hook]
        bucket: list[Any] = getattr(contribution, attr)
        before = len(bucket)
        register = _register_callback(bucket, kind, what, label, name, hook)
        _call(impl, {"register": register, "config": config}, name, label, tracer, hook)
        added = bucket[before:]
        tracer.result(name, hook, f"{len(added)} registered: {', '.join(_names(added)) or '-'}")
    return contribution


def _names(items: list[Any]) -> list[str]:
    out = []
    for item in items:
        value = getattr(item, "key", None) or getattr(item, "name", None)
        provides = getattr(item, "provides", None)
        out.append(str(value) if value else getattr(provides, "__qualname__", repr(item)))
    return out


def _register_callback(
    bucket: list[Any], kind: type, what: str, label: str, name: str, hook: str
) -> Callable[[Any], None]:
    def register(item: Any) -> None:
        if not isinstance(item, kind):
            raise PackLoadError(
                f"{label}: {hook} registered {type(item).__qualname__} {item!r:.60}, but "
                f"register() takes {what}.",
                pack=name,
            )
        bucket.append(item)

    return register


def _call(
    impl: Any,
    available: dict[str, Any],
    name: str,
    label: str,
    tracer: Tracer,
    hook: str,
    *,
    returns: bool = False,
) -> Any:
    kwargs = {arg: available[arg] for arg in impl.argnames if arg in available}
    tracer.call(name, hook, kwargs)
    try:
        result = impl.function(**kwargs)
    except PackError:
        raise
    except Exception as exc:
        tracer.result(name, hook, f"raised {type(exc).__name__}: {exc}")
        raise PackLoadError(
            f"{label}: {hook}() raised {type(exc).__name__}: {exc}", pack=name
        ) from exc
    if returns:
        tracer.result(name, hook, repr(result))
    elif result is not None:
        raise PackLoadError(
            f"{label}: {hook}() returned {type(result).__qualname__}; registration hooks must "
            "call register(item) for each item and return None.",
            pack=name,
        )
    return result
