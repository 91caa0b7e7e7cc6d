import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  caption,
  columnTitles,
  ELK_MAX_NODES,
  fromElk,
  type GraphDocument,
  gridLayout,
  nodeColors,
  summary,
  toElkGraph,
  useElk,
  VERB_COLORS,
  DEAD_COLORS,
  CYCLE_STROKE,
} from "../graphModel";
import { checkArgs, encodeInputValue, inputsFromSymbols, runArgs } from "../run";

const DOC: GraphDocument = {
  nika_graph_version: 1,
  nodes: [
    { id: "fetch", verb: "invoke", wave: 0, when: null, for_each: null, tool: "nika:fetch" },
    { id: "summarize", verb: "infer", wave: 1, when: null, for_each: null, model: "mock/echo" },
    { id: "never", verb: "exec", wave: 1, when: null, for_each: null, dead: true },
    { id: "a", verb: "exec", wave: null, when: null, for_each: null },
  ],
  edges: [
    { from: "fetch", to: "summarize", kind: "value", label: "output" },
    { from: "fetch", to: "never", kind: "control", label: "skipped" },
    { from: "ghost", to: "a", kind: "value", label: "output" },
  ],
  waves: [["fetch"], ["summarize", "never"]],
  spans: {},
};

test("waves are columns, tasks on a cycle a last column", () => {
  assert.deepEqual(columnTitles(DOC), ["wave 1", "wave 2", "on a cycle"]);
  const l = gridLayout(DOC);
  const x = Object.fromEntries(l.boxes.map((b) => [b.id, b.x]));
  assert.ok(x.fetch < x.summarize);
  assert.equal(x.summarize, x.never);
  assert.ok(x.never < x.a);
  assert.equal(l.routes.length, 2, "edges from undeclared tasks are not drawn");
  assert.equal(l.engine, "grid");
});

test("ELK input: one partition per column, layered, left to right", () => {
  const g = toElkGraph(DOC);
  assert.equal(g.layoutOptions["elk.algorithm"], "layered");
  assert.equal(g.layoutOptions["elk.partitioning.activate"], "true");
  assert.deepEqual(
    g.children.map((c) => [c.id, c.layoutOptions["elk.partitioning.partition"]]),
    [["fetch", "0"], ["summarize", "1"], ["never", "1"], ["a", "2"]],
  );
  assert.deepEqual(g.edges.map((e) => [e.sources[0], e.targets[0]]), [["fetch", "summarize"], ["fetch", "never"]]);
});

test("ELK output maps back to boxes, routes and columns", () => {
  const g = toElkGraph(DOC);
  const out = {
    ...g,
    width: 500,
    height: 200,
    children: g.children.map((c, i) => ({ ...c, x: 10 + 150 * (i > 0 ? (i > 2 ? 2 : 1) : 0), y: 50 })),
    edges: g.edges.map((e) => ({ ...e, sections: [{ startPoint: { x: 1, y: 2 }, endPoint: { x: 3, y: 4 }, bendPoints: [{ x: 2, y: 3 }] }] })),
  };
  const l = fromElk(DOC, out);
  assert.equal(l.engine, "elk");
  assert.deepEqual(l.routes[0].points, [{ x: 1, y: 2 }, { x: 2, y: 3 }, { x: 3, y: 4 }]);
  assert.equal(l.routes[1].edge.kind, "control");
  assert.deepEqual(l.columns.map((c) => [c.title, c.x]), [["wave 1", 10], ["wave 2", 160], ["on a cycle", 310]]);
});

test("colours: by verb, dead greyed, cycle outlined red", () => {
  assert.deepEqual(nodeColors(DOC.nodes[0]), VERB_COLORS.invoke);
  assert.deepEqual(nodeColors(DOC.nodes[2]), DEAD_COLORS);
  assert.equal(nodeColors(DOC.nodes[3]).stroke, CYCLE_STROKE);
  assert.deepEqual(caption(DOC.nodes[0]), ["fetch", "invoke nika:fetch"]);
  assert.deepEqual(caption(DOC.nodes[2]), ["never", "exec · dead"]);
});

function big(n: number): GraphDocument {
  const nodes = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, verb: "exec", wave: i % 50, when: null, for_each: null }));
  const waves: string[][] = Array.from({ length: 50 }, (_, w) => nodes.filter((x) => x.wave === w).map((x) => x.id));
  const edges = nodes.slice(50).map((x, i) => ({ from: `t${i}`, to: x.id, kind: "value", label: "output" }));
  return { nika_graph_version: 1, nodes, edges, waves, spans: {} };
}

test("2,000 tasks: no ELK, the column layout is instant, and the summary says so", () => {
  const doc = big(2000);
  assert.equal(useElk(doc), false);
  assert.equal(useElk(big(ELK_MAX_NODES)), true);
  const t0 = performance.now();
  const l = gridLayout(doc);
  assert.ok(performance.now() - t0 < 200, "grid layout of 2,000 tasks under 200 ms");
  assert.equal(l.boxes.length, 2000);
  assert.match(summary(doc, l), /2000 tasks · 50 waves · simple column layout: more than 400 tasks/);
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
