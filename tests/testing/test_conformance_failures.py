"""The conformance suite fails, naming the problem, on deliberately bad packs."""

from __future__ import annotations

import pytest

from haversack.testing import (
    CHECKS,
    assert_pack_conforms,
    check_composes_alone,
    check_import_time,
    check_malformed_arguments,
    compose_packs,
    pack_problems,
)

from ._packs import BROKEN, GOOD, HONEST, LIAR, RAISER, SLOW, UNDOCUMENTED

pytest_plugins = ["pytester"]


def test_good_pack_conforms(site):
    site.add("good", GOOD)
    assert pack_problems("good") == {}
    assert_pack_conforms("good")


def test_missing_field_description_is_reported(site):
    site.add("undoc", UNDOCUMENTED)
    problems = pack_problems("undoc")
    assert list(problems) == ["descriptions"]
    assert "params field 'text' has no description" in problems["descriptions"][0]
    with pytest.raises(AssertionError, match=r"\[descriptions\] tool 'undoc_echo'"):
        assert_pack_conforms("undoc")


def test_read_only_tool_that_changes_state_on_bad_input_is_reported(site):
    site.add("liar", LIAR)
    problems = check_malformed_arguments(compose_packs("liar"))
    assert problems
    assert all("left state behind: session slice" in p for p in problems)
    assert any("huge string in 'number'" in p for p in problems)


def test_executor_rollback_makes_the_honest_version_pass(site):
    site.add("honest", HONEST)
    assert check_malformed_arguments(compose_packs("honest")) == []


def test_tool_that_ends_the_evaluation_on_bad_input_is_reported(site):
    site.add("raiser", RAISER)
    problems = check_malformed_arguments(compose_packs("raiser"))
    assert problems
    assert "the call raised PromptEvaluationError: boom" in problems[0]


def test_slow_import_is_reported_and_budget_is_configurable(site):
    site.add("slow", SLOW)
    [problem] = check_import_time("slow", 0.1, attempts=1)
    assert "budget 0.10 s" in problem
    assert check_import_time("slow", 30.0) == []


def test_pack_without_core_requirement_is_reported(site):
    site.add("nodeps", GOOD, requires=())
    [problem] = check_composes_alone("nodeps")
    assert "does not declare a dependency on haversack" in problem


def test_broken_pack_stops_at_the_first_check(site):
    site.add("broken", BROKEN)
    problems = pack_problems("broken")
    assert list(problems) == ["composes_alone"]
    assert "frobnicate" in problems["composes_alone"][0]


def test_missing_pack_is_reported(site):
    problems = check_composes_alone("nowhere")
    assert problems[-1] == "pack 'nowhere' is not installed (no 'haversack' entry point)."


def test_skip_leaves_checks_out_and_rejects_unknown_names(site):
    site.add("undoc", UNDOCUMENTED)
    assert pack_problems("undoc", skip=["descriptions"]) == {}
    with pytest.raises(ValueError, match="Unknown checks"):
        pack_problems("undoc", skip=["spelling"])
    assert "descriptions" in CHECKS


def test_subclassed_suite_reports_one_failing_test(site, pytester, monkeypatch):
    site.add("liar", LIAR)
    monkeypatch.setenv("PYTHONPATH", str(site.root))
    pytester.makepyfile(
        """
        from haversack.testing import PackConformance

        class TestLiar(PackConformance):
            pack = "liar"
        """
    )
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"
    )
    result.assert_outcomes(passed=len(CHECKS) - 1, failed=1)
    result.stdout.fnmatch_lines(["*test_malformed_arguments*", "*left state behind*"])
