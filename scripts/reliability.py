"""Run the reliability suite and write its figures: reliability/results/*.json, docs/reliability.md.

Usage: ``python scripts/reliability.py [--quick] [pytest args...]``. Without ``--quick`` the
suite runs with ``HAVERSACK_RELIABILITY=full`` (the large hypothesis and run budgets); the
normal test run (``pytest -n auto``) runs the same tests with the quick budget and writes
nothing. ``nox -s reliability`` calls this script. Naming test files under
``tests/reliability/`` runs only those; the other areas keep their last results.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reliability" / "results"
PAGE = ROOT / "docs" / "reliability.md"

AREAS: dict[str, tuple[str, str]] = {
    "hostile-arguments": (
        "1. Hostile arguments",
        "Every tool of every installed pack, enumerated from the composed prompt: the "
        "conformance kit's fixed battery plus hypothesis-generated calls (wrong types, unknown "
        "fields, huge strings, deep nesting, control characters, lone surrogates and bad JSON "
        "escapes, pathological regular expressions and globs, empty and whitespace values, "
        "extreme numbers, malformed JSON text and bytes). A failure is a raised exception, an "
        "error without a message, a must-fail call that succeeded, or a failed call that "
        "changed the session or the workspace (full filesystem dump).",
    ),
    "broken-packs": (
        "2. Broken packs",
        "Faulty distributions installed with uv into a fresh virtual environment: import "
        "error, a hook that raises, hooks that register or return the wrong type, an "
        "incompatible core requirement, clashes of each name kind (tool, section, policy, "
        "resource type) and a slow import. A case is one expectation: the culprit named in "
        "the report and by `haversack packs --json`, the precise strict-mode error, or a "
        "healthy pack still working.",
    ),
    "escapes": (
        "3. Escapes",
        "Path attacks (traversal, absolute, backslash, URL-encoded, unicode look-alikes, NUL "
        "and control characters, long and deep paths, symlinks planted in host mounts and in "
        "the sandbox workspace) against the VFS tools and the sandbox workspace; and the swap "
        "race: a process (on the host, or in the sandbox container) exchanging a workspace "
        "directory with a link to a host directory in a tight loop (renameat2 "
        "RENAME_EXCHANGE) while every file operation runs on paths under it. A canary "
        "outside the allowed roots must keep its content, size, mtime, atime, mode and "
        "owner, never appear in a result, and no file may appear outside the roots.",
    ),
    "sandbox-abuse": (
        "4. Sandbox abuse",
        "Fork bombs, memory hog, disk fillers, runaway loops, network attempts and writes "
        "outside /workspace in a real Podman sandbox: each returns a result with a message, "
        "and the next command in the same session works.",
    ),
    "concurrency": (
        "5. Concurrency",
        "Many sessions on one composed prompt, in threads and in asyncio tasks (`aexecute`), "
        "and one session (one executor) shared by threads and by tasks. A failure is a plan "
        "entry, a file or read-before-write state seen in the wrong session, or a rollback "
        "undoing another call's committed work.",
    ),
    "leaks": (
        "6. Leaks",
        "Memory (tracemalloc) after a warm-up and after many more sessions or calls; and, "
        "after a sandbox run in a child process, containers (by the pack's pid label), "
        "service processes, workspace, snapshot and service directories left behind.",
    ),
    "approval-bypass": (
        "7. Approval bypass",
        "Every tool of every installed pack held by `ApprovalPolicy(['*'])`: a valid call "
        "(generated from the tool's schema) is held, then resent under the same call id with "
        "other arguments (valid or hostile) while the human approves what was shown. A "
        "failure is a held call that changed state, an approval that ran other arguments, a "
        "refused approval that changed state or left the call held, or an exact approval "
        "that ran anything but the arguments shown.",
    ),
    "hostile-model": (
        "8. Hostile model",
        "A scripted model drives `Agent.run` and `Agent.arun` over every installed pack's tools "
        "(approval asked for some): floods of calls past `max_calls_per_turn`, unknown tool "
        "names, hostile and malformed arguments, repeated and missing call ids, approvals "
        "given or refused; and loads of deferred packs (real, repeated and hostile names) "
        "mixed with calls of tools not loaded yet. A failure is a run that raised, a call left "
        "unanswered or answered out of order, the cap not applied, the session's records not "
        "matching the calls that ran, a request whose tools are not the first ones plus "
        "exactly those of the packs loaded so far, or a deferred tool run before its load.",
    ),
    "malformed-frames": (
        "9. Malformed protocol frames",
        "What an MCP client can send the server's frame reader (both transports): invalid "
        "JSON, NaN, nesting a million levels deep, batches, scalars, wrong envelopes and ids, "
        "frames over 4 MiB, plus generated bytes, JSON values and envelopes. Each must become "
        "one message or get the -32700/-32600 error it is owed, within a time bound, without "
        "raising.",
    ),
    "process-containment": (
        "10. Process containment",
        "Commands in a real Podman sandbox that try to outlive their call: a process whose "
        "main thread left with a raw SYS_exit while a writer thread runs (a zombie leader), "
        "setsid floods and sessions, double-forked daemons, fork bombs, background and nohup "
        "jobs, and a symlink swapper racing the host-side file tools and a rollback toward a "
        "canary; and commands attacking the resident executor that starts them (signal, stop, "
        "ptrace, its channel's fds, its interpreter, forged frames). After every call the "
        "container's cgroup must hold only init, `sleep infinity` and the resident executor, "
        "frozen (host view), `ps` must show nothing else (sandbox view), "
        "files the attack writes must stop growing, the next command must work, and the "
        "canary must stay unread and untouched. Wall times are noted, not asserted (the "
        "timeout bound is measured in `bench/bench_podman.py`). Threat model: with the local "
        "rootful service the sandbox kills by the container's cgroup and keeps it frozen "
        "between commands, so no process outlives its call and none runs while the host "
        "touches the workspace; with a remote engine the host has no cgroup access and "
        "relies on `kill -9 -1` from a second exec, the engine's process list and its "
        "pause, which is weaker (details: docs/packs/podman.md, Process containment). These "
        "families run the local path; the Kubernetes backend (no freezer, no pause: "
        "`kill -9 -1` and a count of /proc by exec) meets a zombie leader, setsid floods, "
        "double forks, nohup jobs and a timed-out writer through the Kubernetes API "
        "stand-in in front of real Podman.",
    ),
    "rollback": (
        "11. Exact rollback",
        "The workspace snapshotter alone and the real Podman sandbox under attack: planted "
        "temporary names (a symbolic link to a host canary, a regular file, a hard link, a "
        "FIFO, a directory) at every name restore might use, FIFOs and sockets surviving "
        "failed calls, a tree 1,100 levels deep (made, rolled back, deleted by the model), a "
        "3 GiB sparse file (stored and restored in allocated blocks), byte and depth budgets "
        "failing the call, random changes rolled back (a full manifest compared before and "
        "after: inexact rollbacks must be 0), and the garbage collector running inside "
        "`restore` (it deadlocked before).",
    ),
    "cancellation": (
        "12. Cancellation",
        "A sync call of a real pack tool (`write_file`, `edit_file` with read-before-write) "
        "run the way the MCP server runs it, in a thread of its own, and cancelled at each "
        "point where CPython can deliver the interrupt (every function entry and every "
        "return from C in the core and the pack, found by a profiler that parks the thread "
        "there). A failure is a call recorded as committed whose change is missing, or "
        "not committed whose change stayed, a call recorded twice, the call lock left held "
        "or waited on, or a next call on the same executor that does not complete.",
    ),
    "workspace-boundary": (
        "13. Workspace boundary",
        "The user's own directory as the workspace, with a real git repository and a canary "
        "outside it. Every way the file tools (and, with Podman, sandboxed commands) could "
        "plant what the host later runs: git's config, hooks and info (in every spelling that "
        "normalises there, nested repositories, a `.git` file redirecting git), direnv, "
        "editor and hook-manager files; then the host's own `git status`, `git add` and "
        "`git commit` run. A failure is a change that landed, or a marker the planted command "
        "would create. Beside it, hypothesis interleaves a failing call's changes with "
        "another party's writes: a failure is another party's change lost, a change only "
        "the call made not rolled back, a path reported that nobody raced, or a temporary "
        "file left behind.",
    ),
    "hostile-peers": (
        "14. Hostile peers",
        "Every party Haversack talks to, misbehaving on purpose. Model providers "
        "(`tests/reliability/test_hostile_providers_http.py`): a real local HTTP server that "
        "never answers, trickles a stream that never ends, answers 429 with a minute's "
        "Retry-After, or answers 200 with an HTML page, an empty stream or an empty object, "
        "driving the real OpenAI and Anthropic SDKs (whole, streamed, async) through "
        "`Agent.run`/`arun` under a `Deadline`, and `haversack run` (exit status, one error "
        "line, no traceback); a model and tool text full of terminal escape sequences (OSC "
        "52, clear screen, conceal, C1 CSI, bidi override) and approval arguments with 300 "
        "harmless characters first, printed by `haversack run`; slowloris headers and bodies "
        "against `haversack serve` over HTTP (raw sockets), a real client served after, and "
        "sessions opened past `--max-sessions` (idle ones never closed, then all busy), and "
        "sessions writing 400 KiB workspaces, or opening workspaces that load a 700 KiB host "
        "mount, past a 1 MiB `--max-memory` (idle ones holding memory, then all busy). "
        "External MCP servers "
        "(`tests/reliability/test_hostile_mcp_servers.py`, a server on the real SDK, "
        "`tests/mcp/hostile_server.py`, beside a well-behaved one): input schemas whose "
        "`$ref`s inline exponentially (40 definitions each referring to the next twice), "
        "branching recursive and over-deep schemas, empty, 5,000-character, bidi, zero-width "
        "and path-like tool names and a clashing one, backtracking patterns and pattern "
        "properties given megabyte arguments, 20,000 tools, a 24 MiB result, a 5 KB "
        "description with terminal escapes, a double-forked `setsid` daemon, and six sessions "
        "that never close against `max_live_sessions = 2`. A failure "
        "is a run that hangs past the deadline (a 90 s hang bound, not a timing), an error "
        "other than `DeadlineExceededError`/`ProviderError`, a raw control character on the "
        "terminal, an approval prompt that cut the arguments, a slow connection kept; a "
        "compose that raised or lost the other tools or server, a hostile tool kept, a report "
        "that does not name the server or is not brief, a call that raised or was accepted "
        "against its schema, a result not cut, a daemon alive after the executor closed, "
        "more than max_live_sessions sessions' servers running, a session whose call "
        "failed after its servers were stopped to make room, a busy session closed, or a "
        "call past the memory budget kept or a refusal not naming `--max-memory`.",
    ),
    "tool-identity": (
        "15. Tool identity across composition",
        "Random compositions of two or three contributors whose tools share original names, "
        "under prefixes, renames and filters (removed tools still mentioned by their "
        "contributor's text inside `${if tool:x}` blocks), then random calls. A failure is "
        "a section policy granting on another contributor's tool (an `edit_file` unlocked by "
        "someone else's `read_file`), rendered text or a denial naming a tool that does not "
        "exist or belongs to another contributor, a wrong `ToolContext.identity` or "
        "`tool_name`, or an approval pattern, or a name in your sequential or read-before-write "
        "policy, matching no tool accepted (or one that matches refused). Beside it, the three "
        "bundled packs with random sets of their tools excluded under random prefixes, and "
        "calls that reach every refusal, denial and hint naming a tool: a failure is a "
        "composition refused, or any text the model reads (prompt, descriptions, examples, "
        "messages) naming an excluded tool or a tool by a hard-coded name.",
    ),
    "checkpoints": (
        "16. Checkpoints",
        "A completed `haversack run` checkpoint (planning and VFS state, policy records, an "
        "in-memory workspace) damaged at random: cut at random lengths, random bits flipped, "
        "random fields given random JSON values under a valid header and digest, foreign "
        "header versions; each must be refused with a `CheckpointError` (never another "
        "exception) and, if it loads, resume whole or leave the session untouched. Beside "
        "it, a process writing ~1 MB checkpoints in a loop is SIGKILLed at random moments: "
        "the checkpoint left must load and be the last version written or a newer one. "
        "(`tests/agent/test_checkpoint_cli.py` kills `haversack run` at every turn boundary "
        "and at random moments and checks the resumed run ends exactly as an uninterrupted "
        "one.)",
    ),
    "engine-failures": (
        "17. Podman engine failures",
        "The Podman engine as a hostile peer (`tests/reliability/test_engine_failures.py`, real"
        " Podman, with a proxy in front of it where this machine cannot produce the fault): the"
        " sandbox's container removed from outside round after round, a container whose init "
        "exits at once, an engine that holds the start request forever then recovers, one that "
        "reports the limits dropped (as a rootless cgroup-v1 engine does), engines that never "
        "answer over TCP and over ssh, a network mode asked for without `accept_network_risk`, "
        "and hostile commands (floods, daemons, a fork bomb, a busy loop past its timeout, "
        "kills, a memory hog, writes outside /workspace, a connection attempt) on a real remote"
        " engine over TCP (its own network and mount namespaces and storage), where nothing the"
        " command started may be left. A failure is a call that raised (an aborted evaluation),"
        " a result without a message or without its cause, a success where the sandbox could "
        "not be trusted, a silent engine not bounded by the call, file tools or `close()` "
        "broken afterwards, a lost workspace, the next command failing once the engine answers "
        "again, or a command-user process left on the remote engine."
        " The Kubernetes backend the same way, through the Kubernetes API stand-in in front of "
        "real Podman (`tests/reliability/test_kubernetes.py`): its Pod deleted from outside "
        "round after round, an image it cannot run, limits an admission rewrote, and an API "
        "that never answers.",
    ),
    "workspace-agent": (
        "18. Workspace agent",
        "The workspace agent (a volume's file operations in a second container, over one "
        "exec; `tests/reliability/test_workspace_agent.py`, real Podman) as a hostile peer: "
        "round after round it sends garbage, a frame over the size limit, JSON that is not "
        "an object, an answer to another request or a frame that is no answer, hangs, exits "
        "mid-request, or its container is killed or removed from outside. A failure is an "
        "operation still running after 60 s, anything but one `WorkspaceAgentError` with a "
        "message, or the next operation failing or losing the volume's files.",
    ),
    "python-kernel": (
        "19. Python kernel",
        "A random run of `evaluate_python` kernel calls on a real Podman sandbox, driven as "
        "the executor drives a call (a snapshot before it, a restore when it fails): each "
        "assigns random variables and fails at a random point of its code (an exception, "
        "`sys.exit`, `os._exit`, its process killed from a shell it started, a thread left "
        "running, a memory bomb, a timeout), or succeeds and is rolled back afterwards. After "
        "every call the kernel's variables must equal those of the last call that succeeded "
        "and was not rolled back. Calls that end the kernel (a command's `kill -9 -1`, "
        "garbage written into the kernel's channel) must be told as a lost state, never "
        "hang, and leave a kernel with nothing defined.",
    ),
}


#: Bugs the suite found, kept on the page after they are fixed (the figures then show 0).
FINDINGS: tuple[str, ...] = (
    "`ToolExecutor.execute` raised `RecursionError` for a tool without parameters given "
    "deeply nested JSON text (`'[' * 100000`): `_parse_arguments` caught only `ValueError` "
    "from `json.loads`. Fixed in `core/src/haversack/_executor.py` (c5ae997).",
    "`ToolExecutor.execute` raised `RecursionError` for any tool given a decoded mapping "
    "nested deeper than the recursion limit (~2000 levels): `serde.parse` re-encodes "
    "mappings with `json.dumps`, which raised outside the caught `TypeError`/`ValueError`. "
    "Found in every tool, Podman's included. Fixed in `core/src/haversack/serde/_parse.py` "
    "(ce6ebb8).",
    "One `ToolExecutor` shared by threads lost committed work: a failing call restored its "
    "snapshot over calls that had committed meanwhile (files and plan steps vanished, a "
    "refused overwrite succeeded), and `asyncio.gather` of `aexecute` calls with async "
    "handlers raised `ResourceError`. Calls on one executor now take turns "
    "(`core/src/haversack/_call_lock.py`, a938b5c).",
    "Each Podman OOM kill left an empty `oom` file in the caller's working directory: "
    "conmon writes that marker into its cwd, which the private `podman system service` "
    "inherited. The service now starts in its own folder "
    "(`plugins/podman/src/haversack_podman/_service.py`, 9e618f7).",
    "The Podman pack's `HostFilesystem` resolved a path with `realpath()`, checked it was "
    "inside the workspace, then opened it: a process swapping a workspace directory with a "
    "link to a host directory won the race (the swap-race harness, run against that class "
    "with 3,000 attempts per operation: 27 findings for read_text, the root-only canary "
    "read and its text returned; 22 files created in the host directory by write; a host "
    "directory listed 11 times by list; the host victim file overwritten). The workspace "
    "is now a `haversack.filesystem.DirectoryFilesystem`, which resolves beneath a root "
    "handle and never follows a link (c69ea8e, c63d5ae).",
    "Processes outlived their command (red team, issue 13): a process whose main thread "
    "left with a raw SYS_exit while another thread ran showed as a zombie in "
    "/proc/<pid>/stat, so the process-group sweep skipped it and it kept writing to the "
    "workspace after its call and across rollbacks; a setsid flood stretched a 5 s timeout "
    "to 20-24 s and left the sandbox unusable. The sandbox now kills by the container's "
    "cgroup (frozen, every task but init and sleep SIGKILLed) and keeps it frozen between "
    "commands (`plugins/podman/src/haversack_podman/_cgroup.py`, 8d81f8c).",
    "Rollback of the sandbox workspace could be broken or made inexact from inside: a "
    "symbolic link at restore's fixed temporary name made every later restore fail, a tree "
    "1,100 levels deep made every snapshot raise `RecursionError`, a 3 GiB sparse file cost "
    "3 GiB of snapshot storage, failed calls deleted FIFOs and sockets, and the garbage "
    "collector running a snapshot finalizer inside `restore` deadlocked. Fixed in "
    "`core/src/haversack/filesystem/_snapshot.py` (branch `snapshots`).",
    "A call cancelled over MCP could hang its session for good: the interrupt raised in "
    "the tool's thread landed between taking the executor's call lock and the `try` that "
    "gives it back, so the lock stayed held (cancelled at point 13 of `write_file`, the "
    "return of the lock's acquire). With the interrupt free to land anywhere, 24 more of "
    "the 61 points tried broke the call's all-or-nothing record (a committed change with "
    "no record of the call, from interrupts inside publishing). Interrupts now land "
    "only in the tool's own code (`core/src/haversack/_interrupt.py`).",
    "Rollback of a workspace with hard links of FIFOs, sockets, devices and symbolic links "
    "was inexact (the hard-link family at the full budget: 9 of 1,353 batches): restore "
    "kept a node of another link group renamed over a name and joined the two groups, and "
    "a hard link made, written through and removed within one command left the tracked "
    "manifest with the file's old content, so a later failed call rolled the file back to "
    "it. Fixed in `core/src/haversack/filesystem/_snapshot.py` and `_inotify.py`.",
    "A resumed checkpoint whose workspace did not match (an in-memory workspace whose "
    "files disagree with its tree hash, found at the full budget: 2 of 2,000 hostile "
    "files) was refused only after the session's slices and policy records had been "
    "loaded: a half-loaded session. The workspace is now checked (and written back) "
    "before the session is touched (`core/src/haversack/agent/_loop.py`, branch "
    "`checkpoint`).",
)


#: The path-safety part of the threat model: what the file operations on a host directory
#: (the sandbox's workspace, a user's project) guarantee and what they do not.
PATH_SAFETY: tuple[str, ...] = (
    "**Guaranteed:** every host-side path operation of the file tools on a directory "
    "workspace (`haversack.filesystem.DirectoryFilesystem`: exists, stat, list, read, write, "
    "edit, glob, grep, delete, mkdir and the walks behind them) resolves beneath an open "
    "handle on the workspace root, with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | "
    "RESOLVE_NO_MAGICLINKS)` or, where the kernel lacks it, a per-component `O_NOFOLLOW` "
    "walk. A symbolic link at any component is refused (`LinkRefusedError`, naming the "
    "path), whoever planted it and whenever: a directory swapped for a link mid-operation "
    "makes the operation fail, never leave the workspace (the swap-race figures above). "
    "Links are listed as links and deleted as names. FIFOs, sockets and devices are never "
    "opened for reading or writing (checked on an `O_PATH` handle first). Walks are "
    "iterative and bounded.",
    "**Guaranteed by the Podman pack:** copying configured mounts in, giving the workspace "
    "to the container user and removing it never follow a link and work at any depth; a "
    "user's own directory (`workspace = DIR`) is never chowned or removed.",
    "**Guaranteed since area 13:** the file tools never write a file in place when it has "
    "another name (a hard link, possibly outside the workspace): a new file replaces that "
    "name and the other names keep their content; in a user's own directory, protected "
    "paths (git's config and hooks, direnv, editor tasks...) are never changed and a "
    "rollback undoes only the call's own changes (see the trust boundary page). The "
    "snapshot and restore walks (`DirectorySnapshotter`) and the sandbox's quiescing while "
    "the host works in the workspace are covered by their own "
    "families. Reading a file the process may read is not prevented inside the workspace: "
    "the boundary is the workspace root, not file permissions.",
)


def run_suite(quick: bool, extra: list[str]) -> tuple[int, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="haversack-reliability-") as folder:
        env = dict(os.environ)
        env["HAVERSACK_RELIABILITY_RESULTS"] = folder
        if not quick:
            env["HAVERSACK_RELIABILITY"] = "full"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "auto",
            "-p",
            "no:cacheprovider",
            *([] if _narrowed(extra) else ["tests/reliability"]),
            *extra,
        ]
        code = subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode
        figures = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    return code, figures


def _narrowed(extra: list[str]) -> bool:
    """Whether the run names its own test files (then other areas keep their last results)."""
    return any(arg.startswith("tests/reliability/") for arg in extra)


def write_results(
    figures: list[dict[str, Any]], meta: dict[str, Any], *, merge: bool = False
) -> None:
    """Write each area's figures; an area without any keeps its last results file. With
    ``merge`` (a run of some test files only) an area keeps its other figures too: one file
    of an area run alone never wipes what the area's other files measured."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    for area in AREAS:
        items = sorted((f for f in figures if f["area"] == area), key=lambda f: f["name"])
        if not items:
            continue
        path = RESULTS / f"{area}.json"
        if merge and path.exists():
            fresh = {f["name"] for f in items}
            kept = [f for f in json.loads(path.read_text())["figures"] if f["name"] not in fresh]
            items = sorted([*items, *kept], key=lambda f: f["name"])
        payload = {"meta": meta, "figures": items}
        path.write_text(json.dumps(payload, indent=2) + "\n")


