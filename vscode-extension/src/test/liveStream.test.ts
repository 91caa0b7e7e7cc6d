/**
 * The contract between `nika run --events ndjson:-` and the run view's model, on a real run of this
 * checkout (python3 -m nika with PYTHONPATH at the repository root). Skipped, saying why, when
 * python3 cannot run nika here (e.g. the extension built alone).
 */
import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { liveRunArgs, taskRunArgs } from "../run";
import { lsArgs, parseTraceLs, replayArgs } from "../runHistory";
import { LineBuffer, RunState } from "../runEvents";

const root = path.resolve(__dirname, "..", "..", "..");
const env = { ...process.env, PYTHONPATH: root, NO_COLOR: "1" };
const probe = spawnSync("python3", ["-c", "import nika.cli"], { cwd: root, env, timeout: 20_000 });
const why = probe.error ? `python3 not runnable: ${probe.error.message}` : probe.status !== 0 ? "python3 cannot import nika from this checkout" : undefined;

test("a real run streams into the run state: every task settles with its duration", { skip: why, timeout: 60_000 }, async () => {
  const file = path.join(root, "examples", "translate-fanout.nika.yaml");
  const state = new RunState();
  const seen: string[] = [];
  const lines = new LineBuffer();
  const traces = fs.mkdtempSync(path.join(os.tmpdir(), "nika-live-"));
  const argv = ["-m", "nika", ...liveRunArgs(file, []), "--trace-dir", traces];
  const child = spawn("python3", argv, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    for (const line of lines.push(chunk)) {
      for (const id of state.applyLine(line)) seen.push(`${id}:${state.tasks.get(id)!.status}`);
    }
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += String(c)));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  for (const line of lines.end()) state.applyLine(line);

  // the history view: the run is listed, and its replay reads into the same state
  const nika = (args: string[]) => spawnSync("python3", ["-m", "nika", ...args], { cwd: root, env, encoding: "utf8", timeout: 30_000 });
  const listed = parseTraceLs(nika(lsArgs(traces)).stdout, traces);
  const replayed = new RunState();
  if (Array.isArray(listed) && listed.length) for (const line of nika(replayArgs(listed[0])).stdout.split("\n")) replayed.applyLine(line);
  fs.rmSync(traces, { recursive: true, force: true });
  assert.ok(Array.isArray(listed) && listed.length === 1, JSON.stringify(listed));
  assert.deepEqual([listed[0].workflow, listed[0].state, listed[0].tasks], ["translate-fanout", "success", 2]);
  assert.deepEqual(replayed.problems, []);
  assert.deepEqual([replayed.phase, replayed.statuses()], [state.phase, state.statuses()], "a replay reads like the live run");
  assert.equal(replayed.source, file);
  assert.equal(code, 0, stderr);
  assert.deepEqual(state.problems, [], "every stdout line is an event");
  assert.equal(state.workflow, "translate-fanout");
  assert.equal(state.phase, "success");
  assert.deepEqual(state.statuses(), { translate: "success", collect: "success" });
  for (const t of state.tasks.values()) assert.ok(typeof t.durationMs === "number" && t.durationMs >= 0, `${t.id} has a duration`);
  assert.deepEqual(seen.slice(0, 2), ["translate:pending", "collect:pending"]);
  assert.ok(seen.indexOf("translate:running") < seen.indexOf("translate:success"), seen.join(" "));
  assert.ok(seen.indexOf("translate:success") < seen.indexOf("collect:running"), seen.join(" "));
  assert.ok(state.outputs && typeof state.outputs === "object" && "translations" in (state.outputs as object));
});

test("a Run task lens runs one task: its ancestor comes from the run history as a cache hit", { skip: why, timeout: 60_000 }, async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "nika-task-"));
  const file = path.join(ws, "translate-fanout.nika.yaml");
  fs.copyFileSync(path.join(root, "examples", "translate-fanout.nika.yaml"), file);
  const run = (args: string[]) =>
    new Promise<{ state: RunState; code: number | null; stderr: string }>((resolve) => {
      const state = new RunState();
      const lines = new LineBuffer();
      const child = spawn("python3", ["-m", "nika", ...args], { cwd: ws, env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (c: string) => lines.push(c).forEach((l) => state.applyLine(l)));
      let stderr = "";
      child.stderr.on("data", (c) => (stderr += String(c)));
      child.on("close", (code) => {
        lines.end().forEach((l) => state.applyLine(l));
        resolve({ state, code, stderr });
      });
    });
  const first = await run(liveRunArgs(file, []));
  assert.equal(first.code, 0, first.stderr);
  const one = await run(taskRunArgs(file, "collect", false));
  fs.rmSync(ws, { recursive: true, force: true });
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual(one.state.problems, []);
  assert.deepEqual([one.state.phase, one.state.statuses()], ["success", { translate: "cache_hit", collect: "success" }]);
  assert.deepEqual(taskRunArgs(file, "translate", true).slice(2, 5), ["--task", "translate", "--with-dependents"]);
});
