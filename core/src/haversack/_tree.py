"""The section tree a ``Prompt`` is built on: each section with its path and children."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ._section import Section
from .errors import PromptValidationError

__all__ = ["Node", "build_tree", "walk"]


@dataclass(frozen=True, slots=True)
class Node:
    section: Section[Any]
    path: tuple[str, ...]
    children: tuple[Node, ...]


def build_tree(sections: Sequence[Section[Any]], parent: tuple[str, ...]) -> tuple[Node, ...]:
    nodes = []
    for section in sections:
        if not isinstance(section, Section):
            raise PromptValidationError(
                f"Prompt sections must be Section instances, got {type(section).__name__}.",
                section_path=parent,
            )
        path = (*parent, section.key)
        nodes.append(Node(section, path, build_tree(section.children, path)))
    return tuple(nodes)


def walk(nodes: tuple[Node, ...]) -> Iterator[Node]:
    for node in nodes:
        yield node
        yield from walk(node.children)
