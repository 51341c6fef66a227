"""``haversack.lazy.lazy_exports``: the packs' PEP 562 package attributes."""

from __future__ import annotations

import sys

import pytest

import haversack_vfs


def test_a_name_loads_on_first_access_and_is_then_cached() -> None:
    namespace = vars(haversack_vfs)
    namespace.pop("GlobParams", None)
    value = haversack_vfs.GlobParams
    assert value is sys.modules["haversack_vfs._params"].GlobParams
    assert namespace["GlobParams"] is value


def test_dir_lists_every_public_name_before_it_is_loaded() -> None:
    assert set(haversack_vfs.__all__) <= set(dir(haversack_vfs))


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    with pytest.raises(AttributeError, match="module 'haversack_vfs' has no attribute 'nope'"):
        _ = haversack_vfs.nope  # type: ignore[attr-defined]
