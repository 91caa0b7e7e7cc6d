/**
 * The live run view and the history view against the fake `vscode` module: a child process (node,
 * playing `nika run --events ndjson:-`) writes event lines in chunks; the tree, its title, the graph
 * listener, the output channel and the notifications follow.
 */
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import * as vscode from "vscode";
import { RunView } from "../runView";
import { created, messages } from "./fakes/vscode";

const fake = vscode as unknown as typeof import("./fakes/vscode");

function script(body: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nika-view-"));
  const file = path.join(dir, "fake-nika.js");
  fs.writeFileSync(file, body);
  return file;
}

const LINES = [
  { type: "workflow.started", workflow: "demo", source: "demo.nika.yaml", task: null },
  { type: "task.scheduled", task: "a" },
  { type: "task.scheduled", task: "b" },
  { type: "task.started", task: "a", note: "exec · echo" },
  { type: "task.completed", task: "a", duration_ms: 12 },
  { type: "task.started", task: "b", note: "invoke · nika:read" },
  { type: "task.failed", task: "b", duration_ms: 3, error_code: "NIKA-BUILTIN-READ-001", message: "no file" },
  { type: "workflow.failed", workflow: "demo", state: "failure", outputs: "null", task: null },
];

/** Writes the lines split mid-line across writes, a progress line on stderr, then exits `code`. */
function fakeRun(code: number): string {
  const text = LINES.map((l) => JSON.stringify(l)).join("\n") + "\n";
  return script(`
const text = ${JSON.stringify(text)};
process.stderr.write("  … a started\\n");
let i = 0;
const step = () => {
  if (i >= text.length) return process.exit(${code});
  process.stdout.write(text.slice(i, i + 37));
  i += 37;
  setTimeout(step, 2);
};
step();
`);
}

function finished(view: RunView): Promise<void> {
  return new Promise((resolve) => {
    view.onDidFinish = resolve;
  });
}

test("a run's lines fill the tree; the graph hears the statuses; the title and a warning say it failed", async () => {
  const heard: [string, Record<string, string>][] = [];
  const view = new RunView({ runStatuses: (uri, s) => heard.push([uri.fsPath, s]) });
  const done = finished(view);
  const file = fake.Uri.file("/w/demo.nika.yaml") as unknown as vscode.Uri;
  messages.length = 0;
  await view.start(process.execPath, [fakeRun(1)], os.tmpdir(), { file });
  assert.equal(view.running, true);
  await done;
  assert.equal(view.running, false);
  const rows = view.getChildren().map((t) => view.getTreeItem(t));
  assert.deepEqual(
    rows.map((r) => [r.label, r.description, (r.iconPath as unknown as { id: string }).id]),
    [
      ["a", "12 ms", "pass"],
      ["b", "NIKA-BUILTIN-READ-001 · 3 ms", "error"],
    ],
  );
  assert.deepEqual(rows[1].command?.arguments, [file, "b"], "a row reveals its task");
  const tree = created.trees["nika.run"];
  assert.equal(tree.description, "demo: failed · 1 success, 1 failed");
  assert.equal(tree.message, undefined);
  assert.deepEqual(heard.at(-1), ["/w/demo.nika.yaml", { a: "success", b: "failed" }]);
  assert.ok(heard.some(([, s]) => s.a === "running"), "the graph heard the task start");
  const out = created.outputs.find((o) => o.name === "Nika Run")!.text.join("");
  assert.match(out, /… a started/);
  assert.deepEqual(messages, [{ kind: "warning", text: "Nika: demo: failed · 1 success, 1 failed" }]);
  view.dispose();
});

test("a refusal before any event (exit 2) is said, and a replay names its file from the stream", async () => {
  const view = new RunView({ runStatuses: () => undefined });
  let done = finished(view);
  messages.length = 0;
  await view.start(process.execPath, [script("process.stderr.write('refused: NIKA-DAG-002\\n'); process.exit(2);")], os.tmpdir(), {
    label: "x.nika.yaml",
  });
  await done;
  assert.match(created.trees["nika.run"].description!, /^x\.nika\.yaml: starting · refused before any effect/);
  assert.equal(messages[0]?.kind, "error");
  assert.match(messages[0].text, /refused before any effect/);

  messages.length = 0;
  done = finished(view);
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "nika-cwd-"));
  await view.start(process.execPath, [fakeRun(0)], cwd, { label: "demo", replay: true });
  await done;
  assert.deepEqual(messages, [], "a replay ends quietly");
  const item = view.getTreeItem(view.getChildren()[0]);
  assert.equal((item.command?.arguments?.[0] as { fsPath: string }).fsPath, path.join(cwd, "demo.nika.yaml"), "the file the stream named");
  view.dispose();
});

test("Stop Run interrupts the process; the cancelled tasks it reports show", async () => {
  const view = new RunView({ runStatuses: () => undefined });
  const done = finished(view);
  const body = `
const w = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
w({ type: "workflow.started", workflow: "slow", task: null });
w({ type: "task.started", task: "wait" });
process.on("SIGINT", () => {
  w({ type: "task.cancelled", task: "wait", error_code: "NIKA-CANCEL-001", duration_ms: 40 });
  w({ type: "workflow.cancelled", workflow: "slow", state: "cancelled", task: null });
  process.exit(3);
});
setInterval(() => undefined, 1000);
`;
  await view.start(process.execPath, [script(body)], os.tmpdir(), { label: "slow" });
  while (view.getChildren().length === 0) await new Promise((r) => setTimeout(r, 10));
  assert.match(String(view.getTreeItem(view.getChildren()[0]).description), /^running/);
  view.stop();
  await done;
  assert.equal(view.getTreeItem(view.getChildren()[0]).description, "NIKA-CANCEL-001 · 40 ms");
  assert.equal(created.trees["nika.run"].description, "slow: cancelled · 1 cancelled");
  view.dispose();
});

test("the history view lists the runs nika trace ls reports in the workspace's trace folder", async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "nika-ws-"));
  fs.mkdirSync(path.join(ws, ".nika", "traces"), { recursive: true });
  const reply = { runs: [{ run: "r1", workflow: "demo", state: "success", started_ns: Date.now() * 1e6, duration_ms: 5, tasks: 1, task_states: { success: 1 } }] };
  const bin = script(`#!${process.execPath}\nconst a = process.argv.slice(2); if (a[0] !== "trace" || a[1] !== "ls") process.exit(9);\nprocess.stdout.write(${JSON.stringify(JSON.stringify(reply))});\n`);
  fs.chmodSync(bin, 0o755);
  fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(ws) }];
  const logged: string[] = [];
  const { HistoryView } = await import("../historyView");
  const history = new HistoryView(async () => bin, (l) => logged.push(l));
  await history.refresh();
  const items = history.getChildren().map((r) => history.getTreeItem(r));
  assert.deepEqual(items.map((i) => [i.label, i.description]), [["demo", "success · 5 ms · just now"]]);
  assert.equal(items[0].command?.command, "nika.openPastRun");
  assert.equal((items[0].command?.arguments?.[0] as { traceDir: string }).traceDir, path.join(ws, ".nika", "traces"));
  assert.deepEqual(logged, []);
  fake.workspace.workspaceFolders = undefined;
  history.dispose();
});
