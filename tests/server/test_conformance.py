"""The official MCP conformance suite's server scenarios against Haversack's Streamable HTTP
server serving the suite's fixture tools written as Haversack tools (conformance_server.py);
the scenarios it fails are listed, with reasons, in conformance-expected-failures.yml, and
the run fails on any other failure (or on a listed scenario that starts passing)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BASELINE = Path(__file__).with_name("conformance-expected-failures.yml")
FIXTURES = Path(__file__).with_name("conformance_server.py")


def test_conformance_suite_server_scenarios(conformance, tmp_path):
    node, cli = conformance
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    # The suite's fixture tools, as Haversack tools, served over Streamable HTTP by the same
    # serve_http `haversack serve --transport http` runs; the suite cannot send a bearer
    # token, so it serves on loopback without one.
    server = subprocess.Popen(
        [sys.executable, str(FIXTURES)], stderr=subprocess.PIPE, env=env, text=True
    )
    try:
        assert server.stderr is not None
        url = re.search(r"at (http://\S+)", server.stderr.readline()).group(1)
        run = subprocess.run(
            [
                node,
                str(cli),
                "server",
                "--url",
                url,
                "--expected-failures",
                str(BASELINE),
                "-o",
                str(tmp_path / "results"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
        server.stderr.close()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "Baseline check passed" in run.stdout
    total = re.search(r"Total: (\d+) passed, (\d+) failed", run.stdout)
    assert total is not None
    passed_scenarios = set(re.findall(r"✓ (\S+):", run.stdout))
    # Every scenario that applies to a tool server (the rest are in the baseline, with why).
    assert {
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-with-progress",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "server-sse-multiple-streams",
        "prompts-list",
        "dns-rebinding-protection",
    } <= passed_scenarios
    assert total.group(1) == "26", run.stdout[-3000:]
