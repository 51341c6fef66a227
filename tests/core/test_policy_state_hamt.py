"""``ValueSet.add``'s iterative walk builds exactly the trie the recursive ``_add`` builds."""

from __future__ import annotations

from haversack import Session
from haversack._policy_state import _EMPTY_NODE, _add, _add_root, _hash


def test_iterative_add_matches_recursive_add() -> None:
    values = [f"src/file{i}.py" for i in range(20_000)]
    recursive = iterative = _EMPTY_NODE
    for value in values + values[::97]:  # re-adds must return the very same root
        a = _add(recursive, value, _hash(value), 0)
        b = _add_root(iterative, value, _hash(value))
        assert a == b
        assert (a is recursive) == (b is iterative)
        recursive, iterative = a, b


def test_snapshot_covers_state_slices_created_later() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Early:
        n: int

    @dataclass(frozen=True)
    class Late:
        n: int

    session = Session()
    session[Early].append(Early(1))
    before = session.snapshot()
    session[Late].append(Late(2))
    after = session.snapshot()
    assert before.slice_types == (Early,)
    assert after.slice_types == (Early, Late)
    session[Early].append(Early(3))
    session.restore(before)
    assert session[Early].all() == (Early(1),)
    assert session[Late].all() == ()
