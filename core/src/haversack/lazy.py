"""PEP 562 lazy exports: a package's public names load from its private modules on first use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, str], *, rehome: bool = False
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package whose ``globals()`` is ``namespace``.

    ``exports`` maps each public name to the module defining it (``"._config"``). A name is
    imported on first access and then cached in the package, so importing the package (for
    example as a pack's entry point) loads only what is used. With ``rehome``, what the
    package's private modules define shows the package as its ``__module__`` (in reprs,
    tracebacks and docs).
    """
    package = namespace["__name__"]
    private = f"{package}._"

    def get_attribute(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(module_name, package), name)
        if rehome and getattr(value, "__module__", "").startswith(private):
            with suppress(AttributeError, TypeError):  # aliases of typing constructs refuse
                value.__module__ = package
        namespace[name] = value
        return value

    def list_names() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return get_attribute, list_names
