"""Malformed JSON-RPC frames against the MCP server's frame reader (the code both transports
use before the SDK sees a message): every frame gets a message or the error JSON-RPC owes
for it, after bounded work."""

from __future__ import annotations

import json
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError

from haversack.server._frames import MAX_FRAME_BYTES, decode_frame

from ._harness import budget

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
#: Generous: a 4 MiB frame is parsed once, linearly, or refused.
BOUND_S = 2.0

BATTERY: list[tuple[bytes, int]] = [
    (b"", PARSE_ERROR),
    (b"{", PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "id": 1, "method": ', PARSE_ERROR),
    (b"\xff\xfe", PARSE_ERROR),
    (b"NaN", PARSE_ERROR),
    (b"[" * 1_000_000, PARSE_ERROR),
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, PARSE_ERROR),
    (b"[]", INVALID_REQUEST),
    (b"[1, 2]", INVALID_REQUEST),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', INVALID_REQUEST),
    (b"42", INVALID_REQUEST),
    (b'"ping"', INVALID_REQUEST),
    (b"null", INVALID_REQUEST),
    (b"{}", INVALID_REQUEST),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', INVALID_REQUEST),
    (b'{"pad": "' + b"x" * (MAX_FRAME_BYTES + 1) + b'"}', INVALID_REQUEST),
]


def _check(fig, frame: bytes, expected: int | None) -> None:
    fig.case()
    start = time.perf_counter()
    try:
        outcome = decode_frame(frame)
    except Exception as exc:
        fig.problem(f"{frame[:60]!r}: raised {type(exc).__name__}: {exc}")
        return
    elapsed = time.perf_counter() - start
    fig.check(elapsed < BOUND_S, f"{frame[:60]!r}: took {elapsed:.2f} s")
    if isinstance(outcome, SessionMessage):
        fig.check(expected is None, f"{frame[:60]!r}: accepted, expected error {expected}")
        return
    if not fig.check(isinstance(outcome, JSONRPCError), f"{frame[:60]!r}: {outcome!r}"):
        return
    code = outcome.error.code
    fig.check(code in (PARSE_ERROR, INVALID_REQUEST), f"{frame[:60]!r}: error code {code}")
    if expected is not None:
        fig.check(code == expected, f"{frame[:60]!r}: error {code}, expected {expected}")
    # The reply itself must serialize (it is written straight back to the client).
    json.loads(outcome.model_dump_json(by_alias=True, exclude_unset=True))


def test_malformed_frame_battery(figure) -> None:
    fig = figure("malformed-frames", "malformed JSON-RPC frames: fixed battery")
    for frame, expected in BATTERY:
        _check(fig, frame, expected)
    fig.assert_clean()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_envelope = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | _json,
        "id": st.integers() | st.text(max_size=5) | _json,
        "method": st.sampled_from(["ping", "tools/call", "initialize"]) | _json,
        "params": _json,
        "result": _json,
        "error": _json,
    },
)


def test_generated_frames(figure) -> None:
    fig = figure("malformed-frames", "malformed JSON-RPC frames: generated")

    @settings(
        max_examples=budget(200, 5000),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
    )
    @given(
        st.one_of(
            st.binary(max_size=200),
            _json.map(lambda v: json.dumps(v).encode()),
            _envelope.map(lambda v: json.dumps(v).encode()),
            st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
        )
    )
    def check(frame: bytes) -> None:
        _check(fig, frame, None)

    check()
    fig.note("bound_s", BOUND_S)
    fig.assert_clean()
