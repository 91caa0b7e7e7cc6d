"""`nika graph`: the projection's Mermaid and DOT drawings, its JSON, exit codes, no LSP imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_cli import nika_here

from checker import compile_text
from checker.views.plan import dead_tasks
from checker.views.projection import project
from nika.output.graph_formats import drawing, render_dot, render_mermaid

ROOT = Path(__file__).resolve().parents[2]

PLAN = """nika: v1
workflow: {id: plan}
permits: {exec: true, tools: ["nika:*"], net: {http: ["*"]}}
model: mock/echo
tasks:
  fetch:
    invoke:
      tool: "nika:fetch"
      args: { url: "https://example.com" }
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
    infer:
      prompt: "Summarize ${{ with.page }}"
  translate:
    with:
      text: ${{ tasks.summarize.output }}
    infer:
      prompt: "Translate ${{ with.text }}"
    on_error:
      recover: ${{ tasks.fetch.output }}
  notify:
    after: { summarize: failure }
    exec:
      command: ["echo", "failed"]
"""

# `never` waits for `fetch` to be skipped, which it cannot be; `later` needs `never`'s value.
DEAD = """nika: v1
workflow: {id: dead}
permits: {exec: true}
tasks:
  fetch:
    exec: { command: ["true"] }
  never:
    after: { fetch: skipped }
    exec: { command: ["true"] }
  later:
    with:
      v: ${{ tasks.never.output }}
    exec: { command: ["echo", "${{ with.v }}"] }
  watcher:
    after: { never: terminal }
    exec: { command: ["true"] }
"""

CYCLE = """nika: v1
workflow: {id: loop}
permits: {exec: true}
tasks:
  start:
    exec: { command: ["true"] }
  a:
    after: { b: success }
    exec: { command: ["true"] }
  b:
    after: { a: success }
    exec: { command: ["true"] }
"""


def draw(text: str) -> dict[str, Any]:
    """What `nika graph` draws of ``text``: its projection's draft, dead tasks greyed."""
    compiled = compile_text(text)
    assert compiled.graph is not None
    doc = drawing(project(compiled), dead_tasks(compiled, compiled.graph))
    assert doc is not None
    return doc


