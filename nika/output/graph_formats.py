"""``nika graph``'s drawings of the canonical projection (:mod:`checker.views.projection`).

``json`` is the projection itself (the bytes ``nika inspect --format json`` prints); ``mermaid``
(a ``flowchart LR`` that GitHub and most Markdown viewers draw) and ``dot`` (Graphviz) draw it:
each wave (computed from the projection's edges, :func:`~checker.views.projection.waves_of`) in
its own column, nodes coloured by verb, edges by role, each reference labelled with the field it
reads (the projection's edges keep their references for this), dead tasks greyed and tasks
caught on a cycle in a last column. A drawing also shows a workflow with findings: it draws the
projection's draft (:attr:`~checker.views.projection.Projection.draft`), where the JSON has no
graph to print. The VS Code extension's graph view uses the same palette.
"""

from __future__ import annotations

from typing import Any

from checker.core.display import clip
from checker.views.plan import TEXT_LIMIT
from checker.views.projection import Projection, waves_of
from nika.output import GRAPH_FORMATS

# verb -> (fill, stroke); `None` is a task whose verb is missing or unknown
VERB_COLORS: dict[str | None, tuple[str, str]] = {
    "infer": ("#dbeafe", "#2563eb"),
    "exec": ("#dcfce7", "#16a34a"),
    "invoke": ("#fef3c7", "#d97706"),
    "agent": ("#f3e8ff", "#9333ea"),
    None: ("#f3f4f6", "#6b7280"),
}
DEAD_COLORS = ("#e5e7eb", "#9ca3af")
CYCLE_STROKE = "#dc2626"

# edge kind -> (mermaid arrow, dot attributes, label prefix)
_EDGE_STYLE: dict[str, tuple[str, str, str]] = {
    "value": ("-->", 'color="#374151"', ""),
    "terminal-observation": ("-.->", 'style=dashed, color="#6b7280"', ""),
    "failure-observation": ("-.->", 'style=dashed, color="#dc2626"', ""),
    "control": ("==>", 'style=bold, color="#2563eb"', "after: "),
    "recovery": ("-.->", 'style=dotted, color="#d97706", constraint=false', "recover: "),
}


def drawing(p: Projection, dead: set[str]) -> dict[str, Any] | None:
    """What the drawings show of ``p``'s draft: nodes with their wave and caption fields, each
    reference as an edge labelled with the field it reads, the waves; ``dead`` (the tasks that
    never run: :func:`checker.views.plan.dead_tasks`, from the diagnostics) greyed. ``None``
    without a model to draw."""
    g = p.draft
    if g is None:
        return None
    waves = waves_of(g.to_json())
    wave_of = {t: i for i, wave in enumerate(waves) for t in wave}
    nodes = []
    for n in g.nodes:
        node: dict[str, Any] = {"id": n.id, "verb": n.verb, "wave": wave_of.get(n.id), "when": n.when}
        node["for_each"] = n.fan_out
        if n.tool is not None:
            node["tool"] = n.tool
        if n.model is not None:
            node["model"] = clip(n.model, TEXT_LIMIT)
        if n.id in dead:
            node["dead"] = True
        nodes.append(node)
    edges = [{"from": e.producer, "to": e.consumer, "kind": e.kind, "label": e.label} for e in g.reads()]
    return {"nodes": nodes, "edges": edges, "waves": waves}


def render_graph(p: Projection, fmt: str, *, name: str = "workflow", dead: set[str] | None = None) -> str:
    """Render ``p`` in ``fmt`` (one of ``GRAPH_FORMATS``); ``name`` titles a drawing. ``json`` is
    the canonical projection (a :class:`ValueError` without one: ``p.reason`` says why)."""
    if fmt == "json":
        text = p.canonical()
        if text is None:
            raise ValueError(f"no projection: {p.reason}")
        return text + "\n"
    if fmt not in ("mermaid", "dot"):
        raise ValueError(f"unknown graph format {fmt!r}; expected one of: {', '.join(GRAPH_FORMATS)}")
    doc = drawing(p, dead or set())
    if doc is None:
        raise ValueError(f"no projection: {p.reason}")
    return render_mermaid(doc, name) if fmt == "mermaid" else render_dot(doc, name)


def node_caption(node: dict[str, Any]) -> list[str]:
    """The lines shown for a task: its id, then its verb with the tool or model, then its modifiers."""
    lines = [node["id"]]
    verb = node.get("verb") or "no verb"
    detail = node.get("tool") or node.get("model")
    lines.append(f"{verb} {detail}" if detail else verb)
    mods = [m for m in ("when" if node.get("when") else "", "for_each" if node.get("for_each") else "") if m]
    if node.get("dead"):
        mods.append("dead")
    if node.get("wave") is None:
        mods.append("on a cycle")
    if mods:
        lines.append(" · ".join(mods))
    return lines


