/**
 * The `nika/semanticDocument` reply (spec 16) → something to draw. Pure (no DOM, no `vscode`): the
 * webview and the unit tests share it.
 *
 * The server sends the canonical projection (`graph`, `graph_format: 2`: the bytes `nika inspect
 * --format json` prints) verbatim with the spans of the task ids; this module only reads it. The
 * waves are computed from the projection's edges (as `waves_of` in checker/views/projection.py
 * does), so the columns are the run's waves. Without a graph (`reason`: `parse` or `findings`)
 * there is nothing new to draw: the view keeps the last graph and says why.
 *
 * Waves are columns: a grid layout places them at once; for graphs up to ELK_MAX_NODES the
 * webview then asks ELK (layered, with one partition per wave so columns stay waves) for a layout
 * with fewer crossings and routed edges.
 */

/** A node of the canonical projection (03 §graph projection). */
export interface ProjectionNode {
  id: string;
  verb: string | null;
  permits: string[];
  when: string | null;
  fan_out: { kind: string; count?: number } | null;
  cost_interval: [number, number] | null;
  tool?: string;
  model?: string;
  retry_max_attempts?: number;
  timeout_ms?: number;
  on_error?: string;
  outputs?: string[];
}

/** An edge of the canonical projection: `binding` on data edges, `predicate` on control edges. */
export interface ProjectionEdge {
  from: string;
  to: string;
  kind: string;
  binding?: string;
  predicate?: string;
}

export interface GraphProjection {
  graph_format: number;
  workflow: string | null;
  nodes: ProjectionNode[];
  edges: ProjectionEdge[];
}

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** What `nika/semanticDocument` answers (16 §semantic document). */
export interface SemanticDocument {
  semantic_document_format: number;
  graph: GraphProjection | null;
  reason?: string;
  spans: Record<string, LspRange>;
}

export type SemanticReply = SemanticDocument | null;

/** The graph format this view reads: a reader refuses a format it does not speak (03). */
export const GRAPH_FORMAT = 2;

export function isSemanticDocument(reply: unknown): reply is SemanticDocument {
  return (
    typeof reply === "object" &&
    reply !== null &&
    typeof (reply as SemanticDocument).semantic_document_format === "number" &&
    typeof (reply as SemanticDocument).spans === "object"
  );
}

/** The reply's graph when it is one this view can draw (format 2), else null. */
export function drawableGraph(reply: unknown): GraphProjection | null {
  if (!isSemanticDocument(reply)) return null;
  const g = reply.graph;
  return g && g.graph_format === GRAPH_FORMAT && Array.isArray(g.nodes) && Array.isArray(g.edges) ? g : null;
}

/** Why a reply holds no graph to draw, in words for the view's bar. */
export function noGraphReason(reply: unknown): string {
  if (!isSemanticDocument(reply)) return "Open the workflow in an editor to see its graph.";
  if (reply.graph && reply.graph.graph_format !== GRAPH_FORMAT) {
    return `This server sends graph_format ${reply.graph.graph_format}; this extension reads ${GRAPH_FORMAT}. Update the extension.`;
  }
  if (reply.reason === "parse") return "This file is not a workflow yet (the text is not a YAML mapping).";
  return "No graph while `nika check` finds an error in this file (see the Problems panel).";
}

/** Kahn levels over the scheduling edges (every kind but `recovery`), in the document's node order. */
export function wavesOf(g: GraphProjection): string[][] {
  const order = new Map(g.nodes.map((n, i) => [n.id, i]));
  const left = new Map(g.nodes.map((n) => [n.id, 0]));
  const succ = new Map<string, Set<string>>(g.nodes.map((n) => [n.id, new Set<string>()]));
  const preds = new Map<string, Set<string>>(g.nodes.map((n) => [n.id, new Set<string>()]));
  for (const e of g.edges) {
    if (e.kind === "recovery" || !order.has(e.from) || !order.has(e.to)) continue;
    if (preds.get(e.to)!.has(e.from)) continue;
    preds.get(e.to)!.add(e.from);
    succ.get(e.from)!.add(e.to);
    left.set(e.to, left.get(e.to)! + 1);
  }
  const waves: string[][] = [];
  let level = g.nodes.map((n) => n.id).filter((id) => left.get(id) === 0);
  while (level.length) {
    waves.push(level);
    const next = new Set<string>();
    for (const id of level) {
      for (const s of succ.get(id)!) {
        left.set(s, left.get(s)! - 1);
        if (left.get(s) === 0) next.add(s);
      }
    }
    level = [...next].sort((a, b) => order.get(a)! - order.get(b)!);
  }
  return waves;
}

/** A task as drawn: the projection's node with its wave and the captions' fields. */
export interface GraphNode {
  id: string;
  verb: string | null;
  wave: number | null;
  when: string | null;
  for_each: string | null;
  tool?: string;
  model?: string;
}

