"""``serde.parse``: strict JSON/mapping to dataclass, errors that name the field."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

import pytest

from haversack import serde
from haversack.errors import ToolValidationError


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True)
class Step:
    title: str
    done: bool = False


@dataclass(frozen=True)
class Plan:
    name: str
    count: int
    steps: tuple[Step, ...] = ()
    tags: list[str] = field(default_factory=list)
    note: str | None = None
    mode: Literal["fast", "slow"] = "fast"
    level: Level = Level.LOW
    weights: dict[str, float] = field(default_factory=dict)
    first: Step | None = None


def check_error(data: object, path: str | None, fragment: str) -> ToolValidationError:
    with pytest.raises(ToolValidationError) as info:
        serde.parse(Plan, data)  # type: ignore[arg-type]
    assert info.value.field_path == path
    assert fragment in str(info.value)
    return info.value


def test_parses_json_text() -> None:
    assert serde.parse(Plan, '{"name": "p", "count": 2}') == Plan("p", 2)


def test_parses_bytes() -> None:
    assert serde.parse(Plan, b'{"name": "p", "count": 2}') == Plan("p", 2)


def test_parses_a_mapping() -> None:
    assert serde.parse(Plan, {"name": "p", "count": 2}) == Plan("p", 2)


def test_full_payload_with_nested_optional_literal_enum_tuple_list_mapping() -> None:
    data = {
        "name": "p",
        "count": 1,
        "steps": [{"title": "a"}, {"title": "b", "done": True}],
        "tags": ["x", "y"],
        "note": None,
        "mode": "slow",
        "level": "high",
        "weights": {"a": 0.5, "b": 1},
        "first": {"title": "f"},
    }
    assert serde.parse(Plan, data) == Plan(
        name="p",
        count=1,
        steps=(Step("a"), Step("b", True)),
        tags=["x", "y"],
        note=None,
        mode="slow",
        level=Level.HIGH,
        weights={"a": 0.5, "b": 1.0},
        first=Step("f"),
    )


def test_unknown_key_is_rejected_listing_the_allowed_fields() -> None:
    error = check_error({"name": "p", "count": 1, "cuont": 2}, "cuont", "unknown field 'cuont'")
    assert "allowed fields: name, count, steps" in str(error)
    # A model's typo gets the closest valid name, as a user's option typo does.
    assert str(error).endswith("; did you mean 'count'?).")


def test_an_unknown_key_like_no_field_gets_no_guess() -> None:
    error = check_error({"name": "p", "count": 1, "zzz": 2}, "zzz", "unknown field 'zzz'")
    assert "did you mean" not in str(error)


def test_the_caller_names_what_is_parsed_once() -> None:
    from haversack.serde._parse import parse_as

    with pytest.raises(ToolValidationError) as info:
        parse_as(Plan, {"name": "p", "count": 1, "nmae": 2}, "Bad options", noun="option")
    assert str(info.value).startswith("Bad options: unknown option 'nmae' (allowed options: ")


def test_unknown_nested_key_is_rejected_with_its_path() -> None:
    data = {"name": "p", "count": 1, "steps": [{"title": "a"}, {"title": "b", "extra": 1}]}
    check_error(data, "steps.1.extra", "unknown field 'steps.1.extra'")


def test_string_is_not_coerced_to_int() -> None:
    check_error({"name": "p", "count": "5"}, "count", "field 'count'")


def test_float_is_not_truncated_to_int() -> None:
    check_error({"name": "p", "count": 5.0}, "count", "valid integer")
    check_error('{"name": "p", "count": 5.7}', "count", "(got 5.7)")


def test_string_is_not_turned_into_a_tuple() -> None:
    check_error({"name": "p", "count": 1, "steps": "abc"}, "steps", "field 'steps'")


def test_int_is_not_coerced_to_string() -> None:
    check_error({"name": 5, "count": 1}, "name", "valid string")


def test_missing_required_field_is_rejected() -> None:
    check_error({"name": "p"}, "count", "missing required field 'count'")


def test_missing_nested_required_field_is_rejected() -> None:
    check_error({"name": "p", "count": 1, "first": {}}, "first.title", "'first.title'")


def test_bad_literal_and_enum_values_are_rejected() -> None:
    check_error({"name": "p", "count": 1, "mode": "medium"}, "mode", "'fast' or 'slow'")
    check_error({"name": "p", "count": 1, "level": "LOW"}, "level", "'low' or 'high'")


def test_several_problems_are_all_reported() -> None:
    error = check_error({"count": "x", "bogus": 1}, "name", "missing required field 'name'")
    assert "field 'count'" in str(error)
    assert "unknown field 'bogus'" in str(error)


def test_long_inputs_are_shortened_in_the_message() -> None:
    error = check_error({"name": "p", "count": "9" * 200}, "count", "...'")
    assert "9" * 100 not in str(error)


def test_malformed_json_gives_a_clear_message() -> None:
    error = check_error('{"name": "p", ', None, "not valid JSON")
    assert str(error).startswith("Invalid arguments:")


@pytest.mark.parametrize("text", ["[1, 2]", "null", '"plan"', "3"])
def test_non_object_json_is_rejected(text: str) -> None:
    check_error(text, None, "expected a JSON object")


def test_non_json_mapping_values_give_a_clear_error() -> None:
    error = check_error({"name": "p", "count": 1, "tags": {"a"}}, None, "not JSON data")
    assert "set" in str(error)


def test_nan_in_a_mapping_is_not_json() -> None:
    check_error({"name": "p", "count": 1, "weights": {"a": float("nan")}}, None, "not JSON data")


def test_non_mapping_non_text_data_is_rejected() -> None:
    check_error(42, None, "must be a JSON object, got int")


def test_parse_does_not_touch_user_classes() -> None:
    serde.parse(Plan, {"name": "p", "count": 1})
    assert "__pydantic_config__" not in vars(Plan)
    assert "__pydantic_config__" not in vars(Step)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="missing required field"):
        serde.parse(Step, {})