def _edge_label(edge: dict[str, Any]) -> str:
    prefix = _EDGE_STYLE.get(edge["kind"], _EDGE_STYLE["value"])[2]
    return prefix + (edge.get("label") or "")


def _columns(doc: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(title, nodes) per column: one per wave, then one for the tasks caught on a cycle."""
    by_wave: dict[int | None, list[dict[str, Any]]] = {}
    for node in doc["nodes"]:
        by_wave.setdefault(node["wave"], []).append(node)
    cols = [(f"wave {i + 1}", by_wave.get(i, [])) for i in range(len(doc["waves"]))]  # labels count from 1
    if None in by_wave:
        cols.append(("on a cycle", by_wave[None]))
    return cols


# -- Mermaid ---------------------------------------------------------------------------------


def _mermaid_text(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def render_mermaid(doc: dict[str, Any], name: str = "workflow") -> str:
    """A Mermaid ``flowchart LR``; node ids are ``t0, t1, …`` so any task id is safe."""
    ids = {node["id"]: f"t{i}" for i, node in enumerate(doc["nodes"])}
    out = ["flowchart LR", f"  %% {_mermaid_text(name)}: {len(doc['nodes'])} tasks, {len(doc['waves'])} waves"]
    for i, (title, nodes) in enumerate(_columns(doc)):
        out.append(f'  subgraph w{i}["{_mermaid_text(title)}"]')
        out.append("    direction TB")
        for node in nodes:
            caption = "<br/>".join(_mermaid_text(line) for line in node_caption(node))
            out.append(f'    {ids[node["id"]]}["{caption}"]')
        out.append("  end")
    for edge in doc["edges"]:
        if edge["from"] not in ids or edge["to"] not in ids:
            continue
        arrow = _EDGE_STYLE.get(edge["kind"], _EDGE_STYLE["value"])[0]
        label = _edge_label(edge)
        mid = f"|{_mermaid_text(label)}|" if label else ""
        out.append(f"  {ids[edge['from']]} {arrow}{mid} {ids[edge['to']]}")
    used: dict[str, list[str]] = {}
    for node in doc["nodes"]:
        cls = "dead" if node.get("dead") else (node.get("verb") or "none")
        used.setdefault(cls, []).append(ids[node["id"]])
        if node["wave"] is None:
            used.setdefault("cycle", []).append(ids[node["id"]])
    for cls, members in used.items():
        if cls == "dead":
            fill, stroke, extra = *DEAD_COLORS, ",color:#6b7280,stroke-dasharray:4 3"
        elif cls == "cycle":
            fill, stroke, extra = "", CYCLE_STROKE, ",stroke-width:2px"
        else:
            fill, stroke, extra = *VERB_COLORS.get(cls, VERB_COLORS[None]), ""
        style = (f"fill:{fill}," if fill else "") + f"stroke:{stroke}{extra}"
        out.append(f"  classDef {cls} {style}")
        out.append(f"  class {','.join(members)} {cls}")
    return "\n".join(out) + "\n"


# -- Graphviz DOT ----------------------------------------------------------------------------


def _dot_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render_dot(doc: dict[str, Any], name: str = "workflow") -> str:
    """A Graphviz digraph, left to right, one ``rank=same`` cluster per wave."""
    out = [
        f"digraph {_dot_str(name)} {{",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for i, (title, nodes) in enumerate(_columns(doc)):
        out.append(f"  subgraph cluster_{i} {{")
        out.append(f'    label={_dot_str(title)}; style=dashed; color="#d1d5db"; rank=same;')
        for node in nodes:
            fill, stroke = DEAD_COLORS if node.get("dead") else VERB_COLORS.get(node.get("verb"), VERB_COLORS[None])
            cyclic = node["wave"] is None
            attrs = [
                f"label={_dot_str(chr(10).join(node_caption(node)))}",
                f'fillcolor="{fill}"',
                f'color="{CYCLE_STROKE if cyclic else stroke}"',
            ]
            if node.get("dead"):
                attrs += ['style="rounded,filled,dashed"', 'fontcolor="#6b7280"']
            if cyclic:
                attrs.append("penwidth=2")
            out.append(f"    {_dot_str(node['id'])} [{', '.join(attrs)}];")
        out.append("  }")
    known = {node["id"] for node in doc["nodes"]}
    for edge in doc["edges"]:
        if edge["from"] not in known or edge["to"] not in known:
            continue
        style = _EDGE_STYLE.get(edge["kind"], _EDGE_STYLE["value"])[1]
        label = _edge_label(edge)
        attrs = (f"label={_dot_str(label)}, " if label else "") + style
        out.append(f"  {_dot_str(edge['from'])} -> {_dot_str(edge['to'])} [{attrs}];")
    out.append("}")
    return "\n".join(out) + "\n"
