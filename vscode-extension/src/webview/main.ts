/** The graph view's page script: draws the projection, lets ELK refine it in a worker, reports clicks. */
import ELK from "elkjs/lib/elk-api.js";
import {
  caption,
  EDGE_STYLES,
  edgeStyle,
  fromElk,
  type GraphDocument,
  gridLayout,
  type Layout,
  nodeColors,
  summary,
  toElkGraph,
  useElk,
  VERB_COLORS,
} from "../graphModel";

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void };
const vscode = acquireVsCodeApi();

const svg = document.getElementById("graph") as unknown as SVGSVGElement;
const view = document.getElementById("view") as HTMLDivElement;
const summaryEl = document.getElementById("summary") as HTMLSpanElement;
const legendEl = document.getElementById("legend") as HTMLSpanElement;
const workerUrl = (document.getElementById("boot") as HTMLScriptElement).dataset.worker ?? "";

let generation = 0;
let current: { doc: GraphDocument; layout: Layout } | undefined;
let transform = { x: 0, y: 0, k: 1 };
let userMoved = false;
type Layouter = { layout(g: unknown): Promise<unknown> };
let elk: Layouter | undefined;
let elkProblem: string | undefined;
/** The live run's status per task id (`running`, `success`, `failed`…), shown as `data-run` on the nodes. */
let runStatuses: Record<string, string> = {};

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

async function getElk(): Promise<Layouter | undefined> {
  if (elk || elkProblem) return elk;
  try {
    const text = await (await fetch(workerUrl)).text();
    const blobUrl = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    elk = new ELK({ workerUrl: blobUrl, workerFactory: (url?: string) => new Worker(url ?? blobUrl) }) as unknown as Layouter;
  } catch (err) {
    elkProblem = `layout worker unavailable (${String(err)}); simple column layout`;
  }
  return elk;
}

/** Legend chips as SVG: presentation attributes, since the CSP allows no inline style. */
function chip(label: string, fill: string, stroke: string, dash = false): string {
  const w = 12 + label.length * 6.5;
  return (
    `<span class="chip"><svg width="${w}" height="18"><rect x="1" y="1" width="${w - 2}" height="16" rx="4" fill="${fill}" stroke="${stroke}" stroke-width="1.5"${dash ? ' stroke-dasharray="3 2"' : ""}/>` +
    `<text x="${w / 2}" y="13" text-anchor="middle">${esc(label)}</text></svg></span>`
  );
}

function legend(): void {
  const items = Object.entries(VERB_COLORS)
    .filter(([v]) => v !== "none")
    .map(([v, c]) => chip(v, c.fill, c.stroke));
  const edges = Object.entries(EDGE_STYLES).map(
    ([k, s]) =>
      `<span class="edge-key"><svg width="26" height="8"><line x1="0" y1="4" x2="26" y2="4" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}/></svg>${k}</span>`,
  );
  legendEl.innerHTML = items.join("") + edges.join("");
}

function pathOf(points: { x: number; y: number }[]): string {
  if (points.length === 0) return "";
  if (points.length === 2) {
    const [a, b] = points;
    const dx = Math.max(30, Math.abs(b.x - a.x) / 2);
    if (b.x > a.x) return `M${a.x},${a.y} C${a.x + dx},${a.y} ${b.x - dx},${b.y} ${b.x},${b.y}`;
    return `M${a.x},${a.y} L${b.x},${b.y}`;
  }
  return "M" + points.map((p) => `${p.x},${p.y}`).join(" L");
}

function draw(doc: GraphDocument, layout: Layout): void {
  const started = performance.now();
  const parts: string[] = [];
  parts.push("<defs>");
  for (const [kind, s] of Object.entries(EDGE_STYLES)) {
    parts.push(
      `<marker id="arrow-${kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${s.color}"/></marker>`,
    );
  }
  parts.push("</defs>");
  parts.push(`<g id="world" transform="translate(${transform.x},${transform.y}) scale(${transform.k})">`);
  for (const c of layout.columns) {
    parts.push(
      `<g class="column"><rect x="${c.x - 12}" y="8" width="${c.width + 24}" height="${Math.max(layout.height - 16, 40)}" rx="8"/><text x="${c.x + c.width / 2}" y="30" text-anchor="middle">${esc(c.title)}</text></g>`,
    );
  }
  for (const r of layout.routes) {
    if (!r.edge || r.points.length === 0) continue;
    const s = edgeStyle(r.edge.kind);
    const label = s.prefix + (r.edge.label ?? "");
    parts.push(
      `<path class="edge" data-kind="${r.edge.kind}" data-from="${esc(r.edge.from)}" data-to="${esc(r.edge.to)}" d="${pathOf(r.points)}" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""} marker-end="url(#arrow-${EDGE_STYLES[r.edge.kind] ? r.edge.kind : "value"})"><title>${esc(`${r.edge.from} → ${r.edge.to} (${r.edge.kind}${label ? ": " + label : ""})`)}</title></path>`,
    );
  }
  for (const b of layout.boxes) {
    const n = b.node;
    const c = nodeColors(n);
    const [top, bottom] = caption(n);
    const tip = [n.id, bottom, n.when ? `when: ${n.when}` : "", n.for_each ? `for_each over ${n.for_each}` : ""].filter(Boolean).join("\n");
    parts.push(
      `<g class="task" data-task="${esc(n.id)}" data-verb="${esc(n.verb ?? "")}" data-wave="${n.wave ?? ""}" transform="translate(${b.x},${b.y})" tabindex="0" role="button"><title>${esc(tip)}</title>` +
        `<rect width="${b.width}" height="${b.height}" rx="7" fill="${c.fill}" stroke="${c.stroke}"/>` +
        `<text x="10" y="18" class="id">${esc(top)}</text><text x="10" y="34" class="detail">${esc(bottom)}</text></g>`,
    );
  }
  parts.push("</g>");
  svg.innerHTML = parts.join("");
  let text = summary(doc, layout);
  if (layout.engine === "grid" && useElk(doc)) text += elkProblem ? ` · ${elkProblem}` : " · laying out…";
  summaryEl.textContent = text;
  svg.dataset.engine = layout.engine;
  svg.dataset.tasks = String(doc.nodes.length);
  svg.dataset.drawMs = String(Math.round(performance.now() - started));
  applyRun();
}

