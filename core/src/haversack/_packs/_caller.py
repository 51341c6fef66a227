"""The caller's own sections, policies and resources, contributed as the plugin "your code"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from haversack.hookspecs import hookimpl

if TYPE_CHECKING:
    from haversack._bindings import Binding
    from haversack._policy import ToolPolicy
    from haversack._section import Section

__all__ = ["CallerContributions"]


class CallerContributions:
    """What ``compose(sections=, policies=, resources=)`` received, as a plugin.

    Going through the hooks means the caller's contributions get exactly the checks a
    pack's get (type checks, name uniqueness, default-gives-way resources), and a clash
    names ``your code`` as one of the two contributors. It is registered first, so your
    sections come before any pack's.
    """

    def __init__(
        self,
        sections: Sequence[Section[Any]],
        policies: Sequence[ToolPolicy],
        bindings: Sequence[Binding[Any]],
    ) -> None:
        self._sections = tuple(sections)
        self._policies = tuple(policies)
        self._bindings = tuple(bindings)

    @hookimpl
    def register_sections(self, register: Callable[[Section[Any]], None]) -> None:
        """Register the caller's sections, in order."""
        for section in self._sections:
            register(section)

    @hookimpl
    def register_policies(self, register: Callable[[ToolPolicy], None]) -> None:
        """Register the caller's prompt-wide policies."""
        for policy in self._policies:
            register(policy)

    @hookimpl
    def register_resources(self, register: Callable[[Binding[Any]], None]) -> None:
        """Register the caller's resource bindings."""
        for binding in self._bindings:
            register(binding)