def nika(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m nika ARGS` in a process of its own (stdin through a pipe)."""
    return subprocess.run([sys.executable, "-m", "nika", *args], input=stdin, capture_output=True, text=True, cwd=ROOT)


def nika_in_process(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """What :func:`nika` runs, in this process."""
    return nika_here(*args, stdin=stdin, cwd=ROOT)


def test_the_drawing_reads_the_projection() -> None:
    doc = draw(PLAN)
    assert doc["waves"] == [["fetch"], ["summarize"], ["translate", "notify"]]  # from the projection's edges
    assert [n["id"] for n in doc["nodes"]] == ["fetch", "summarize", "translate", "notify"]
    assert {(e["from"], e["to"], e["kind"]) for e in doc["edges"]} == {
        ("fetch", "summarize", "value"),
        ("summarize", "translate", "value"),
        ("fetch", "translate", "recovery"),
        ("summarize", "notify", "control"),
    }
    assert not any("dead" in n for n in doc["nodes"])


def test_each_reference_is_drawn_with_the_field_it_reads() -> None:
    reads = """nika: v1
workflow: {id: reads}
permits: {exec: true}
tasks:
  a:
    exec: { command: ["true"] }
  c:
    with:
      x: "${{ tasks.a.status }} ${{ tasks.a.duration_ms }}"
      y: ${{ tasks.a.status }}
    exec: { command: ["echo", "${{ with.x }}", "${{ with.y }}"] }
"""
    p = project(compile_text(reads))
    assert p.graph is not None
    # the projection: one edge per binding; the drawing: one arrow per field read
    assert [e.to_json() for e in p.graph.edges] == [
        {"from": "a", "to": "c", "kind": "terminal-observation", "binding": "x"},
        {"from": "a", "to": "c", "kind": "terminal-observation", "binding": "y"},
    ]
    assert [e["label"] for e in draw(reads)["edges"]] == ["status", "duration_ms"]


def test_dead_tasks_follow_the_gate_algebra() -> None:
    compiled = compile_text(DEAD)
    assert [d.code for d in compiled.diagnostics] == ["NIKA-DAG-006"]
    dead = {n["id"] for n in draw(DEAD)["nodes"] if n.get("dead")}
    # `later`'s value edge does not pass `cancelled`; `watcher` waits for any terminal state
    assert dead == {"never", "later"}


def test_mermaid_drawing() -> None:
    text = render_mermaid(draw(PLAN), "plan")
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    assert '  subgraph w0["wave 1"]' in lines and '  subgraph w2["wave 3"]' in lines  # labels count from 1
    assert '    t0["fetch<br/>invoke nika:fetch"]' in lines
    assert '    t1["summarize<br/>infer mock/echo"]' in lines
    assert "  t0 -->|output| t1" in lines
    assert "  t0 -.->|recover: output| t2" in lines
    assert "  t1 ==>|after: failure| t3" in lines
    assert "  classDef invoke fill:#fef3c7,stroke:#d97706" in lines
    assert "  class t1,t2 infer" in lines


def test_mermaid_marks_dead_and_cyclic_tasks() -> None:
    dead = render_mermaid(draw(DEAD))
    assert '    t1["never<br/>exec<br/>dead"]' in dead
    assert "  class t1,t2 dead" in dead
    cyc = render_mermaid(draw(CYCLE))
    assert '  subgraph w1["on a cycle"]' in cyc
    assert "  class t1,t2 cycle" in cyc


def test_mermaid_escapes_labels() -> None:
    doc = {
        "nodes": [{"id": 'say"<hi>"', "verb": "exec", "wave": 0, "when": None, "for_each": None}],
        "edges": [],
        "waves": [['say"<hi>"']],
    }
    assert '    t0["say#quot;#lt;hi#gt;#quot;<br/>exec"]' in render_mermaid(doc)


def test_dot_drawing() -> None:
    text = render_dot(draw(PLAN), "plan")
    assert text.startswith('digraph "plan" {\n  rankdir=LR;')
    assert text.count("subgraph cluster_") == 3
    assert '"fetch" [label="fetch\\ninvoke nika:fetch", fillcolor="#fef3c7", color="#d97706"];' in text
    assert '"fetch" -> "translate" [label="recover: output", style=dotted' in text
    assert text.rstrip().endswith("}")


def test_cli_formats_and_stdin() -> None:
    proc = nika("graph", "--format", "json", "-", stdin=PLAN)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == project(compile_text(PLAN)).canonical() + "\n"  # the projection, as nika inspect prints it
    assert json.loads(proc.stdout)["graph_format"] == 2
    proc = nika("graph", "-", stdin=PLAN)
    assert proc.returncode == 0 and proc.stdout.startswith("flowchart LR\n  %% plan: 4 tasks, 3 waves")
    proc = nika("graph", "--format", "dot", "examples/translate-fanout.nika.yaml")
    assert proc.returncode == 0 and proc.stdout.startswith('digraph "translate-fanout" {')
    assert proc.stderr == ""


def test_cli_draws_a_workflow_with_errors_and_says_so() -> None:
    proc = nika_in_process("graph", "-", stdin=CYCLE)
    assert proc.returncode == 0
    assert "on a cycle" in proc.stdout
    assert proc.stderr.strip() == "nika graph: - has 1 error; `nika check -` shows them"


def test_cli_failures_exit_1() -> None:
    proc = nika_in_process("graph", "no/such.nika.yaml")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "nika graph: no/such.nika.yaml: no such file or directory"
    proc = nika_in_process("graph", "-", stdin="- just\n- a list\n")
    assert proc.returncode == 1 and "not a YAML mapping" in proc.stderr
    proc = nika_in_process("graph", "--format", "svg", "-", stdin=PLAN)
    assert proc.returncode == 1 and "invalid choice" in proc.stderr


def test_json_has_no_graph_to_print_for_a_workflow_with_errors() -> None:
    proc = nika_in_process("graph", "--format", "json", "-", stdin=CYCLE)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("nika graph: -: no projection (findings): ")


def test_graph_never_loads_the_language_server() -> None:
    code = (
        "import sys; from nika.cli import main; main(['graph', 'examples/build-and-report.nika.yaml']); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'nika_lsp')]; "
        "sys.stderr.write(repr(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stderr == "[]"