function applyRun(): void {
  for (const g of Array.from(svg.querySelectorAll<SVGGElement>("g.task"))) {
    const status = g.dataset.task !== undefined ? runStatuses[g.dataset.task] : undefined;
    if (status) g.dataset.run = status;
    else delete g.dataset.run;
  }
  svg.dataset.run = Object.keys(runStatuses).length ? "true" : "";
}

function applyTransform(): void {
  const world = svg.querySelector("#world");
  world?.setAttribute("transform", `translate(${transform.x},${transform.y}) scale(${transform.k})`);
}

function fit(): void {
  if (!current) return;
  const { width, height } = current.layout;
  const vw = view.clientWidth || 800;
  const vh = view.clientHeight || 600;
  const k = Math.min(1.2, Math.max(0.05, Math.min(vw / (width || 1), vh / (height || 1))));
  transform = { k, x: (vw - width * k) / 2, y: Math.max(0, (vh - height * k) / 2) };
  applyTransform();
}

async function show(doc: GraphDocument): Promise<void> {
  const gen = ++generation;
  const first = !current;
  current = { doc, layout: gridLayout(doc) };
  draw(doc, current.layout);
  if (first || !userMoved) fit();
  if (!useElk(doc)) return;
  const engine = await getElk();
  if (!engine || gen !== generation) {
    if (gen === generation) draw(doc, current.layout);
    return;
  }
  try {
    const out = await engine.layout(toElkGraph(doc));
    if (gen !== generation) return;
    current = { doc, layout: fromElk(doc, out as never) };
    draw(doc, current.layout);
    if (!userMoved) fit();
  } catch (err) {
    elkProblem = `layout failed (${String(err)}); simple column layout`;
    if (gen === generation) draw(doc, current.layout);
  }
}

window.addEventListener("message", (ev: MessageEvent) => {
  const m = ev.data as { type: string; doc?: GraphDocument; text?: string; statuses?: Record<string, string> };
  if (m.type === "graph" && m.doc) {
    svg.dataset.stale = "";
    void show(m.doc);
  }
  else if (m.type === "run" && m.statuses) {
    runStatuses = m.statuses;
    applyRun();
  }
  else if (m.type === "message" && m.text) {
    // the last graph stays drawn (dimmed) under the reason there is no newer one
    summaryEl.textContent = current ? `${m.text} The graph shown is the last one.` : m.text;
    svg.dataset.stale = current ? "true" : "";
    if (!current) svg.innerHTML = "";
  }
});

svg.addEventListener("click", (ev) => {
  const g = (ev.target as Element).closest("g.task") as SVGGElement | null;
  if (g?.dataset.task) vscode.postMessage({ type: "reveal", id: g.dataset.task });
});
svg.addEventListener("keydown", (ev) => {
  const g = (ev.target as Element).closest("g.task") as SVGGElement | null;
  if (g?.dataset.task && (ev.key === "Enter" || ev.key === " ")) vscode.postMessage({ type: "reveal", id: g.dataset.task });
});

view.addEventListener(
  "wheel",
  (ev) => {
    ev.preventDefault();
    userMoved = true;
    const rect = view.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    const py = ev.clientY - rect.top;
    const k = Math.min(4, Math.max(0.05, transform.k * Math.exp(-ev.deltaY * 0.0015)));
    transform = { k, x: px - ((px - transform.x) * k) / transform.k, y: py - ((py - transform.y) * k) / transform.k };
    applyTransform();
  },
  { passive: false },
);

let drag: { x: number; y: number; tx: number; ty: number } | undefined;
view.addEventListener("pointerdown", (ev) => {
  if ((ev.target as Element).closest("g.task")) return;
  drag = { x: ev.clientX, y: ev.clientY, tx: transform.x, ty: transform.y };
  view.setPointerCapture(ev.pointerId);
});
view.addEventListener("pointermove", (ev) => {
  if (!drag) return;
  userMoved = true;
  transform = { ...transform, x: drag.tx + ev.clientX - drag.x, y: drag.ty + ev.clientY - drag.y };
  applyTransform();
});
view.addEventListener("pointerup", () => {
  drag = undefined;
});
document.getElementById("fit")?.addEventListener("click", () => {
  userMoved = false;
  fit();
});
window.addEventListener("resize", () => {
  if (!userMoved) fit();
});

legend();
vscode.postMessage({ type: "ready" });
