import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  caption,
  columnTitles,
  drawableGraph,
  drawingOf,
  ELK_MAX_NODES,
  fromElk,
  type GraphDocument,
  type GraphProjection,
  gridLayout,
  noGraphReason,
  nodeColors,
  type SemanticDocument,
  summary,
  toElkGraph,
  useElk,
  VERB_COLORS,
  wavesOf,
} from "../graphModel";
import { checkArgs, encodeInputValue, inputsFromSymbols, runArgs } from "../run";

/** A `nika/semanticDocument` reply as the server sends it (spec 16: the projection verbatim). */
const GRAPH: GraphProjection = {
  graph_format: 2,
  workflow: "plan",
  nodes: [
    { id: "fetch", verb: "invoke", tool: "nika:fetch", permits: ["net.http:example.com"], when: null, fan_out: null, cost_interval: null },
    { id: "other", verb: "exec", permits: ["exec:true"], when: null, fan_out: null, cost_interval: null },
    { id: "summarize", verb: "infer", model: "mock/echo", permits: [], when: "${{ inputs.go }}", fan_out: { kind: "list", count: 2 }, cost_interval: [0, 0] },
    { id: "notify", verb: "exec", permits: ["exec:echo"], when: null, fan_out: null, cost_interval: null },
  ],
  edges: [
    { from: "fetch", to: "summarize", kind: "value", binding: "page" },
    { from: "fetch", to: "summarize", kind: "terminal-observation", binding: "took" },
    { from: "summarize", to: "notify", kind: "control", predicate: "failure" },
    { from: "other", to: "notify", kind: "recovery" },
  ],
};
const REPLY: SemanticDocument = {
  semantic_document_format: 1,
  graph: GRAPH,
  spans: { fetch: { start: { line: 6, character: 2 }, end: { line: 6, character: 7 } } },
};
const DOC: GraphDocument = drawingOf(GRAPH);

test("the waves come from the projection's edges; recovery reads do not schedule", () => {
  assert.deepEqual(wavesOf(GRAPH), [["fetch", "other"], ["summarize"], ["notify"]]);
  assert.deepEqual(DOC.waves, wavesOf(GRAPH));
  assert.deepEqual(DOC.nodes.map((n) => [n.id, n.wave]), [["fetch", 0], ["other", 0], ["summarize", 1], ["notify", 2]]);
});

test("edges are labelled with their binding or predicate", () => {
  assert.deepEqual(DOC.edges.map((e) => e.label), ["page", "took", "failure", null]);
  assert.equal(DOC.nodes[2].for_each, "a list of 2");
  assert.deepEqual(caption(DOC.nodes[2]), ["summarize", "infer mock/echo · when · for_each"]);
});

test("only graph_format 2 is drawn; without a graph the bar says why", () => {
  assert.equal(drawableGraph(REPLY), GRAPH);
  assert.equal(drawableGraph({ ...REPLY, graph: { ...GRAPH, graph_format: 3 } }), null);
  assert.match(noGraphReason({ ...REPLY, graph: { ...GRAPH, graph_format: 3 } }), /graph_format 3/);
  assert.equal(drawableGraph({ semantic_document_format: 1, graph: null, reason: "findings", spans: {} }), null);
  assert.match(noGraphReason({ semantic_document_format: 1, graph: null, reason: "findings", spans: {} }), /Problems panel/);
  assert.match(noGraphReason({ semantic_document_format: 1, graph: null, reason: "parse", spans: {} }), /not a workflow/);
  assert.match(noGraphReason(null), /Open the workflow/);
});

test("waves are columns", () => {
  assert.deepEqual(columnTitles(DOC), ["wave 1", "wave 2", "wave 3"]);
  const l = gridLayout(DOC);
  const x = Object.fromEntries(l.boxes.map((b) => [b.id, b.x]));
  assert.ok(x.fetch < x.summarize && x.summarize < x.notify);
  assert.equal(x.fetch, x.other);
  assert.equal(l.routes.length, 4);
  assert.equal(l.engine, "grid");
});

test("ELK input: one partition per column, layered, left to right", () => {
  const g = toElkGraph(DOC);
  assert.equal(g.layoutOptions["elk.algorithm"], "layered");
  assert.equal(g.layoutOptions["elk.partitioning.activate"], "true");
  assert.deepEqual(
    g.children.map((c) => [c.id, c.layoutOptions["elk.partitioning.partition"]]),
    [["fetch", "0"], ["other", "0"], ["summarize", "1"], ["notify", "2"]],
  );
  assert.deepEqual(g.edges.map((e) => [e.sources[0], e.targets[0]]), [["fetch", "summarize"], ["fetch", "summarize"], ["summarize", "notify"], ["other", "notify"]]);
});