/** An edge as drawn: its label is the `with:` binding or the `after:` predicate. */
export interface GraphEdge {
  from: string;
  to: string;
  kind: string;
  label: string | null;
}

/** What the view draws: the projection's nodes with their waves, its edges with their labels. */
export interface GraphDocument {
  nodes: GraphNode[];
  edges: GraphEdge[];
  waves: string[][];
}

export function drawingOf(g: GraphProjection): GraphDocument {
  const waves = wavesOf(g);
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((id) => waveOf.set(id, i)));
  const nodes = g.nodes.map((n) => {
    const fan = n.fan_out;
    const node: GraphNode = {
      id: n.id,
      verb: n.verb,
      wave: waveOf.get(n.id) ?? null,
      when: n.when,
      for_each: fan ? (fan.count !== undefined ? `a list of ${fan.count}` : "an expression") : null,
    };
    if (n.tool !== undefined) node.tool = n.tool;
    if (n.model !== undefined) node.model = n.model;
    return node;
  });
  const edges = g.edges.map((e) => ({ from: e.from, to: e.to, kind: e.kind, label: e.binding ?? e.predicate ?? null }));
  return { nodes, edges, waves };
}

export const ELK_MAX_NODES = 400;
export const ELK_MAX_EDGES = 2000;

export const VERB_COLORS: Record<string, { fill: string; stroke: string }> = {
  infer: { fill: "#dbeafe", stroke: "#2563eb" },
  exec: { fill: "#dcfce7", stroke: "#16a34a" },
  invoke: { fill: "#fef3c7", stroke: "#d97706" },
  agent: { fill: "#f3e8ff", stroke: "#9333ea" },
  none: { fill: "#f3f4f6", stroke: "#6b7280" },
};

export interface EdgeStyle {
  color: string;
  dash: string | null;
  width: number;
  /** Scheduling edges order tasks; recovery reads do not. */
  schedules: boolean;
  prefix: string;
}

export const EDGE_STYLES: Record<string, EdgeStyle> = {
  value: { color: "#4b5563", dash: null, width: 1.5, schedules: true, prefix: "" },
  "terminal-observation": { color: "#6b7280", dash: "6 4", width: 1.5, schedules: true, prefix: "" },
  "failure-observation": { color: "#dc2626", dash: "6 4", width: 1.5, schedules: true, prefix: "" },
  control: { color: "#2563eb", dash: null, width: 2.5, schedules: true, prefix: "after: " },
  recovery: { color: "#d97706", dash: "2 4", width: 1.5, schedules: false, prefix: "recover" },
};

export function edgeStyle(kind: string): EdgeStyle {
  return EDGE_STYLES[kind] ?? EDGE_STYLES.value;
}

export function nodeColors(node: GraphNode): { fill: string; stroke: string } {
  return VERB_COLORS[node.verb ?? "none"] ?? VERB_COLORS.none;
}

/** The two caption lines of a task: its id, then its verb with the tool or model, and modifiers. */
export function caption(node: GraphNode): [string, string] {
  const detail = node.tool ?? node.model;
  const mods: string[] = [];
  if (node.when) mods.push("when");
  if (node.for_each) mods.push("for_each");
  const verb = node.verb ?? "no verb";
  const second = [detail ? `${verb} ${detail}` : verb, ...mods].join(" · ");
  return [node.id, second];
}

export const NODE_HEIGHT = 44;
const CHAR_WIDTH = 7;

export function nodeWidth(node: GraphNode): number {
  const [a, b] = caption(node);
  return Math.min(280, Math.max(110, 24 + CHAR_WIDTH * Math.max(a.length, b.length)));
}

export interface Box {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  node: GraphNode;
}

export interface Route {
  edge: GraphEdge;
  points: { x: number; y: number }[];
}

export interface Column {
  title: string;
  x: number;
  width: number;
}

export interface Layout {
  boxes: Box[];
  routes: Route[];
  columns: Column[];
  width: number;
  height: number;
  engine: "grid" | "elk";
}

const COL_GAP = 90;
const ROW_GAP = 18;
const MARGIN = 30;
const HEADER = 30;

/** Column index of a node: its wave (a projection is acyclic: every task has one). */
export function columnOf(doc: GraphDocument, node: GraphNode): number {
  return node.wave ?? doc.waves.length;
}

export function columnTitles(doc: GraphDocument): string[] {
  return doc.waves.map((_, i) => `wave ${i + 1}`); // labels count from 1, as in --dry-run and the LSP
}

/** Edges whose both ends are drawn. */
export function drawnEdges(doc: GraphDocument): GraphEdge[] {
  const known = new Set(doc.nodes.map((n) => n.id));
  return doc.edges.filter((e) => known.has(e.from) && known.has(e.to));
}

