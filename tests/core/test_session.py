"""Session slices, policies, reducers, dispatch and subscribers."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from haversack import Append, Clear, Extend, Replace, Session, SlicePolicy, SliceView
from haversack.reducers import append, replace_latest, upsert_by


@dataclass(frozen=True)
class Step:
    title: str


@dataclass(frozen=True)
class Plan:
    goal: str
    steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class AddStep:
    title: str


@dataclass(frozen=True)
class ToolInvoked:
    name: str


@dataclass(frozen=True)
class Other:
    n: int


def test_slice_accessors():
    session = Session()
    steps = session[Step]
    assert steps.latest() is None
    assert steps.all() == ()
    assert len(steps) == 0
    steps.append(Step("a"))
    steps.extend([Step("b"), Step("c")])
    assert steps.all() == (Step("a"), Step("b"), Step("c"))
    assert steps.latest() == Step("c")
    assert steps.where(lambda s: s.title != "b") == (Step("a"), Step("c"))
    assert list(steps) == list(steps.all())
    steps.seed([Step("x")])
    assert session[Step].all() == (Step("x"),)
    steps.append(Step("y"))
    steps.clear(lambda s: s.title == "x")
    assert steps.all() == (Step("y"),)
    steps.clear()
    assert steps.all() == ()
    assert steps.policy is SlicePolicy.STATE


def test_slice_is_live_and_all_returns_an_immutable_tuple():
    session = Session()
    steps = session[Step]
    session[Step].append(Step("a"))
    snapshot_of_items = steps.all()
    steps.append(Step("b"))
    assert snapshot_of_items == (Step("a"),)
    assert isinstance(snapshot_of_items, tuple)
    assert steps.all() == (Step("a"), Step("b"))


def test_slices_are_keyed_by_dataclass_types_only():
    session = Session()
    with pytest.raises(TypeError, match=r"keyed by dataclass types, got <class 'int'>"):
        session[int]
    with pytest.raises(TypeError, match="keyed by dataclass types"):
        session[Step("a")]  # type: ignore[index]


def test_items_must_be_instances_of_the_slice_type():
    session = Session()
    with pytest.raises(
        TypeError, match=r"^Slice Step only holds Step instances; append got Other: Other\(n=1\)\.$"
    ):
        session[Step].append(Other(1))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="seed got Other"):
        session[Step].seed([Step("a"), Other(1)])  # type: ignore[list-item]
    assert session[Step].all() == ()


def test_register_slice_policy_is_fixed_at_first_use():
    session = Session()
    log = session.register_slice(ToolInvoked, policy=SlicePolicy.LOG)
    assert log.policy is SlicePolicy.LOG
    assert session.register_slice(ToolInvoked, policy=SlicePolicy.LOG).policy is SlicePolicy.LOG
    session[Step].append(Step("a"))
    with pytest.raises(
        ValueError,
        match=r"Slice \S*test_session\.Step is already a STATE slice, so "
        r"it cannot be registered as LOG",
    ) as info:
        session.register_slice(Step, policy=SlicePolicy.LOG)
    assert "register_slice(Step, policy=SlicePolicy.LOG) before indexing" in str(info.value)
    assert session.slice_types == (ToolInvoked, Step)
    assert Step in session
    assert Other not in session


def test_default_reducer_appends_the_event_to_its_own_slice():
    session = Session()
    session.register_reducer(ToolInvoked)
    session.dispatch(ToolInvoked("ls"))
    session.dispatch(ToolInvoked("grep"))
    assert session[ToolInvoked].all() == (ToolInvoked("ls"), ToolInvoked("grep"))


def test_dispatch_without_reducers_changes_nothing():
    session = Session()
    session.dispatch(Step("a"))
    assert Step not in session


def test_reducer_on_another_slice_sees_current_view():
    session = Session()
    seen: list[tuple[str, ...]] = []

    def add_step(view: SliceView[Plan], event: AddStep) -> Replace[Plan]:
        seen.append(tuple(s for p in view.all() for s in p.steps))
        plan = view.latest() or Plan("default")
        return Replace((Plan(plan.goal, (*plan.steps, event.title)),))

    session[Plan].seed([Plan("ship")])
    session.register_reducer(AddStep, add_step, slice_type=Plan)
    session.dispatch(AddStep("test"))
    session.dispatch(AddStep("deploy"))
    assert session[Plan].all() == (Plan("ship", ("test", "deploy")),)
    assert seen == [(), ("test",)]
    assert AddStep not in session


def test_reducers_run_in_order_and_see_earlier_changes():
    session = Session()
    session.register_reducer(Step)
    session.register_reducer(Step, lambda view, e: Append(Step(f"{len(view)}")))
    session.dispatch(Step("a"))
    assert session[Step].all() == (Step("a"), Step("1"))


def test_builtin_reducers():
    session = Session()
    session.register_reducer(Plan, replace_latest)
    session.dispatch(Plan("a"))
    session.dispatch(Plan("b"))
    assert session[Plan].all() == (Plan("b"),)

    session.register_reducer(Step, upsert_by(lambda s: s.title[0]))
    session.dispatch(Step("a1"))
    session.dispatch(Step("b1"))
    session.dispatch(Step("a2"))
    assert session[Step].all() == (Step("a2"), Step("b1"))

    assert append(SliceView(Step, session[Step]._contents()), Step("z")) == Append(Step("z"))


def test_all_slice_ops_apply():
    session = Session()
    session[Other].seed([Other(1), Other(2), Other(3)])
    ops = iter(
        [
            Extend([Other(4), Other(5)]),
            Clear(lambda o: o.n % 2 == 0),
            None,
            Clear(),
        ]
    )
    session.register_reducer(Step, lambda view, e: next(ops), slice_type=Other)
    session.dispatch(Step("x"))
    assert [o.n for o in session[Other].all()] == [1, 2, 3, 4, 5]
    session.dispatch(Step("x"))
    assert [o.n for o in session[Other].all()] == [1, 3, 5]
    session.dispatch(Step("x"))
    assert [o.n for o in session[Other].all()] == [1, 3, 5]
    session.dispatch(Step("x"))
    assert session[Other].all() == ()


def test_failing_reducer_leaves_every_slice_unchanged_and_names_itself():
    session = Session()

    def boom(view, event):
        raise KeyError("nope")

    session.register_reducer(Step)
    session.register_reducer(Step, lambda v, e: Append(Other(1)), slice_type=Other)
    session.register_reducer(Step, boom, slice_type=Plan)
    with pytest.raises(KeyError) as info:
        session.dispatch(Step("a"))
    assert any(
        "reducer test_failing_reducer_leaves_every_slice_unchanged_and_names_itself.<locals>.boom"
        " handled Step for slice Plan; no slice was changed" in note
        for note in info.value.__notes__
    )
    assert session[Step].all() == ()
    assert session[Other].all() == ()


def test_reducer_returning_garbage_or_wrong_type_is_rejected_atomically():
    session = Session()
    session.register_reducer(Step)
    session.register_reducer(Step, lambda v, e: (e,), slice_type=Plan)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"reducers return Append, Extend, Replace, Clear or None"):
        session.dispatch(Step("a"))
    assert session[Step].all() == ()

    other = Session()
    other.register_reducer(Step, lambda v, e: Append(Other(1)), slice_type=Plan)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Slice Plan only holds Plan instances; reducer got Other"):
        other.dispatch(Step("a"))


def test_reducers_must_not_mutate_the_session():
    session = Session()

    def impure(view, event):
        session[Other].append(Other(1))

    session.register_reducer(Step, impure)
    with pytest.raises(RuntimeError, match=r"A reducer called \S*test_session\.Other\.append\(\)"):
        session.dispatch(Step("a"))
    # The guard is released afterwards.
    session[Other].append(Other(2))
    assert session[Other].all() == (Other(2),)


def test_register_reducer_validates_arguments():
    session = Session()
    with pytest.raises(TypeError, match="event_type must be a type"):
        session.register_reducer("Step")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="reducer must be callable"):
        session.register_reducer(Step, 3)  # type: ignore[call-overload]


def test_subscribers_by_type_then_catch_all_and_unsubscribe():
    session = Session()
    session.register_reducer(Step)
    calls: list[tuple[str, object, int]] = []
    stop_typed = session.subscribe(Step, lambda e: calls.append(("typed", e, len(session[Step]))))
    session.subscribe(None, lambda e: calls.append(("all", e, len(session[Step]))))
    session.dispatch(Step("a"))
    session.dispatch(Other(1))
    stop_typed()
    stop_typed()  # idempotent
    session.dispatch(Step("b"))
    # Subscribers run after the reducers: they see the new state.
    assert calls == [
        ("typed", Step("a"), 1),
        ("all", Step("a"), 1),
        ("all", Other(1), 1),
        ("all", Step("b"), 2),
    ]


def test_subscriber_exception_is_logged_and_does_not_break_dispatch(caplog):
    session = Session(session_id="s-1")
    session.register_reducer(Step)
    later: list[object] = []

    def broken(event):
        raise RuntimeError("observer down")

    session.subscribe(Step, broken)
    session.subscribe(Step, later.append)
    with caplog.at_level(logging.ERROR, logger="haversack.session"):
        session.dispatch(Step("a"))
    assert session[Step].all() == (Step("a"),)
    assert later == [Step("a")]
    [record] = caplog.records
    assert record.getMessage() == (
        "Session s-1: subscriber test_subscriber_exception_is_logged_and_does_not_break_dispatch"
        ".<locals>.broken failed on Step; continuing."
    )
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "observer down"


def test_subscriber_may_dispatch_reentrantly():
    session = Session()
    session.register_reducer(Step)
    session.register_reducer(Other)
    session.subscribe(Step, lambda e: session.dispatch(Other(len(session[Step]))))
    session.dispatch(Step("a"))
    assert session[Other].all() == (Other(1),)


def test_subscribe_validates_arguments():
    session = Session()
    with pytest.raises(TypeError, match="event_type must be a type or None"):
        session.subscribe("Step", print)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="callback must be callable"):
        session.subscribe(Step, None)  # type: ignore[call-overload]


def test_sessions_do_not_share_state_or_reducers():
    first, second = Session(), Session()
    first.register_reducer(Step)
    first.dispatch(Step("a"))
    second.dispatch(Step("b"))
    assert first[Step].all() == (Step("a"),)
    assert Step not in second
    assert first.session_id != second.session_id


def test_session_id_validation_and_repr():
    assert Session(session_id="abc").session_id == "abc"
    with pytest.raises(ValueError, match="session_id must be a non-empty string"):
        Session(session_id="")
    session = Session(session_id="abc")
    session[Step].append(Step("a"))
    assert repr(session) == "Session(session_id='abc', slices=1)"
    assert repr(session[Step]) == "Slice(Step, STATE, 1 items)"


def test_register_log_is_idempotent_and_records_each_event_once():
    session = Session()
    log = session.register_log(ToolInvoked)
    session.register_log(ToolInvoked)
    assert log.policy is SlicePolicy.LOG
    session.dispatch(ToolInvoked("ls"))
    assert session[ToolInvoked].all() == (ToolInvoked("ls"),)
    session[Step].append(Step("a"))
    with pytest.raises(ValueError, match="already a STATE slice"):
        session.register_log(Step)


def test_registering_the_same_reducer_twice_registers_it_once():
    session = Session()
    session.register_reducer(Step, append)
    session.register_reducer(Step, append)
    session.dispatch(Step("a"))
    assert session[Step].all() == (Step("a"),)
