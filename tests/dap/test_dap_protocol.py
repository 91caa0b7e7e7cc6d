"""DAP framing and ``nika dap`` over real stdio (one process: the rest of the suite is in process)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from nika_dap.protocol import ProtocolError, encode, read_message


def test_framing_round_trips_and_ends_cleanly() -> None:
    msg = {"seq": 1, "type": "request", "command": "initialize", "arguments": {"x": "é"}}
    stream = io.BytesIO(encode(msg) + encode({"seq": 2, "type": "event", "event": "e"}))
    assert read_message(stream) == msg
    assert read_message(stream)["seq"] == 2
    assert read_message(stream) is None


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"Content-Type: x\r\n\r\n{}", "without a Content-Length"),
        (b"Content-Length: nope\r\n\r\n", "not a number"),
        (b"Content-Length: 999999999999\r\n\r\n", "outside"),
        (b"Content-Length: 10\r\n\r\n{}", "ended inside a message body"),
        (b"Content-Length: 2\r\n\r\n[]", "not a DAP message"),
        (b"Content-Length: 3\r\n\r\n{x}", "not JSON"),
        (b"garbage\r\n\r\n", "not a header line"),
        (b"Content-Length: 2\r\n", "ended inside a message header"),
    ],
)
def test_bad_framing_is_one_line_error(data: bytes, said: str) -> None:
    with pytest.raises(ProtocolError, match=said):
        read_message(io.BytesIO(data))


def _frames(data: bytes) -> list[dict]:
    stream, out = io.BytesIO(data), []
    while (m := read_message(stream)) is not None:
        out.append(m)
    return out


def test_nika_dap_speaks_over_stdio(tmp_path: Path) -> None:
    wf = tmp_path / "w.nika.yaml"
    wf.write_text(
        'nika: v1\nworkflow: { id: w }\npermits: { exec: ["echo"] }\n'
        'tasks:\n  t:\n    exec: { command: ["echo", "hi"] }\n',
        encoding="utf-8",
    )
    requests = [
        {"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "nika"}},
        {"seq": 2, "type": "request", "command": "launch", "arguments": {"program": str(wf), "traceDir": "tr"}},
        {"seq": 3, "type": "request", "command": "configurationDone"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nika", "dap"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(encode(r) for r in requests))
        proc.stdin.flush()
        got = []
        while not got or got[-1].get("event") != "exited":  # the run ends on its own
            m = read_message(proc.stdout)  # type: ignore[arg-type]
            assert m is not None, proc.stderr.read() if proc.stderr else b""
            got.append(m)
        proc.stdin.write(encode({"seq": 4, "type": "request", "command": "disconnect"}))
        proc.stdin.close()
        got += _frames(proc.stdout.read())
        code = proc.wait(timeout=120)
        said = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        assert code == 0, (code, said, got)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    what = repr(got)  # every assertion below names what the adapter sent
    init = next(m for m in got if m.get("command") == "initialize")
    assert init["success"] and init["body"]["supportsStepBack"] is True
    events = [m["event"] for m in got if m["type"] == "event"]
    assert events[0] == "initialized" and "terminated" in events, what
    exited = next(m for m in got if m.get("event") == "exited")
    assert exited["body"]["exitCode"] == 0, what
    assert [m["seq"] for m in got] == list(range(1, len(got) + 1)), what
    assert any(m.get("command") == "disconnect" and m["success"] for m in got), what
