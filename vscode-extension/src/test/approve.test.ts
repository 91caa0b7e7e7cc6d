/**
 * "Nika: Approve Paused Run": the model (the prompt read back from a paused run's journal, the
 * answers offered, the resume command line), a paused live run's notification, and the whole
 * chain on a real run of this checkout (skipped, saying why, when python3 cannot run nika here).
 */
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import * as vscode from "vscode";
import { liveRunArgs } from "../run";
import { LineBuffer, RunState } from "../runEvents";
import {
  answerOptions,
  approveArgs,
  journalPath,
  lsArgs,
  parseTraceLs,
  pausedPrompt,
  pausedRuns,
  replayArgs,
  runFolder,
  typedAnswer,
} from "../runHistory";
import { APPROVE, RunView } from "../runView";
import { calls, infoPick, messages } from "./fakes/vscode";

const fake = vscode as unknown as typeof import("./fakes/vscode");

const started = { type: "workflow.started", workflow: "gate", source: "gate.nika.yaml", task: null };
const paused = (extra: object) => ({ type: "workflow.paused", workflow: "gate", state: "paused", task: "ask", message: "Ship it?", ...extra });
const lines = (...evs: object[]) => evs.map((e) => JSON.stringify(e)).join("\n") + "\n";

test("a paused run's prompt is read from its journal; confirm and choice offer their answers, input is typed text", () => {
  const confirm = pausedPrompt(lines(started, { type: "task.started", task: "ask" }, paused({ mode: "confirm", choices: "null" })));
  assert.deepEqual(confirm, { task: "ask", mode: "confirm", message: "Ship it?", choices: undefined, source: "gate.nika.yaml" });
  assert.deepEqual(answerOptions(confirm as never), [
    { label: "Approve", json: "true" },
    { label: "Reject", json: "false" },
  ]);
  const choice = pausedPrompt(lines(started, paused({ mode: "choice", choices: JSON.stringify(["red", 2]) })));
  assert.ok(!("error" in choice));
  assert.deepEqual(answerOptions(choice), [
    { label: "red", json: '"red"' },
    { label: "2", json: "2" },
  ]);
  const input = pausedPrompt(lines(started, paused({ mode: "input", choices: "null" })));
  assert.ok(!("error" in input));
  assert.equal(answerOptions(input), undefined);
  assert.equal(typedAnswer("42"), '"42"', "a typed answer stays a string");
  assert.deepEqual(pausedPrompt(lines(started, { type: "workflow.completed", state: "success", task: null })), {
    error: "the run's journal has no `workflow.paused` line: it is not waiting for an answer",
  });
  assert.deepEqual(pausedPrompt("not json\n" + lines(paused({ task: null }))), { error: "the run's `workflow.paused` line names no task" });
});

test("which runs wait: paused and not superseded; the journal path and the resume command line", () => {
  const ls = JSON.stringify({
    runs: [
      { run: "r3", workflow: "gate", state: "paused", started_ns: 3, paused_task: "ask", path: ".nika/traces/r3.ndjson", resume_candidate: true },
      { run: "r2", workflow: "gate", state: "paused", started_ns: 2, paused_task: "ask", path: ".nika/traces/r2.ndjson", resume_candidate: false },
      { run: "r1", workflow: "other", state: "success", started_ns: 1, resume_candidate: true },
    ],
  });
  const runs = parseTraceLs(ls, "/w/.nika/traces");
  assert.ok(Array.isArray(runs));
  assert.deepEqual(pausedRuns(runs).map((r) => r.run), ["r3"], "a later run of the workflow supersedes a paused one");
  assert.equal(runFolder(runs[0]), "/w");
  assert.equal(journalPath(runs[0]), "/w/.nika/traces/r3.ndjson");
  assert.equal(journalPath({ ...runs[0], path: "/abs/r3.ndjson" }), "/abs/r3.ndjson");
  assert.equal(journalPath({ ...runs[0], path: undefined }), "/w/.nika/traces/r3.ndjson");
  assert.deepEqual(approveArgs("/w/gate.nika.yaml", "/w/.nika/traces/r3.ndjson", "ask", "true"), [
    "run",
    "/w/gate.nika.yaml",
    "--resume",
    "/w/.nika/traces/r3.ndjson",
    "--answer",
    "ask=true",
    "--events",
    "ndjson:-",
  ]);
});

test("a live run that pauses says which task waits and offers Approve, which runs the approve command", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nika-pause-"));
  const bin = path.join(dir, "fake-nika.js");
  const text = lines(started, { type: "task.scheduled", task: "ask" }, { type: "task.started", task: "ask" }, paused({ mode: "confirm" }));
  fs.writeFileSync(bin, `process.stdout.write(${JSON.stringify(text)}); process.exit(4);`);
  const view = new RunView({ runStatuses: () => undefined });
  const done = new Promise<void>((resolve) => (view.onDidFinish = resolve));
  messages.length = 0;
  calls.length = 0;
  infoPick.value = APPROVE;
  await view.start(process.execPath, [bin], dir, { label: "gate" });
  await done;
  await new Promise((r) => setTimeout(r, 10)); // the notification's answer is handled after the finish
  infoPick.value = undefined;
  assert.deepEqual(messages, [{ kind: "info", text: "Nika: gate: paused · 1 paused: `ask` waits for an answer. | Approve…" }]);
  const row = view.getTreeItem(view.getChildren()[0]);
  assert.deepEqual([row.label, row.description, (row.iconPath as unknown as { id: string }).id], ["ask", "waits for an answer", "debug-pause"]);
  assert.ok(calls.some((c) => c.command === "nika.approveRun"), JSON.stringify(calls));
  view.dispose();
});

