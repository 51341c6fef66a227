"""A decoded mapping with invalid Unicode is reported as such, not as malformed JSON."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from haversack import ToolValidationError, serde


@dataclass(frozen=True)
class Flat:
    path: str


@dataclass(frozen=True)
class Nested:
    path: str
    sizes: tuple[int, ...] = ()


@pytest.mark.parametrize(
    ("tp", "data"),
    [(Flat, {"path": "\ud800"}), (Nested, {"path": "ok", "sizes": [1], "extra": "\udfff"})],
)
def test_lone_surrogates_in_a_mapping_are_named(tp, data):
    with pytest.raises(ToolValidationError, match="not valid Unicode") as info:
        serde.parse(tp, data)
    assert "JSON" not in info.value.message


def test_malformed_json_text_is_still_called_json():
    with pytest.raises(ToolValidationError, match="not valid JSON"):
        serde.parse(Flat, '{"path": "\\ud800"}')