test("ELK output maps back to boxes, routes and columns", () => {
  const g = toElkGraph(DOC);
  const col = [0, 0, 1, 2];
  const out = {
    ...g,
    width: 500,
    height: 200,
    children: g.children.map((c, i) => ({ ...c, x: 10 + 150 * col[i], y: 50 })),
    edges: g.edges.map((e) => ({ ...e, sections: [{ startPoint: { x: 1, y: 2 }, endPoint: { x: 3, y: 4 }, bendPoints: [{ x: 2, y: 3 }] }] })),
  };
  const l = fromElk(DOC, out);
  assert.equal(l.engine, "elk");
  assert.deepEqual(l.routes[0].points, [{ x: 1, y: 2 }, { x: 2, y: 3 }, { x: 3, y: 4 }]);
  assert.equal(l.routes[2].edge.kind, "control");
  assert.deepEqual(l.columns.map((c) => [c.title, c.x]), [["wave 1", 10], ["wave 2", 160], ["wave 3", 310]]);
});

test("colours by verb", () => {
  assert.deepEqual(nodeColors(DOC.nodes[0]), VERB_COLORS.invoke);
  assert.deepEqual(nodeColors({ ...DOC.nodes[0], verb: null }), VERB_COLORS.none);
  assert.deepEqual(caption(DOC.nodes[0]), ["fetch", "invoke nika:fetch"]);
});

function big(n: number): GraphDocument {
  const nodes = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, verb: "exec", permits: [], when: null, fan_out: null, cost_interval: null }));
  const edges = nodes.slice(50).map((x, i) => ({ from: `t${i}`, to: x.id, kind: "value", binding: "v" }));
  return drawingOf({ graph_format: 2, workflow: "big", nodes, edges });
}

test("2,000 tasks: no ELK, the column layout is instant, and the summary says so", () => {
  const doc = big(2000);
  assert.equal(doc.waves.length, 40);
  assert.equal(useElk(doc), false);
  assert.equal(useElk(big(ELK_MAX_NODES)), true);
  const t0 = performance.now();
  const l = gridLayout(doc);
  assert.ok(performance.now() - t0 < 200, "grid layout of 2,000 tasks under 200 ms");
  assert.equal(l.boxes.length, 2000);
  assert.match(summary(doc, l), /2000 tasks · 40 waves · simple column layout: more than 400 tasks/);
});

test("run: inputs from the outline, values as JSON, --var per input", () => {
  const inputs = inputsFromSymbols([
    { name: "workflow" },
    { name: "inputs", children: [{ name: "topic", detail: "string" }, { name: "count", detail: "int" }, { name: "x" }] },
  ]);
  assert.deepEqual(inputs, [{ name: "topic", type: "string" }, { name: "count", type: "int" }, { name: "x", type: undefined }]);
  assert.equal(encodeInputValue("42", "string"), '"42"');
  assert.equal(encodeInputValue('"quoted"', "string"), '"quoted"');
  assert.equal(encodeInputValue("3", "int"), "3");
  assert.equal(encodeInputValue("hello world", undefined), '"hello world"');
  assert.equal(encodeInputValue('["a"]', "list[string]"), '["a"]');
  assert.deepEqual(runArgs("/w/a.nika.yaml", [["topic", '"x y"'], ["count", "3"]]), [
    "run", "/w/a.nika.yaml", "--var", 'topic="x y"', "--var", "count=3",
  ]);
  assert.deepEqual(checkArgs(undefined), ["check", "--output-format", "concise", "--color", "never", "."]);
});

test("the problem matcher's pattern reads nika check --output-format concise", async () => {
  const { readFileSync } = await import("node:fs");
  const pkg = JSON.parse(readFileSync("package.json", "utf8"));
  const m = pkg.contributes.problemMatchers[0].pattern;
  const line = "wf/bad.nika.yaml:6:14: error[NIKA-DAG-002] `after:` names `ghost`, which is not a task. Name a task.";
  const got = new RegExp(m.regexp).exec(line);
  assert.ok(got);
  assert.deepEqual([got[m.file], got[m.line], got[m.column], got[m.severity], got[m.code]], ["wf/bad.nika.yaml", "6", "14", "error", "NIKA-DAG-002"]);
  assert.equal(got[m.message], "`after:` names `ghost`, which is not a task. Name a task.");
  assert.equal(new RegExp(m.regexp).exec("Found 1 error in 1 of 6 files."), null);
});