const root = path.resolve(__dirname, "..", "..", "..");
const env = { ...process.env, PYTHONPATH: root, NO_COLOR: "1" };
const probe = spawnSync("python3", ["-c", "import nika.cli"], { cwd: root, env, timeout: 20_000 });
const why = probe.error ? `python3 not runnable: ${probe.error.message}` : probe.status !== 0 ? "python3 cannot import nika from this checkout" : undefined;

const GATE = `nika: v1
workflow:
  id: gate
permits:
  tools: ["nika:prompt", "nika:log"]
tasks:
  ask:
    invoke:
      tool: "nika:prompt"
      args: { mode: confirm, message: "Ship it?" }
  ship:
    with:
      ok: \${{ tasks.ask.output }}
    when: \${{ with.ok == true }}
    invoke:
      tool: "nika:log"
      args: { message: "shipped" }
`;

async function stream(args: string[], cwd: string): Promise<{ state: RunState; code: number | null; stderr: string }> {
  const state = new RunState();
  const buf = new LineBuffer();
  const child = spawn("python3", ["-m", "nika", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (c: string) => buf.push(c).forEach((l) => state.applyLine(l)));
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += String(c)));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  buf.end().forEach((l) => state.applyLine(l));
  return { state, code, stderr };
}

test("a real paused run: listed as waiting, its prompt read back, resumed with the answer to success", { skip: why, timeout: 60_000 }, async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "nika-gate-"));
  const file = path.join(ws, "gate.nika.yaml");
  fs.writeFileSync(file, GATE);
  const first = await stream(liveRunArgs(file, []), ws);
  assert.equal(first.code, 4, first.stderr);
  assert.equal(first.state.phase, "paused");
  assert.equal(first.state.pausedTask, "ask");
  assert.deepEqual(first.state.statuses(), { ask: "paused", ship: "pending" }, "the gate's task waits, it is not running");

  const nika = (args: string[]) => spawnSync("python3", ["-m", "nika", ...args], { cwd: root, env, encoding: "utf8", timeout: 30_000 });
  const traces = path.join(ws, ".nika", "traces");
  const listed = parseTraceLs(nika(lsArgs(traces)).stdout, traces);
  assert.ok(Array.isArray(listed), JSON.stringify(listed));
  const [waiting] = pausedRuns(listed);
  assert.ok(waiting, JSON.stringify(listed));
  assert.equal(runFolder(waiting), ws);
  const prompt = pausedPrompt(nika(replayArgs(waiting)).stdout);
  assert.ok(!("error" in prompt), JSON.stringify(prompt));
  assert.deepEqual([prompt.task, prompt.mode, prompt.message, prompt.source], ["ask", "confirm", "Ship it?", file]);

  const resumed = await stream(approveArgs(path.resolve(ws, prompt.source!), journalPath(waiting), prompt.task, "true"), ws);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual([resumed.state.phase, resumed.state.statuses()], ["success", { ask: "success", ship: "success" }]);
  const after = parseTraceLs(nika(lsArgs(traces)).stdout, traces);
  assert.ok(Array.isArray(after));
  assert.deepEqual(pausedRuns(after), [], "once resumed, the paused run no longer waits");
  fs.rmSync(ws, { recursive: true, force: true });
});

test("the history view marks a waiting run for its Approve button and replays its journal", async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "nika-ws-"));
  fs.mkdirSync(path.join(ws, ".nika", "traces"), { recursive: true });
  const reply = {
    runs: [
      { run: "r2", workflow: "gate", state: "paused", started_ns: 2, paused_task: "ask", resume_candidate: true },
      { run: "r1", workflow: "gate", state: "paused", started_ns: 1, paused_task: "ask", resume_candidate: false },
    ],
  };
  const journal = lines(started, paused({ mode: "confirm" }));
  const bin = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nika-bin-")), "nika");
  fs.writeFileSync(
    bin,
    `#!${process.execPath}\nconst a = process.argv.slice(2);\n` +
      `if (a[1] === "ls") process.stdout.write(${JSON.stringify(JSON.stringify(reply))});\n` +
      `else if (a[1] === "replay" && a[2] === "r2") process.stdout.write(${JSON.stringify(journal)});\n` +
      `else { process.stderr.write("nika trace: no run " + a[2] + "\\n"); process.exit(2); }\n`,
  );
  fs.chmodSync(bin, 0o755);
  fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(ws) }];
  const { HistoryView } = await import("../historyView");
  const history = new HistoryView(async () => bin, () => undefined);
  await history.refresh();
  const items = history.getChildren().map((r) => history.getTreeItem(r));
  assert.deepEqual(items.map((i) => i.contextValue), ["nika.pastRun.waiting", "nika.pastRun.paused"], "only the newest paused run waits");
  assert.deepEqual(history.waiting().map((r) => r.run), ["r2"]);
  const replayed = await history.replay(history.waiting()[0]);
  assert.ok("stdout" in replayed && !("error" in pausedPrompt(replayed.stdout)), JSON.stringify(replayed));
  assert.deepEqual(await history.replay(history.getChildren()[1]), { error: "nika trace replay r1: nika trace: no run r1" });
  fake.workspace.workspaceFolders = undefined;
  history.dispose();
});
