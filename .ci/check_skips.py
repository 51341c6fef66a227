"""Fail on any skipped test whose reason is not in .ci/allowed-skips.txt.

Usage: python .ci/check_skips.py JUNIT_XML [ALLOWLIST]. Reads pytest's JUnit XML (written with
``--junitxml``), prints every skip that is not allowed with its test and reason, and exits 1
if there is one. Stdlib only: it runs before anything else is known to be installed.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ALLOWLIST = Path(__file__).resolve().parent / "allowed-skips.txt"


def allowed_patterns(path: Path) -> list[re.Pattern[str]]:
    """The patterns that apply in this environment."""
    patterns = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("env:"):
            condition, _, line = line.partition(" ")
            name, _, value = condition.removeprefix("env:").partition("=")
            if os.environ.get(name) != value:
                continue
        pattern = re.split(r"\t| {2,}", line, maxsplit=1)[0]
        patterns.append(re.compile(pattern))
    return patterns


def skips(junit: Path) -> list[tuple[str, str]]:
    """``(test id, reason)`` of every skipped test case (xfails included)."""
    found = []
    # The file is the one pytest just wrote for this run, not outside input.
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314
        skipped = case.find("skipped")
        if skipped is None:
            continue
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        reason = skipped.get("message", "")
        # pytest writes "reason" for pytest.skip(reason) as the message, sometimes prefixed.
        found.append((test, reason.removeprefix("Skipped: ")))
    return found


def main(argv: list[str]) -> int:
    junit = Path(argv[1])
    patterns = allowed_patterns(Path(argv[2]) if len(argv) > 2 else ALLOWLIST)
    bad = [(t, r) for t, r in skips(junit) if not any(p.search(r) for p in patterns)]
    for test, reason in bad:
        print(f"[dev] skip not allowed: {test}: {reason}", file=sys.stderr)
    if bad:
        print(
            f"[dev] {len(bad)} skipped test(s) are not in {ALLOWLIST.name}: install what they "
            "need (./dev setup), or add the reason to .ci/allowed-skips.txt with why.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
