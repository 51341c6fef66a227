"""Session snapshot/restore: STATE only, exact, per-session, independent of history length."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from haversack import Session, SessionSnapshot, SlicePolicy


@dataclass(frozen=True)
class Plan:
    goal: str


@dataclass(frozen=True)
class Note:
    n: int


@dataclass(frozen=True)
class Invoked:
    n: int


def make_session() -> Session:
    session = Session(session_id="mine")
    session.register_log(Invoked)
    return session


def test_restore_brings_back_state_and_keeps_logs():
    session = make_session()
    session[Plan].seed([Plan("a")])
    session.dispatch(Invoked(1))
    snapshot = session.snapshot()
    session[Plan].append(Plan("b"))
    session[Note].append(Note(1))  # first used after the snapshot
    session.dispatch(Invoked(2))
    session.restore(snapshot)
    assert session[Plan].all() == (Plan("a"),)
    assert session[Note].all() == ()
    assert session[Invoked].all() == (Invoked(1), Invoked(2))
    assert session[Note].policy is SlicePolicy.STATE


def test_snapshot_is_immutable_and_reusable():
    session = make_session()
    session[Plan].seed([Plan("a")])
    snapshot = session.snapshot()
    for goal in ("b", "c"):
        session[Plan].append(Plan(goal))
        session.restore(snapshot)
        assert session[Plan].all() == (Plan("a"),)
    assert snapshot.items(Plan) == (Plan("a"),)
    assert snapshot.items(Invoked) == ()  # LOG slices are not captured
    assert snapshot.slice_types == (Plan,)
    assert snapshot.session_id == "mine"
    assert repr(snapshot) == "SessionSnapshot(session_id='mine', {Plan: 1})"


def test_restoring_an_older_snapshot_after_a_newer_one():
    session = make_session()
    first = session.snapshot()
    session[Plan].append(Plan("a"))
    second = session.snapshot()
    session[Plan].append(Plan("b"))
    session.restore(first)
    assert session[Plan].all() == ()
    session.restore(second)
    assert session[Plan].all() == (Plan("a"),)


def test_snapshot_from_another_session_is_rejected():
    mine, theirs = make_session(), Session(session_id="theirs")
    theirs[Plan].append(Plan("x"))
    with pytest.raises(
        ValueError,
        match=r"^Cannot restore a snapshot of session 'theirs' into "
        r"session 'mine': a snapshot can only be restored into the session that "
        r"took it\.$",
    ):
        mine.restore(theirs.snapshot())
    assert mine[Plan].all() == ()


def test_same_id_does_not_make_sessions_interchangeable():
    a, b = Session(session_id="same"), Session(session_id="same")
    with pytest.raises(ValueError, match="only be restored into the session that took it"):
        a.restore(b.snapshot())


def test_restore_needs_a_snapshot():
    with pytest.raises(TypeError, match="restore\\(\\) needs a SessionSnapshot, got dict"):
        Session().restore({})  # type: ignore[arg-type]


def test_snapshot_shares_structure_instead_of_copying_items():
    session = make_session()
    session[Note].extend(Note(i) for i in range(10_000))
    snapshot = session.snapshot()
    # The snapshot holds the slice's own immutable contents, not a copy.
    assert snapshot._slices[Note] is session[Note]._contents()
    session[Note].append(Note(-1))
    assert len(snapshot.items(Note)) == 10_000
    assert isinstance(snapshot, SessionSnapshot)


ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from([Plan, Note, Invoked]), st.integers(0, 9)),
        st.tuples(st.just("clear"), st.sampled_from([Plan, Note, Invoked]), st.none()),
        st.tuples(st.just("clear_odd"), st.sampled_from([Note, Invoked]), st.none()),
        st.tuples(
            st.just("seed"),
            st.sampled_from([Plan, Note, Invoked]),
            st.lists(st.integers(0, 9), max_size=4),
        ),
        st.tuples(st.just("dispatch"), st.just(Invoked), st.integers(0, 9)),
    ),
    max_size=25,
)


def _apply(session: Session, actions) -> None:
    for action, tp, arg in actions:

        def make(i, tp=tp):
            return Plan(str(i)) if tp is Plan else tp(i)

        if action == "append":
            session[tp].append(make(arg))
        elif action == "clear":
            session[tp].clear()
        elif action == "clear_odd":
            session[tp].clear(lambda item: item.n % 2 == 1)
        elif action == "seed":
            session[tp].seed([make(i) for i in arg])
        else:
            session.dispatch(Invoked(arg))


@settings(max_examples=200, deadline=None)
@given(before=ACTIONS, after=ACTIONS)
def test_restore_is_exact_for_state_and_leaves_logs_alone(before, after):
    session = make_session()
    _apply(session, before)
    expected_state = {tp: session[tp].all() for tp in (Plan, Note)}
    snapshot = session.snapshot()
    _apply(session, after)
    expected_log = session[Invoked].all()
    session.restore(snapshot)
    assert {tp: session[tp].all() for tp in (Plan, Note)} == expected_state
    assert session[Invoked].all() == expected_log
    # The session keeps working normally after a restore.
    session[Plan].append(Plan("z"))
    assert session[Plan].latest() == Plan("z")


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


@dataclass(frozen=True)
class Bump:
    """An event whose reducer appends to the STATE slice Note."""

    n: int


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from([Plan, Note, Invoked]), st.integers(0, 9)),
        st.tuples(st.just("clear"), st.sampled_from([Plan, Note]), st.none()),
        st.tuples(st.just("seed"), st.just(Note), st.lists(st.integers(0, 9), max_size=3)),
        st.tuples(st.just("dispatch"), st.just(Invoked), st.integers(0, 9)),
        st.tuples(st.just("bump"), st.just(Bump), st.integers(0, 9)),
        st.tuples(st.just("record"), st.sampled_from(["p", "q"]), st.integers(0, 9)),
        st.tuples(st.just("snapshot"), st.none(), st.none()),
        st.tuples(st.just("restore"), st.none(), st.integers(0, 20)),
    ),
    max_size=40,
)


def _state(session: Session) -> tuple[object, ...]:
    from haversack._policy_state import policy_values

    return (
        session[Plan].all(),
        session[Note].all(),
        frozenset(policy_values(session, "p")),
        frozenset(policy_values(session, "q")),
    )


@settings(max_examples=300, deadline=None)
@given(steps=STEPS)
def test_snapshots_stay_exact_however_changes_snapshots_and_restores_interleave(steps):
    # Snapshots share one view of the STATE slices until one changes: every way of changing
    # one (a slice method, a reducer, a restore, a policy's record) must end that sharing.
    from haversack._policy_state import add_policy_value
    from haversack._session import Append

    session = make_session()
    session.register_reducer(Bump, lambda view, event: Append(Note(event.n)), slice_type=Note)
    taken: list[tuple[SessionSnapshot, tuple[object, ...]]] = []
    for action, what, arg in steps:
        if action == "snapshot":
            taken.append((session.snapshot(), _state(session)))
        elif action == "restore":
            if taken:
                snapshot, expected = taken[arg % len(taken)]
                session.restore(snapshot)
                assert _state(session) == expected
        elif action == "bump":
            session.dispatch(Bump(arg))
        elif action == "record":
            add_policy_value(session, what, str(arg))
        else:
            _apply(session, [(action, what, arg)])
    for snapshot, expected in taken:
        session.restore(snapshot)
        assert _state(session) == expected
