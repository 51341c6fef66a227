"""``ToolResult``: constructors, fields and the exact text the model sees."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from haversack import ToolResult


@dataclass(frozen=True)
class Point:
    x: int
    y: int | None = None


@dataclass(frozen=True)
class Line:
    text: str

    def render(self) -> str:
        return f"> {self.text}"


class Color(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Painted:
    color: Color
    tags: tuple[str, ...] = ()


def test_ok_fields() -> None:
    result = ToolResult.ok(Point(1), message="Done.")
    assert result.message == "Done."
    assert result.value == Point(1)
    assert result.success is True
    assert result.exclude_value_from_context is False


def test_ok_defaults() -> None:
    result: ToolResult[None] = ToolResult.ok()
    assert (result.message, result.value, result.success) == ("OK", None, True)


def test_error_fields() -> None:
    result: ToolResult[None] = ToolResult.error("File not found: a.txt")
    assert result.message == "File not found: a.txt"
    assert result.value is None
    assert result.success is False


def test_render_message_only() -> None:
    assert ToolResult.ok(message="Saved.").render() == "Saved."
    assert ToolResult.error("Nope.").render() == "Nope."


def test_render_compact_json_drops_none_fields() -> None:
    assert ToolResult.ok(Point(1), message="Found:").render() == 'Found:\n{"x":1}'
    assert ToolResult.ok(Point(1, 2), message="Found:").render() == 'Found:\n{"x":1,"y":2}'


def test_render_uses_the_values_own_render() -> None:
    assert ToolResult.ok(Line("hi"), message="Read:").render() == "Read:\n> hi"


def test_render_sequence_of_renderables_one_per_line() -> None:
    value = [Line("a"), Line("b")]
    assert ToolResult.ok(value, message="Lines:").render() == "Lines:\n> a\n> b"


def test_render_sequence_of_plain_dataclasses_is_a_json_list() -> None:
    value = (Point(1), Point(2, 3))
    assert ToolResult.ok(value, message="m").render() == 'm\n[{"x":1},{"x":2,"y":3}]'


def test_render_enums_and_tuples_as_json() -> None:
    rendered = ToolResult.ok(Painted(Color.RED, ("a",)), message="m").render()
    assert rendered == 'm\n{"color":"red","tags":["a"]}'


def test_render_keeps_non_ascii_readable() -> None:
    assert ToolResult.ok({"name": "caf\u00e9"}, message="m").render() == 'm\n{"name":"caf\u00e9"}'


def test_exclude_value_from_context_leaves_the_value_out() -> None:
    result = ToolResult(message="Stored.", value=Point(1), exclude_value_from_context=True)
    assert result.render() == "Stored."
    assert result.value == Point(1)  # still recorded


def test_empty_message_renders_value_only() -> None:
    assert ToolResult.ok(Point(5), message="").render() == '{"x":5}'


def test_error_may_carry_a_value() -> None:
    result = ToolResult.error("Partial.", value=Point(1))
    assert result.success is False
    assert result.render() == 'Partial.\n{"x":1}'


def test_results_are_frozen_and_comparable() -> None:
    assert ToolResult.ok(Point(1)) == ToolResult.ok(Point(1))
    assert ToolResult.ok(Point(1)) != ToolResult.error("x")


def test_results_are_slotted_so_construction_stays_cheap():
    """A result is built on every call; a per-instance __dict__ doubled its cost."""
    result = ToolResult.ok(1)
    assert not hasattr(result, "__dict__")
    assert ToolResult[int].ok(2).value == 2  # subscripted construction still works
