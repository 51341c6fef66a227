"""Hostile peers, MCP servers: a real-SDK server (``tests/mcp/hostile_server.py``) offering
exponential, recursive and over-deep schemas, bad names, backtracking patterns, floods of
tools, huge results and a ``setsid`` daemon, beside a well-behaved server. Each hostile tool
must cost that tool only (left out, reported with its server's name), every call must end
with a result (wall times are noted, not asserted: the work is linear by construction, RE2
and budgets; a backtracking pattern would not finish at all), and no process of the server
may outlive the executor."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

from haversack import Session, ToolExecutor, compose
from haversack_mcp import tool_name

SCRIPT = Path(__file__).parent.parent / "mcp" / "hostile_server.py"
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
AREA = "hostile-peers"


def _chain(levels: int) -> dict:
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"D{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs}


def _tree(branches: int) -> dict:
    node = {
        "type": "object",
        "properties": {f"k{i}": {"$ref": "#/$defs/N"} for i in range(branches)},
    }
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/N"}}, "$defs": {"N": node}}


def _nested(levels: int) -> dict:
    node: dict = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"x": node}}
    return node


def _tool(name: str, schema: dict | None = None, description: str = "d") -> dict:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


#: Tools that must be left out: (name as sent, why).
LEFT_OUT = [
    _tool("chain40", _chain(40)),
    _tool("chain20", _chain(20)),
    _tool("tree2", _tree(2)),
    _tool("tree8", _tree(8)),
    _tool("nested", _nested(60)),
    _tool("x" * 5000),
    _tool(""),
    _tool("\u202eevil"),
    _tool("zero\u200bwidth"),
    _tool("nul\x00name"),
    _tool("../.."),
    _tool("Kept"),  # becomes 'kept', taken by the tool below
]
PATTERNS = {
    "type": "object",
    "properties": {
        "a": {"type": "string", "pattern": "^(a|aa)+$"},
        "b": {"type": "string", "pattern": "^(x+x+)+y$"},
        "c": {"type": "string", "pattern": "(?=a)a"},
    },
    "patternProperties": {"^(k|kk)+$": {"type": "integer"}},
    "additionalProperties": False,
}
KEPT = [
    _tool("kept"),
    _tool("patterns", PATTERNS),
    _tool("described", description="long " * 1000 + "\x1b[2J\x1b]52;c;eA==\x07"),
]
HOSTILE_ARGUMENTS = [
    {"a": "a" * 5000 + "!"},
    {"b": "x" * 5000},
    {"k" * 5000 + "!": 1},
    {"k" * 5000: "not an integer"},
    {"a": "a" * 1_000_000 + "!"},
    {"c": "b" * 100_000},
]


def _plan(tmp_path: Path, **plan) -> list[str]:
    path = tmp_path / f"plan-{len(list(tmp_path.glob('plan-*')))}.json"
    path.write_text(json.dumps(plan))
    return [sys.executable, str(SCRIPT), str(path)]


def test_hostile_mcp_server_battery(figure, tmp_path, caplog) -> None:
    fig = figure(AREA, "MCP servers: schemas, names, patterns, tool floods, results")
    command = _plan(tmp_path, tools=LEFT_OUT + KEPT, many=20_000, result_chars=24 << 20)
    servers = {
        "bad": {"command": command, "max_tools": 40, "max_result_chars": 10_000},
        "time": {"command": TIME},
    }
    start = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="haversack.mcp"):
        try:
            rendered = compose(
                ns="t", key="k", packs=["mcp"], config={"mcp": {"servers": servers}}, strict=True
            ).render()
        except Exception as exc:
            fig.problem(f"compose raised {type(exc).__name__}: {str(exc)[:300]}")
            fig.assert_clean()
            raise
    elapsed = time.perf_counter() - start
    fig.note("compose_s", round(elapsed, 2))
    names = [t.name for t in rendered.tools]
    fig.case()
    fig.check(
        names[:3] == ["bad_kept", "bad_patterns", "bad_described"],
        f"the well-formed tools of the hostile server: {names[:5]}",
    )
    fig.case()
    fig.check("time_get_current_time" in names, "the other server's tools were lost")
    fig.case()
    expected = [t["name"] for t in KEPT] + [f"t{i}" for i in range(37)]
    got = [n for n in names if n.startswith("bad_")]
    fig.check(got == ["bad_" + n for n in expected], f"the hostile server's tools: {got[:6]}")
    report = " ".join(r.getMessage() for r in caplog.records if r.name == "haversack.mcp")
    for tool in LEFT_OUT:
        fig.case()
        local = tool_name("bad_", tool["name"])
        fig.check(got.count(local) <= (1 if local == "bad_kept" else 0), f"{local[:30]!r} kept")
    fig.case()
    fig.check(f"left out {len(LEFT_OUT) + 1} tool(s)" in report, f"report: {report[:300]}")
    fig.case()
    fig.check(report.startswith("MCP server 'bad' ("), "the report does not name the server")
    fig.case()
    fig.check(len(report) < 3000, f"the report is {len(report)} characters long")
    described = rendered.tool("bad_described").description
    fig.case()
    fig.check(len(described) <= 1024 and "\x1b" not in described, "description not bounded")

    with ToolExecutor(rendered, session=Session()) as executor:
        for arguments in HOSTILE_ARGUMENTS:
            fig.case()
            shown = repr(arguments)[:60]
            began = time.perf_counter()
            try:
                outcome = executor.execute("bad_patterns", arguments)
            except Exception as exc:
                fig.problem(f"{shown}: raised {type(exc).__name__}: {exc}")
                continue
            fig.note(f"call_s {shown[:30]}", round(time.perf_counter() - began, 2))
            fig.check(bool(outcome.message), f"{shown}: no message")
            if "c" not in arguments:
                fig.check(not outcome.success, f"{shown}: accepted")
        fig.case()
        big = executor.execute("bad_kept", {})
        text = big.render()
        fig.check(big.success, f"the 24 MiB result failed: {big.message[:200]}")
        fig.check(len(text) < 11_000 and "[Result cut:" in text, "the result was not cut")
    fig.assert_clean()


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_hostile_mcp_server_daemons_die_with_the_executor(figure, tmp_path) -> None:
    fig = figure(AREA, "MCP servers: setsid daemons outliving the server")
    pidfile = tmp_path / "daemon.pid"
    rendered = compose(
        ns="t",
        key="k",
        packs=["mcp"],
        config={
            "mcp": {
                "servers": {"d": {"command": _plan(tmp_path, tools=KEPT[:1], daemon=str(pidfile))}}
            }
        },
        strict=True,
    ).render()
    # The first executor takes over the server started to list the tools (and its daemon);
    # the second starts its own.
    for phase in ("the listing's, after the executor closed", "a second's, after it closed"):
        with ToolExecutor(rendered, session=Session()) as executor:
            fig.check(executor.execute("d_kept", {}).success, "the call failed")
            for _ in range(500):
                if pidfile.exists():
                    break
                time.sleep(0.02)
        fig.case()
        if not fig.check(pidfile.exists(), f"{phase}: the daemon never started"):
            continue
        pid = int(pidfile.read_text())
        pidfile.unlink()
        alive = _alive(pid)
        fig.check(not alive, f"{phase}: daemon {pid} still running")
        if alive:
            os.kill(pid, 9)
    fig.assert_clean()


def test_sessions_that_never_close_keep_only_max_live_sessions_servers(figure, tmp_path) -> None:
    fig = figure(AREA, "MCP servers: sessions that never close (max_live_sessions)")
    starts = tmp_path / "starts"
    command = _plan(tmp_path, tools=KEPT[:1], starts=str(starts))
    config = {"mcp": {"servers": {"s": {"command": command}}, "max_live_sessions": 2}}
    rendered = compose(ns="t", key="k", packs=["mcp"], config=config, strict=True).render()
    executors = [ToolExecutor(rendered, session=Session()) for _ in range(6)]
    try:
        for round_ in ("first calls", "calls again after eviction"):
            for executor in executors:
                fig.case()
                outcome = executor.execute("s_kept", {})
                fig.check(outcome.success, f"{round_}: {outcome.message}")
                pids = [int(line) for line in starts.read_text().split()]
                running = [pid for pid in pids if _alive(pid)]
                fig.check(len(running) <= 2, f"{round_}: {len(running)} servers running")
    finally:
        for executor in executors:
            executor.close()
    fig.case()
    pids = [int(line) for line in starts.read_text().split()]
    fig.check(not any(_alive(pid) for pid in pids), "a server outlived its executor")
    fig.assert_clean()


PROXY = Path(__file__).parent.parent / "mcp" / "proxy_server.py"


def test_an_upstream_served_again_passes_on_only_bounded_well_formed_results(figure) -> None:
    """Haversack between a real client and a hostile upstream (``tests/mcp/rich_server.py``):
    structured content breaking its own schema (also through a backtracking ``pattern``), an
    unusable output schema, bad base64 and a progress flood each end in a clear, bounded
    answer, and the session stays usable."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from haversack.server._channel import PROGRESS_BURST, PROGRESS_PER_S

    fig = figure(AREA, "MCP servers served again: structured content, schemas, media, progress")
    seen: list[float] = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    async def main() -> dict:
        params = StdioServerParameters(command=sys.executable, args=[str(PROXY)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = {t.name: t for t in (await client.list_tools()).tools}
            out = {"tools": tools, "liar": await client.call_tool("liar", {})}
            out["bad_media"] = await client.call_tool("bad_media", {})
            with anyio.move_on_after(120):  # Python's re: ~2**60 steps; RE2: at once
                out["backtrack"] = await client.call_tool("backtrack", {})
            started = time.perf_counter()
            out["flood"] = await client.call_tool("flood", {}, progress_callback=on_progress)
            out["flood_s"] = time.perf_counter() - started
            out["after"] = await client.call_tool("weather", {"city": "Oslo"})
            return out

    try:
        out = anyio.run(main)
    except Exception as exc:
        fig.problem(f"the proxy raised {type(exc).__name__}: {str(exc)[:300]}")
        fig.assert_clean()
        raise
    fig.case()
    fig.check(out["tools"]["huge"].output_schema is None, "a 240 KB output schema was passed on")
    fig.case()
    liar = out["liar"]
    fig.check(
        liar.is_error and "breaks its own output schema" in liar.content[0].text,
        f"schema-breaking structured content: {liar.content[0].text[:200]}",
    )
    fig.case()
    backtrack = out.get("backtrack")
    fig.check(
        backtrack is not None and "breaks its own output schema" in backtrack.content[0].text,
        "a backtracking output-schema pattern stalled the proxy (or was not reported)",
    )
    fig.case()
    bad = out["bad_media"]
    fig.check(
        not bad.is_error and bad.content[0].text.startswith("[image content left out: "),
        f"bad base64: {bad.content[0].text[:200]}",
    )
    fig.case()
    fig.check(seen[-1:] == [3000] and seen == sorted(set(seen)), "the flood's last value lost")
    fig.case()
    bound = PROGRESS_BURST + PROGRESS_PER_S * out["flood_s"] + 1
    fig.check(len(seen) <= bound, f"{len(seen)} progress notifications in {out['flood_s']:.1f} s")
    fig.note("flood_notifications", len(seen))
    fig.case()
    fig.check(
        out["after"].structured_content == {"city": "Oslo", "celsius": 21.5},
        "the session did not survive the hostile calls",
    )
    fig.assert_clean()
