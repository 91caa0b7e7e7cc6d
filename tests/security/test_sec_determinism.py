"""Declared determinism is honoured without weakening a safety bound (NEP-0010 × NEP-0013).

`run: { entropy: { seeded: N }, clock: virtual }` makes time a counter and randomness a function of
the seed; it must not make a hung effect immortal (a task's `timeout:` stays on the real clock), it
must not make an approval replayable across runs (the run nonce, the scope of every ticket, stays
random), and its journal names no absolute path, host name or process id.
"""

from __future__ import annotations

import io
import json
import os
import socket
from pathlib import Path

from nika.commands.run import run_command

SEEDED = "run: { entropy: { seeded: 7 }, clock: virtual }\n"


def _run(tmp_path: Path, text: str, *args: str) -> tuple[int, str, list[Path]]:
    wf = tmp_path / "det.nika.yaml"
    wf.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), trace_dir=str(tmp_path / "traces"), out=out, err=err, var_pairs=list(args))
    return code, err.getvalue(), sorted((tmp_path / "traces").glob("*.ndjson"))


def test_a_hung_effect_still_times_out_on_the_real_clock(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, err, _ = _run(
        tmp_path,
        "nika: v1\nworkflow: { id: det }\n" + SEEDED + 'permits: { exec: ["sleep"] }\n'
        "tasks:\n  hang:\n    exec: { command: [sleep, '30'] }\n    timeout: 300ms\n",
    )
    assert code == 1, err
    assert "NIKA-TIMEOUT-001" in err


def test_the_run_nonce_stays_random_so_a_ticket_never_replays(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = (
        "nika: v1\nworkflow: { id: det }\n" + SEEDED + 'permits: { tools: ["nika:prompt"] }\n'
        'tasks:\n  ask:\n    invoke: { tool: "nika:prompt", args: { message: "ship?", mode: confirm } }\n'
    )
    nonces, tickets = set(), set()
    for _ in range(2):
        code, err, journals = _run(tmp_path, text)
        assert code == 4, err  # paused: nobody can answer here
    for path in journals:
        frames = [json.loads(line) for line in path.read_text().splitlines()]
        fields = {f["key"]: f["value"] for f in frames[0]["fields"]}
        nonces.add(fields["run_nonce"])
        paused = {f["key"]: f["value"] for f in frames[-1]["fields"]}
        (prompt,) = json.loads(paused["prompts"])
        assert prompt["ticket"]["run"] == fields["run_nonce"]
        tickets.add(prompt["ticket"]["digest"])
    assert len(nonces) == 2 and len(tickets) == 2


def test_a_deterministic_journal_names_no_path_host_or_process(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.txt").write_text("x")
    code, err, (journal,) = _run(
        tmp_path,
        "nika: v1\nworkflow: { id: det }\n" + SEEDED + "permits:\n"
        '  tools: ["nika:read", "nika:write", "nika:uuid"]\n'
        '  fs: { read: ["./data/**"], write: ["./out/**"] }\n  exec: ["cat"]\n'
        "tasks:\n"
        '  r:\n    invoke: { tool: "nika:read", args: { path: ./data/in.txt } }\n'
        '  w:\n    invoke: { tool: "nika:write", args: { path: ./out/o.txt, content: "y", create_dirs: true } }\n'
        "  c:\n    exec: { command: [cat, ./data/in.txt] }\n"
        '  u:\n    invoke: { tool: "nika:uuid", args: {} }\n',
    )
    assert code == 0, err
    data = journal.read_bytes()
    assert str(tmp_path).encode() not in data and str(tmp_path.resolve()).encode() not in data
    host = socket.gethostname()
    if len(host) >= 6:  # a shorter name could be anywhere in a hash
        assert host.encode() not in data
    values = [f["value"] for line in data.splitlines() for f in json.loads(line)["fields"]]
    assert os.getpid() not in values and str(os.getpid()) not in values
