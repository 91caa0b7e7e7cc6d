"""The run dashboard: plain server-rendered HTML and one small script (no build step). The DAG is
drawn from spec 16's projection (:func:`checker.views.projection.project`, what ``nika inspect``
prints), laid out by wave, each node coloured by its task's state; the script re-reads the run's
JSON and recolours as events arrive. Every form carries the CSRF token (docs/serve.md)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

COLOURS = {
    "pending": "#d0d4da",
    "running": "#f5c542",
    "success": "#3fb950",
    "failure": "#f85149",
    "skipped": "#a0a7b1",
    "cancelled": "#8b5cf6",
    "paused": "#58a6ff",
}
CSS = """
body{font:14px system-ui,sans-serif;margin:2rem;color:#1f2328}
table{border-collapse:collapse}td,th{padding:.3rem .7rem;border-bottom:1px solid #ddd;text-align:left}
.state{font-weight:600}.box{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:20rem}
"""
SCRIPT = """
(function(){
  const root = document.getElementById('run'); if (!root) return;
  const id = root.dataset.id, colours = JSON.parse(root.dataset.colours);
  let last = root.dataset.state;
  async function poll(){
    try {
      const r = await fetch('/runs/' + encodeURIComponent(id) + '?events=0', {credentials: 'same-origin'});
      if (r.ok) {
        const doc = await r.json();
        for (const [tid, t] of Object.entries(doc.tasks || {})) {
          const n = document.querySelector('[data-task="' + CSS.escape(tid) + '"]');
          if (n) { n.setAttribute('fill', colours[t.status] || '#ccc'); n.dataset.state = t.status; }
          const s = document.querySelector('[data-task-state="' + CSS.escape(tid) + '"]');
          if (s) s.textContent = t.status;
        }
        document.getElementById('state').textContent = doc.workflow_state;
        if (doc.workflow_state !== last) { location.reload(); return; }
      }
    } catch (e) {}
    if (['running', 'paused'].includes(last)) setTimeout(poll, 500);
  }
  if (['running', 'paused'].includes(last)) setTimeout(poll, 500);
})();
"""


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>{escape(title)} · nika serve</title><style>{CSS}</style></head>"
        f"<body><h1><a href='/'>nika serve</a> · {escape(title)}</h1>{body}"
        "<script src='/ui/app.js'></script></body></html>"
    )


def login(error: str | None = None) -> str:
    err = f"<p class=state style='color:#b00'>{escape(error)}</p>" if error else ""
    return page(
        "sign in",
        f"{err}<form method=post action='/ui/login' class=box><label>Token "
        "<input type=password name=token id=token autocomplete=off size=50></label> "
        "<button type=submit id=signin>Sign in</button><p>The token is NIKA_SERVE_TOKEN, or the file "
        "<code>nika serve</code> printed at start.</p></form>",
    )


def runs_list(runs: list[dict[str, Any]], workflows: list[str], csrf: str) -> str:
    rows = []
    for r in runs:
        cost = r.get("cost_usd")
        answered = "; ".join(f"{a['task']}={json.dumps(a['value'])} by {a['by']}" for a in r.get("answers", []))
        rows.append(
            f"<tr><td><a href='/ui/runs/{escape(r['id'])}'>{escape(r['id'])}</a></td>"
            f"<td>{escape(_short(r['workflow'], r['root']))}</td><td>{escape(r['trigger'])}</td>"
            f"<td class=state>{escape(str(r['workflow_state']))}</td>"
            f"<td>{r.get('duration_s', 0):.1f} s</td><td>{'unknown' if cost is None else f'${cost:.6f}'}</td>"
            f"<td>{escape(answered)}</td></tr>"
        )
    options = "".join(f"<option>{escape(w)}</option>" for w in workflows)
    start = (
        "<form method=post action='/ui/runs' class=box id=start>"
        f"<input type=hidden name=csrf value='{escape(csrf)}'>"
        f"<label>Workflow <select name=workflow id=workflow>{options}</select></label> "
        "<label>Inputs (JSON) <input name=inputs id=inputs value='{}' size=40></label> "
        "<button type=submit id=start-run>Start run</button></form>"
    )
    table = (
        "<table id=runs><tr><th>run</th><th>workflow</th><th>trigger</th><th>state</th><th>duration</th>"
        f"<th>cost</th><th>answered</th></tr>{''.join(rows)}</table>"
    )
    return page("runs", start + table)


def run_page(doc: dict[str, Any], projection: dict[str, Any] | None, csrf: str) -> str:
    state = str(doc.get("workflow_state"))
    tasks = doc.get("tasks") or {}
    parts = [
        f"<div id=run data-id='{escape(doc['id'])}' data-state='{escape(state)}' "
        f"data-colours='{escape(json.dumps(COLOURS))}'>",
        f"<p>{escape(_short(doc['workflow'], doc['root']))} · trigger {escape(doc['trigger'])} · "
        f"state <span class=state id=state>{escape(state)}</span></p>",
    ]
    if doc.get("error"):
        parts.append(f"<p class=state id=error>{escape(json.dumps(doc['error']))}</p>")
    parts.append(_dag(projection, tasks) if projection else "<p>(no projection: the workflow has check errors)</p>")
    for p in doc.get("pending") or []:
        parts.append(_gate(doc["id"], p, csrf))
    rows = []
    for tid, t in tasks.items():
        items = t.get("items")
        extra = f" · items {escape(json.dumps(items))}" if items else ""
        out = t.get("error") or t.get("output")
        rows.append(
            f"<tr><td>{escape(tid)}</td><td class=state data-task-state='{escape(tid)}'>{escape(str(t.get('status')))}"
            f"</td><td><pre>{escape(json.dumps(out, indent=1, default=str)[:4000])}</pre>{extra}</td></tr>"
        )
    parts.append(f"<table id=tasks><tr><th>task</th><th>state</th><th>output / error</th></tr>{''.join(rows)}</table>")
    if doc.get("outputs"):
        parts.append(f"<h2>outputs</h2><pre id=outputs>{escape(json.dumps(doc['outputs'], indent=1))}</pre>")
    parts.append("</div>")
    return page(f"run {doc['id']}", "".join(parts))


def _gate(run_id: str, p: dict[str, Any], csrf: str) -> str:
    """The Approve/Deny form: shows the bound rendering and sends its shown hash back."""
    hidden = (
        f"<input type=hidden name=csrf value='{escape(csrf)}'>"
        f"<input type=hidden name=task value='{escape(str(p['task']))}'>"
        f"<input type=hidden name=shown_hash value='{escape(str(p['shown_hash']))}'>"
    )
    if p.get("mode") == "confirm":
        buttons = (
            "<button type=submit name=value value=true id=approve>Approve</button> "
            "<button type=submit name=value value=false id=deny>Deny</button>"
        )
    elif p.get("mode") == "choice" and isinstance(p.get("choices"), list):
        buttons = " ".join(
            f"<button type=submit name=value value='{escape(json.dumps(c))}'>{escape(str(c))}</button>"
            for c in p["choices"]
        )
    else:
        buttons = "<input name=value_text id=answer-text> <button type=submit id=answer>Answer</button>"
    return (
        f"<form method=post action='/ui/runs/{escape(run_id)}/answer' class='box gate'>{hidden}"
        f"<p><b>{escape(str(p['task']))}</b> asks: <q class=message>{escape(str(p.get('message')))}</q></p>"
        f"<p><small>shown hash <code>{escape(str(p['shown_hash']))}</code></small></p>{buttons}</form>"
    )


def _dag(projection: dict[str, Any], tasks: dict[str, Any]) -> str:
    nodes = [n["id"] for n in projection.get("nodes", [])]
    edges = [
        (e["from"], e["to"]) for e in projection.get("edges", []) if e.get("from") in nodes and e.get("to") in nodes
    ]
    wave: dict[str, int] = {}
    for n in nodes:  # nodes come in wave order: every upstream task is placed first
        wave[n] = 1 + max((wave.get(a, -1) for a, b in edges if b == n), default=-1)
    col: dict[int, int] = {}
    pos: dict[str, tuple[int, int]] = {}
    for n in nodes:
        w = wave[n]
        pos[n] = (20 + w * 190, 20 + col.get(w, 0) * 60)
        col[w] = col.get(w, 0) + 1
    width = 40 + (max(wave.values(), default=0) + 1) * 190
    height = 40 + max(col.values(), default=1) * 60
    svg = [f"<svg id=dag width={width} height={height} xmlns='http://www.w3.org/2000/svg'>"]
    for a, b in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        svg.append(f"<line x1={x1 + 150} y1={y1 + 18} x2={x2} y2={y2 + 18} stroke='#888'/>")
    for n in nodes:
        x, y = pos[n]
        st = str((tasks.get(n) or {}).get("status", "pending"))
        svg.append(
            f"<rect x={x} y={y} width=150 height=36 rx=6 data-task='{escape(n)}' data-state='{escape(st)}' "
            f"fill='{COLOURS.get(st, '#ccc')}' stroke='#555'/>"
            f"<text x={x + 8} y={y + 23} font-size=13>{escape(n[:20])}</text>"
        )
    svg.append("</svg>")
    return "".join(svg)


def _short(path: str, root: str) -> str:
    return path[len(root) + 1 :] if path.startswith(root + "/") else path