/** Straight edges between wave columns; linear in the size of the graph, so any size is instant. */
export function gridLayout(doc: GraphDocument): Layout {
  const titles = columnTitles(doc);
  const cols: GraphNode[][] = titles.map(() => []);
  for (const n of doc.nodes) cols[columnOf(doc, n)].push(n);
  const boxes: Box[] = [];
  const columns: Column[] = [];
  let x = MARGIN;
  let height = 0;
  cols.forEach((nodes, i) => {
    const width = nodes.reduce((w, n) => Math.max(w, nodeWidth(n)), 110);
    let y = MARGIN + HEADER;
    for (const n of nodes) {
      boxes.push({ id: n.id, x, y, width, height: NODE_HEIGHT, node: n });
      y += NODE_HEIGHT + ROW_GAP;
    }
    height = Math.max(height, y);
    columns.push({ title: titles[i], x, width });
    x += width + COL_GAP;
  });
  const at = new Map(boxes.map((b) => [b.id, b]));
  const routes = drawnEdges(doc).map((edge) => {
    const a = at.get(edge.from)!;
    const b = at.get(edge.to)!;
    const forward = a.x < b.x;
    return {
      edge,
      points: [
        { x: forward ? a.x + a.width : a.x + a.width / 2, y: forward ? a.y + a.height / 2 : a.y + a.height },
        { x: forward ? b.x : b.x + b.width / 2, y: forward ? b.y + b.height / 2 : b.y },
      ],
    };
  });
  return { boxes, routes, columns, width: x - COL_GAP + MARGIN, height: height + MARGIN, engine: "grid" };
}

export function useElk(doc: GraphDocument): boolean {
  return doc.nodes.length <= ELK_MAX_NODES && doc.edges.length <= ELK_MAX_EDGES;
}

export interface ElkNode {
  id: string;
  width: number;
  height: number;
  layoutOptions: Record<string, string>;
  x?: number;
  y?: number;
}

export interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  sections?: { startPoint: { x: number; y: number }; endPoint: { x: number; y: number }; bendPoints?: { x: number; y: number }[] }[];
}

export interface ElkGraph {
  id: string;
  layoutOptions: Record<string, string>;
  children: ElkNode[];
  edges: ElkEdge[];
}

/** The ELK input: layered, left to right, one partition per wave (tasks on a cycle last). */
export function toElkGraph(doc: GraphDocument): ElkGraph {
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.partitioning.activate": "true",
      "elk.spacing.nodeNode": String(ROW_GAP),
      "elk.layered.spacing.nodeNodeBetweenLayers": String(COL_GAP - 20),
      "elk.edgeRouting": "SPLINES",
      "elk.padding": `[top=${MARGIN + HEADER},left=${MARGIN},bottom=${MARGIN},right=${MARGIN}]`,
    },
    children: doc.nodes.map((n) => ({
      id: n.id,
      width: nodeWidth(n),
      height: NODE_HEIGHT,
      layoutOptions: { "elk.partitioning.partition": String(columnOf(doc, n)) },
    })),
    edges: drawnEdges(doc).map((e, i) => ({ id: `e${i}`, sources: [e.from], targets: [e.to] })),
  };
}

/** ELK's answer → a Layout; columns span the x range of each wave's boxes. */
export function fromElk(doc: GraphDocument, out: ElkGraph & { width?: number; height?: number }): Layout {
  const byId = new Map(doc.nodes.map((n) => [n.id, n]));
  const boxes: Box[] = out.children.map((c) => ({
    id: c.id,
    x: c.x ?? 0,
    y: c.y ?? 0,
    width: c.width,
    height: c.height,
    node: byId.get(c.id)!,
  }));
  const edges = drawnEdges(doc);
  const routes: Route[] = out.edges.map((e, i) => {
    const s = e.sections?.[0];
    const points = s ? [s.startPoint, ...(s.bendPoints ?? []), s.endPoint] : [];
    return { edge: edges[i], points };
  });
  const titles = columnTitles(doc);
  const columns: Column[] = titles.map((title, i) => {
    const inCol = boxes.filter((b) => columnOf(doc, b.node) === i);
    const x = Math.min(...inCol.map((b) => b.x));
    const right = Math.max(...inCol.map((b) => b.x + b.width));
    return { title, x: Number.isFinite(x) ? x : 0, width: Number.isFinite(right - x) ? right - x : 0 };
  });
  return { boxes, routes, columns, width: out.width ?? 0, height: out.height ?? 0, engine: "elk" };
}

/** The line that says how the graph is drawn (shown above it). */
export function summary(doc: GraphDocument, layout: Layout): string {
  const n = doc.nodes.length;
  const parts = [`${n} task${n === 1 ? "" : "s"}`, `${doc.waves.length} wave${doc.waves.length === 1 ? "" : "s"}`];
  if (layout.engine === "grid" && !useElk(doc)) {
    parts.push(`simple column layout: more than ${ELK_MAX_NODES} tasks or ${ELK_MAX_EDGES} edges`);
  }
  return parts.join(" · ");
}
