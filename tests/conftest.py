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
        "test_official_client_cancels_an_async_call_and_the_next_call_works",
        "test_official_client_sees_titles_output_schemas_and_structured_content",
    ),
    "server/test_conformance.py": ("test_conformance_suite_server_scenarios",),
    "server/test_serve_cli.py": (
        "test_serve_http_with_a_token_file_and_the_default_client_mode",
        "test_serve_exposes_the_planning_pack_with_its_policy",
        "test_serve_with_a_workspace_lets_the_client_edit_the_project",
    ),
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
        "test_run_keeps_every_turn_in_order",
        "test_the_adapters_async_helpers_keep_a_mixed_turn_in_order",
    ),
    # The test kit running pytest on generated projects (31-38 s each).
    "testing/test_docs.py": ("test_testing_page_examples_pass",),
    "testing/test_conformance_failures.py": (
        "test_subclassed_suite_reports_one_failing_test",
        "test_slow_import_is_reported_and_budget_is_configurable",
    ),
    "testing/test_new_pack.py": ("test_scaffolded_tests_pass",),
    # Measured 2026-11-28 (--durations, fast tier on 3.11, the machine loaded at ~8): the tests
    # that took 3 s or more there (about 1 s on a quiet machine). One case of each area stays
    # in the fast tier, so that every Python still starts MCP servers and HTTP sessions.
    "agent/test_checkpoint.py": ("test_every_slice_and_the_memory_workspace_round_trip",),
    "agent/test_checkpoint_cli.py": (
        "test_killed_at_a_random_moment_then_resumed",
        "test_killed_at_a_turn_boundary_then_resumed",
        "test_killed_at_the_approval_prompt_then_resumed_asks_the_same_question",
    ),
    "agent/test_llamacpp.py": ("test_haversack_run_against_the_server_with_no_key",),
    "agent/test_servers.py": (
        "test_an_empty_stream_ends_haversack_run_with_one_line_and_exit_3",
        "test_run_takes_the_api_key_and_the_tool_choice",
    ),
    "bridges/test_imports.py": ("test_each_bridge_imports_only_its_own_framework",),
    "core/test_change_tracker.py": (
        "test_a_queue_overflow_falls_back_to_a_walk_and_misses_nothing",
    ),
    "core/test_packs_user_errors.py": ("test_a_pack_past_the_import_budget_is_reported_timed_out",),
    "core/test_session_log.py": ("test_memory_is_flat_over_many_large_calls",),
    "core/test_startup_imports.py": (
        "test_an_mcp_pack_without_servers_imports_neither_asyncio_nor_the_client",
        "test_packs_imports_pydantic_only_to_fill_its_schema_cache",
        "test_render_never_imports_pydantic",
    ),
    "integration/test_core_readme.py": (
        "test_the_front_page_example_runs_in_an_installed_environment",
    ),
    "integration/test_packs_installed.py": (
        "test_call_a_tool",
        "test_python_dash_m",
    ),
    "integration/test_podman_setup.py": ("test_the_wheel_carries_the_setup_script",),
    "integration/test_user_errors_installed.py": (
        "test_a_hanging_pack_is_reported_timed_out_by_listings",
        "test_a_typo_in_a_named_pack_is_an_error_everywhere",
        "test_check_names_config_mistakes_and_resources",
        "test_config_from_any_working_directory",
        "test_unknown_option_raises_without_strict",
    ),
    "mcp/test_hostile_servers.py": (
        "test_a_setsid_daemon_of_a_server_dies_with_it",
        "test_an_answer_the_client_cannot_parse_fails_the_listing_at_once",
        "test_exponential_and_recursive_schemas_leave_out_that_tool_only",
        "test_relative_command_and_cwd_resolve_against_the_config_file",
        "test_results_are_capped_and_read_in_linear_time_and_tools_are_counted",
    ),
    "mcp/test_live_sessions.py": (
        "test_a_busy_session_is_not_stopped_and_the_refusal_names_the_limit",
        "test_idle_sessions_servers_are_stopped_past_the_cap_and_restart",
    ),
    "mcp/test_mcp_pack.py": (
        "test_a_call_past_its_timeout_is_cancelled_with_a_clear_error",
        "test_a_crash_under_a_session_on_the_callers_loop_is_reported_and_recovered",
        "test_a_servers_own_tool_name_is_refused_everywhere_naming_the_prefixed_tool",
        "test_a_writing_tool_is_not_read_only_and_its_effects_stay",
        "test_aexecute_on_a_long_lived_loop_calls_the_session_on_that_loop",
        "test_both_session_homes_honour_timeouts_and_cancellation",
        "test_bridged_tools_served_again_over_mcp",
        "test_closing_the_executor_on_the_session_loop_stops_the_server",
        "test_other_threads_reach_a_session_that_lives_on_a_callers_loop",
        "test_policies_govern_external_tools",
        "test_prefix_and_tool_filter",
        "test_servers_start_lazily_stop_on_close_and_restart_after_a_crash",
        "test_the_loops_end_still_waits_for_the_server",
        "test_tool_names_are_checked_for_uniqueness",
    ),
    "mcp/test_startup.py": (
        "test_call_starts_each_server_once",
        "test_a_normal_start_prints_no_slow_pack_notice",
        "test_a_listing_session_nobody_claims_is_stopped",
        "test_a_changed_server_is_not_taken_over",
        "test_a_server_that_changed_its_tools_is_listed_again_before_a_call",
    ),
    "reliability/test_checkpoints.py": (
        "test_a_writer_killed_at_random_leaves_a_whole_checkpoint",
    ),
    "reliability/test_hostile_mcp_servers.py": (),
    "reliability/test_hostile_providers_http.py": (),
    "reliability/test_hostile_tool_streams.py": (
        "test_tool_call_streams_are_assembled_or_refused",
    ),
    "reliability/test_identity.py": ("test_random_compositions_keep_every_tool_to_its_identity",),
    "reliability/test_redteam_sizes.py": (),
    "server/test_mcp_content.py": (
        "test_media_come_back_as_their_own_content_blocks",
        "test_media_over_the_cap_are_refused_or_left_out_with_a_note",
    ),
    "server/test_mcp_elicitation.py": (),
    "server/test_mcp_http.py": (
        "test_requests_without_the_token_or_from_a_foreign_origin_are_refused",
        "test_malformed_bodies_get_json_rpc_errors",
        "test_a_cancelled_call_over_http_is_rolled_back_and_the_session_goes_on",
    ),
    "server/test_mcp_stdio.py": ("test_mcp_client_lists_calls_and_sees_denials_and_rollbacks",),
    "server/test_serve_ask.py": (
        "test_a_client_without_elicitation_gets_a_refusal_not_a_hang",
        "test_ask_puts_matching_calls_to_the_user_and_every_answer_decides",
        "test_ask_writes_asks_for_every_tool_not_read_only",
        "test_without_ask_nothing_is_held",
    ),
    "testing/test_fake_provider.py": (
        "test_a_streamed_response_accumulates_to_the_same_output",
        "test_anthropic_messages_streamed_and_whole",
    ),
    "testing/test_plugin_is_light.py": ("test_plugin_import_is_light",),
    "vfs/test_directory_workspace.py": (
        "test_the_cli_names_a_missing_workspace",
        "test_the_cli_reads_and_writes_the_named_directory",
    ),
    "vfs/test_properties.py": (
        "test_random_operations_only_raise_filesystem_errors_and_restore_is_exact",
    ),
    "vfs/test_tool_properties.py": ("test_random_calls_never_raise_and_failures_change_nothing",),
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
