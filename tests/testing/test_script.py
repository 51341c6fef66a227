"""ScriptedModel, play and Transcript over the planning pack and a fake pack."""

from __future__ import annotations

import json

import pytest

from haversack.testing import ScriptedCall, ScriptedModel, Transcript, play

from ._packs import GOOD


@pytest.fixture
def executor(haversack_executor):
    return haversack_executor(packs=["planning"])


def test_play_records_every_call_in_order(executor):
    transcript = play(
        executor,
        [
            ("planning_add_step", {"steps": ["early"]}),
            ("planning_setup_plan", {"objective": "Ship", "steps": ["A"]}),
            ("planning_add_step", '{"steps": ["B"]}'),
        ],
    )
    assert isinstance(transcript, Transcript)
    assert transcript.outcomes == [False, True, True]
    assert "no plan yet" in transcript[0].rendered
    assert transcript[2].rendered.startswith("Added step 2.")
    assert transcript.failures == [transcript[0]]
    assert '> planning_add_step {"steps": ["B"]}\nAdded step 2.' in transcript.text()
    with pytest.raises(AssertionError, match="1 of 3 scripted calls failed"):
        transcript.assert_all_ok()


def test_steps_can_use_earlier_results(executor):
    def finish_last_step(transcript):
        last = transcript[-1].value.plan.steps[-1].step_id
        return ("planning_update_step", {"step_id": last, "status": "done"})

    transcript = play(
        executor,
        ScriptedModel(
            [
                ScriptedCall("planning_setup_plan", {"objective": "Ship"}, call_id="c1"),
                ("planning_add_step", {"steps": ["A", "B"]}),
                finish_last_step,
            ]
        ),
    )
    transcript.assert_all_ok()
    assert transcript[0].call_id == "c1"
    assert [s.status for s in transcript[-1].value.plan.steps] == ["pending", "done"]


def test_stop_on_failure(executor):
    script = [("nope", {}), ("planning_read_plan", {})]
    assert len(play(executor, script, stop_on_failure=True)) == 1
    assert "Unknown tool 'nope'" in play(executor, script)[0].rendered


def test_from_json_reads_an_llm_echo_style_script(executor):
    model = ScriptedModel.from_json(
        json.dumps([{"tool": "planning_setup_plan", "arguments": {"objective": "x"}}])
    )
    assert len(model) == 1
    play(executor, model).assert_all_ok()
    with pytest.raises(ValueError, match="needs a 'tool'"):
        ScriptedModel.from_json('[{"arguments": {}}]')


def test_bad_step_is_a_clear_type_error(executor):
    with pytest.raises(TypeError, match="script step must be"):
        play(executor, [42])


def test_compose_loads_only_the_packs_asked_for(site, haversack_compose, monkeypatch):
    import sys

    good = site.add("good", GOOD)
    other = site.add("other", "raise RuntimeError('must not be imported')\n")
    monkeypatch.setenv("HAVERSACK_DISABLE", "good")  # ignored: the test names its packs
    prompt = haversack_compose(["good"])
    assert [t.name for t in prompt.tools] == ["good_note"]
    assert good in sys.modules
    assert other not in sys.modules


def test_compose_ignores_the_project_config_file(site, haversack_compose, tmp_path):
    site.add("good", GOOD)
    (tmp_path / "haversack.toml").write_text('disable = ["good"]\n')
    assert [t.name for t in haversack_compose("good").tools] == ["good_note"]


def test_compose_is_strict(site, haversack_compose):
    from haversack.errors import PackConfigError

    with pytest.raises(PackConfigError, match="'missing'"):
        haversack_compose(["missing"])


def test_executors_get_fresh_sessions(haversack_executor, haversack_session):
    first = haversack_executor(packs="planning")
    second = haversack_executor(first.rendered_prompt)
    shared = haversack_executor(packs="planning", session=haversack_session)
    play(first, [("planning_setup_plan", {"objective": "x"})]).assert_all_ok()
    assert first.session is not second.session
    assert shared.session is haversack_session
    assert not play(second, [("planning_read_plan", {})])[0].success


def test_executor_factory_argument_errors(haversack_executor, haversack_compose):
    with pytest.raises(TypeError, match="either a prompt or packs"):
        haversack_executor()
    with pytest.raises(TypeError, match="config= is for packs="):
        haversack_executor(haversack_compose("planning"), config={"planning": {}})


def test_executors_are_closed_at_teardown(pytester):
    pytester.makepyfile(
        """
        import pytest
        from haversack import Binding, ResourceRegistry, Scope

        CLOSED = []

        class Handle:
            def close(self):
                CLOSED.append(True)

        @pytest.fixture
        def prompt(haversack_compose):
            binding = Binding(Handle, lambda r: Handle(), scope=Scope.SINGLETON)
            registry = ResourceRegistry.of(binding)
            return haversack_compose("planning", resources=registry)

        def test_use(haversack_executor, prompt):
            haversack_executor(prompt)
            assert CLOSED == []

        def test_after():
            assert CLOSED == [True]
        """
    )
    pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-p", "no:randomly"
    ).assert_outcomes(passed=2)