def _fmt_notes(notes: dict[str, Any]) -> str:
    parts = []
    for key, value in notes.items():
        if isinstance(value, dict):
            if not value:
                continue
            value = "; ".join(f"{k}: {v}" for k, v in value.items())
        parts.append(f"{key.replace('_', ' ')}: {value}")
    return "<br>".join(parts).replace("|", "\\|").replace("\n", " ")


def render_page(meta: dict[str, Any]) -> str:
    lines = [
        "# Reliability",
        "",
        "<!-- Generated by `nox -s reliability` (scripts/reliability.py); do not edit. -->",
        "",
        "Proof, with figures, that Haversack keeps working, loses nothing and lets nothing "
        "out. The suite lives in `tests/reliability/`; the normal test run (`pytest -n auto`, "
        "CI) runs it with a small budget, `nox -s reliability` with the full budget "
        "(`HAVERSACK_RELIABILITY=full`), and rewrites this page and "
        "`reliability/results/*.json`. Durations are figures, never asserted.",
        "",
        f"Last run: {meta['date']}, budget **{meta['budget']}**, Python {meta['python']}, "
        f"{meta['machine']}; pytest exit code {meta['pytest_exit']}"
        + (f" ({meta['scope']})." if meta.get("scope") else "."),
        "",
        "| Area | Cases tried | Failures found | Time (s) |",
        "|---|---:|---:|---:|",
    ]
    all_figures: dict[str, list[dict[str, Any]]] = {}
    for area in AREAS:
        path = RESULTS / f"{area}.json"
        figs = json.loads(path.read_text())["figures"] if path.exists() else []
        all_figures[area] = figs
        cases = sum(f["cases"] for f in figs)
        failures = sum(f["failures"] for f in figs)
        seconds = sum(f["duration_s"] for f in figs)
        lines.append(
            f"| [{AREAS[area][0]}](#{_anchor(AREAS[area][0])}) | {cases:,} | "
            f"{failures} | {seconds:.1f} |"
        )
    lines += ["", "## Bugs found", ""]
    lines += [f"- {finding}" for finding in FINDINGS]
    lines += ["", "## Path safety: what is and is not guaranteed", ""]
    lines += [f"- {item}" for item in PATH_SAFETY]
    for area, (title, text) in AREAS.items():
        lines += ["", f"## {title}", "", text, ""]
        figs = all_figures[area]
        if not figs:
            lines.append("_Not run (Podman unavailable or the tests were deselected)._")
            continue
        lines += ["| Figure | Cases | Failures | Time (s) | Notes |", "|---|---:|---:|---:|---|"]
        for f in figs:
            lines.append(
                f"| {f['name']} | {f['cases']:,} | {f['failures']} | "
                f"{f['duration_s']:.2f} | {_fmt_notes(f.get('notes', {}))} |"
            )
        problems = [(f["name"], p) for f in figs for p in f.get("problems", [])]
        if problems:
            lines += ["", "Failures found:", ""]
            lines += [f"- {name}: `{_code(p)}`" for name, p in problems[:30]]
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    return text[:300].replace("`", "'").replace("\n", " ")


def _anchor(title: str) -> str:
    return "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c == "-")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    extra = [a for a in argv if a != "--quick"]
    code, figures = run_suite(quick, extra)
    meta = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "budget": "quick" if quick else "full",
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "pytest_exit": code,
    }
    areas = sorted({f["area"] for f in figures})
    missing = [area for area in AREAS if area not in areas]
    if missing:
        # A run that reached only some areas (named files, -k, an interrupted run) never
        # overwrites the others' figures with nothing.
        meta["scope"] = (
            f"that run covered only {', '.join(areas) or 'no area'}; the other areas show "
            "their own last run, whose budget their results file records"
        )
        if not _narrowed(extra):
            print(f"reliability: no figures from {', '.join(missing)}; kept their last results")
    write_results(figures, meta, merge=_narrowed(extra))
    PAGE.write_text(render_page(meta))
    print(f"reliability: {len(figures)} figures; wrote {RESULTS} and {PAGE}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
