"""Fixtures shared across the test packages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from haversack.testing import FakeSite

if TYPE_CHECKING:
    from haversack_podman import PodmanService

# Hostile-input tests build directory trees deeper than the default recursion limit (1,000)
# and pytest deletes old temporary directories with the recursive shutil.rmtree: a tree left
# behind by one run would end every later run on the machine with a RecursionError. The
# interpreter's own recursion of pure-Python calls does not use the C stack (3.11+), so a
# higher limit costs nothing until it is used.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

#: The tests that take several seconds each (measured with ``--durations`` on the shared 2-core
#: machine, loaded, on 2026-11-27), marked ``slow`` here in one place: ``./dev test`` runs them
#: once, in the whole suite on the first Python, and leaves them out of the fast tier it runs on
#: the others (``-m "not podman and not slow"``). Per file under tests/, its slow tests: a name
#: (every case), a name with ``[id]`` (that case), or nothing (every test of the file);
#: tests/test_repository.py checks that each entry still names a test.
SLOW_TESTS: dict[str, tuple[str, ...]] = {
    # The reliability suite's heavy attacks; seconds a test (or a case).
    "reliability/test_cancellation.py": (
        "test_a_cancellation_at_any_point_rolls_back_or_commits_whole",  # 250
    ),
    "reliability/test_hostile_model.py": ("test_a_hostile_model_gets_bounded_answered_runs",),  # 68
    "reliability/test_mcp_frames.py": ("test_generated_frames",),  # 53
    "reliability/test_leaks.py": (),  # 39-51
    "reliability/test_hostile_arguments.py": (),  # 11-37
    "reliability/test_hostile_sizes.py": (),  # 13-32
    "reliability/test_broken_packs.py": ("test_broken_pack_matrix",),  # 24 and 19 of set-up
    "reliability/test_workspace_boundary.py": ("test_foreign_writers_keep_their_changes",),  # 23
    "reliability/test_rollback.py": ("test_gc_inside_restore_never_deadlocks",),  # 21
    "reliability/test_hard_links.py": ("test_hard_links_of_every_kind_roll_back_exactly",),  # 14
    # Property and deep-tree tests of the core (12-28 s each).
    "core/test_filesystem_snapshot.py": (
        "test_tracked_snapshots_agree_with_full_walks_and_restore_exactly",
        "test_a_tree_1100_levels_deep_snapshots_restores_and_closes",
    ),
    "core/test_session_snapshot.py": (
        "test_snapshots_stay_exact_however_changes_snapshots_and_restores_interleave",
        "test_restore_is_exact_for_state_and_leaves_logs_alone",
    ),
    "core/test_paths.py": (
        "test_the_canonical_shortcut_only_accepts_what_normalisation_leaves_unchanged",
    ),
    # The MCP server over real transports: the cases that wait longest (15-28 s each).
    "server/test_mcp_protocol.py": (
        "test_approval_asked_over_elicitation_on_the_wire_and_a_disconnect_while_waiting",
        "test_a_call_held_for_approval_is_refused_with_how_to_go_on",
        "test_malformed_frames_get_json_rpc_errors_and_the_connection_survives",
        "test_progress_notifications_carry_the_token_and_increase",
        "test_a_disconnect_cancels_the_running_call",
        "test_a_cancelled_sync_call_stops_rolls_back_and_gets_no_response",
        "test_a_url_only_elicitation_client_is_not_asked_for_a_form",
    ),
    "server/test_mcp_elicitation.py": (
        "test_an_http_client_that_goes_away_while_asked_leaves_nothing_behind",
        "test_no_answer_within_the_timeout_is_a_refusal_and_the_request_is_cancelled[http]",
        "test_other_requests_are_served_while_a_call_awaits_approval[http]",
    ),
    "server/test_conformance.py": ("test_conformance_suite_server_scenarios",),
    "server/test_serve_cli.py": ("test_serve_http_with_a_token_file_and_the_default_client_mode",),
    "integration/test_skip_gate.py": (
        "test_only_allowed_skips_pass",  # 23
        "test_env_conditioned_entries_apply_only_with_their_variable",  # 23
        "test_a_skip_not_in_the_allowlist_fails",  # 23
    ),
    # The agent's CLI and concurrent turns against the fake provider servers (23-64 s each);
    # one end-to-end run (openai) and the transcript case stay in the fast tier.
    "agent/test_cli_run.py": (
        "test_a_run_end_to_end[openai-responses]",
        "test_a_run_end_to_end[anthropic]",
        "test_without_a_terminal_asked_calls_are_refused_unless_yes",
        "test_a_missing_key_is_a_precise_error",
        "test_edit_on_a_terminal_runs_the_new_arguments",
        "test_no_on_a_terminal_refuses_it",
        "test_the_turn_cap_exits_1",
        "test_yes_on_a_terminal_runs_the_call",
    ),
    "agent/test_concurrent.py": (
        "test_a_failing_read_only_call_leaves_the_others_alone",
        "test_read_only_calls_run_together_results_and_records_in_call_order[anthropic]",
        "test_a_turn_with_a_writing_call_runs_in_order",
    ),
    # The test kit running pytest on generated projects (31-38 s each).
    "testing/test_docs.py": ("test_testing_page_examples_pass",),
    "testing/test_conformance_failures.py": ("test_subclassed_suite_reports_one_failing_test",),
    "testing/test_new_pack.py": ("test_scaffolded_tests_pass",),
    # Waits out the default 10 s import budget (the other cases set 1 s).
    "reliability/test_redteam_sizes.py": ("test_hanging_pack_import_is_reported[packs-sleeps]",),
}


def _slow_node_ids() -> frozenset[str]:
    ids: set[str] = set()
    for path, tests in SLOW_TESTS.items():
        ids.update([f"tests/{path}::{test}" for test in tests] or [f"tests/{path}"])
    return frozenset(ids)


#: Environment variables that select packs or change how they load.
HAVERSACK_ENV = (
    "HAVERSACK_PACKS",
    "HAVERSACK_DISABLE",
    "HAVERSACK_STRICT",
    "HAVERSACK_TRACE",
    "HAVERSACK_DEBUG",
)


@pytest.fixture(scope="session", autouse=True)
def _own_discovery_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the tests' discovery caches (one file per fake site) out of the user's home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HAVERSACK_CACHE_DIR", str(tmp_path_factory.mktemp("discovery-cache")))
        yield


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSite]:
    """A folder of fake installed packs: discovery sees only what the test adds to it.

    The folder is importable, the selection variables are unset, the working directory is
    the test's own (no project config file applies), and the fake packs' modules (named
    ``hvt_*`` by convention) are forgotten afterwards.
    """
    for var in HAVERSACK_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield FakeSite(tmp_path / "site").activate(monkeypatch)
    for name in set(sys.modules) - before:
        if name.startswith("hvt_"):
            del sys.modules[name]


def require_podman() -> None:
    """Skip (with the reason) only when the user opted out; never on a broken Podman."""
    if os.environ.get("HAVERSACK_SKIP_PODMAN") == "1":
        pytest.skip("HAVERSACK_SKIP_PODMAN=1: Podman tests disabled by the environment")


@pytest.fixture(scope="session")
def podman_service() -> PodmanService:
    """This worker's private Podman service, with the sandbox images built.

    Podman tests run against real Podman: a missing or broken Podman fails them with the
    pack's own error message (see :func:`require_podman` for the one way to skip them).
    """
    require_podman()
    from haversack_podman import build_images, get_service

    build_images()
    return get_service(None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests :data:`SLOW_TESTS` names ``slow``."""
    slow = _slow_node_ids()
    for item in items:
        test = item.nodeid.split("[", 1)[0]
        if {item.nodeid, test, test.split("::", 1)[0]} & slow:
            item.add_marker(pytest.mark.slow)
