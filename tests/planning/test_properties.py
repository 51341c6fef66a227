"""Property: random planning calls through the executor never raise, failures change nothing,
and every success leaves exactly one consistent plan."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import Prompt, Session, ToolExecutor
from haversack_planning import Plan, PlanningConfig, planning_section

CONFIG = PlanningConfig(max_steps=5, max_objective_chars=20, max_title_chars=10)
RENDERED = Prompt(ns="t", key="props", sections=[planning_section(CONFIG)]).render()

SHORT = st.sampled_from(["a", "b c", "step 3", " pad ", "x" * 10, "tab\tbed"])
TEXT = st.one_of(
    SHORT,
    SHORT,
    SHORT,
    st.text(max_size=25),
    st.sampled_from(["", " ", "\n", "x" * 11, "e\u0301\u200bz"]),
)
TITLES = st.lists(TEXT, max_size=3)
STATUS = st.sampled_from(["pending", "in_progress", "done", "done", "DONE", None])
JUNK: Any = st.one_of(
    st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)
)

SETUP = st.tuples(
    st.just("planning_setup_plan"),
    st.fixed_dictionaries({"objective": TEXT}, optional={"steps": TITLES}),
)
ADD = st.tuples(st.just("planning_add_step"), st.fixed_dictionaries({"steps": TITLES}))
UPDATE = st.tuples(
    st.just("planning_update_step"),
    st.fixed_dictionaries(
        {"step_id": st.integers(0, 6)},
        optional={"title": st.one_of(st.none(), TEXT), "status": STATUS},
    ),
)
MARK = st.tuples(
    st.just("planning_update_step"),
    st.fixed_dictionaries(
        {"step_id": st.integers(1, 4), "status": st.sampled_from(["in_progress", "done"])}
    ),
)
READ = st.tuples(st.just("planning_read_plan"), st.just({}))
# Malformed calls: wrong types, unknown fields, arguments for a tool without params.
MALFORMED = st.tuples(
    st.sampled_from(
        ["planning_setup_plan", "planning_add_step", "planning_update_step", "planning_read_plan"]
    ),
    st.dictionaries(
        st.sampled_from(["objective", "steps", "step_id", "status", "extra"]), JUNK, max_size=3
    ),
)
# Weighted towards adds and updates; most sequences start from a plan so that they matter.
CALLS = st.one_of(SETUP, ADD, ADD, UPDATE, MARK, MARK, READ, MALFORMED)
START = ("planning_setup_plan", {"objective": "Goal", "steps": ["a", "b"]})
SEQUENCES = st.tuples(
    st.sampled_from([(), (START,), (START,), (START,)]), st.lists(CALLS, max_size=25)
).map(lambda parts: [*parts[0], *parts[1]])


def _check_plan(plan: Plan) -> None:
    assert [s.step_id for s in plan.steps] == list(range(1, len(plan.steps) + 1))
    assert len(plan.steps) <= CONFIG.max_steps
    assert 0 < len(plan.objective) <= CONFIG.max_objective_chars
    assert all(0 < len(s.title) <= CONFIG.max_title_chars for s in plan.steps)
    assert all(s.title == " ".join(s.title.split()) for s in plan.steps)
    assert plan.done == sum(s.status == "done" for s in plan.steps)
    completed = bool(plan.steps) and plan.done == len(plan.steps)
    assert plan.status == ("completed" if completed else "active")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEQUENCES)
def test_random_calls_never_raise_and_failures_change_nothing(calls):
    session = Session()
    with ToolExecutor(RENDERED, session=session) as executor:
        for name, args in calls:
            before = session[Plan].all()
            result = executor.execute(name, args)  # must not raise
            after = session[Plan].all()
            assert isinstance(result.render(), str)
            if not result.success:
                assert after == before, (name, args, result.message)
                assert result.message
                continue
            assert len(after) == 1
            _check_plan(after[0])
            if name == "planning_read_plan":
                assert after == before
