/**
 * `nika dap` driven by the official client (`@vscode/debugadapter-testsupport`'s DebugClient), on
 * this checkout (python3 with PYTHONPATH at the repository root), every message the adapter sends
 * checked against `@vscode/debugprotocol`'s types (./dapSchema). Skipped, saying why, when python3
 * cannot import the adapter here (e.g. the extension built alone).
 */
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { completeConfig, debugWorkflowConfig, replayConfig } from "../debugConfig";
import { DapSchema } from "./dapSchema";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DebugClient } = require("@vscode/debugadapter-testsupport") as typeof import("@vscode/debugadapter-testsupport");

const root = path.resolve(__dirname, "..", "..", "..");
const env = { ...process.env, PYTHONPATH: root, NO_COLOR: "1" };
const probe = spawnSync("python3", ["-c", "import nika_dap.server"], { cwd: root, env, timeout: 20_000 });
const why = probe.error ? `python3 not runnable: ${probe.error.message}` : probe.status !== 0 ? "python3 cannot import nika_dap from this checkout" : undefined;
const schema = new DapSchema();
const work = fs.mkdtempSync(path.join(os.tmpdir(), "nika-dap-"));
after(() => fs.rmSync(work, { recursive: true, force: true }));
// DebugClient spawns `runtime executable`: one script that is `nika dap`
const launcher = path.join(work, "nika-dap.py");
fs.writeFileSync(launcher, "import sys\nfrom nika.cli import main\nsys.argv = ['nika', 'dap']\nsys.exit(main())\n");

const WORKFLOW = `nika: v1
workflow:
  id: debugged
permits:
  exec: ["echo", "touch", "false"]
secrets:
  api:
    source: env
    key: NIKA_DAP_NODE_KEY
    egress: [{ to: "exec" }]
const:
  items: [1, 2]
tasks:
  prepare:
    exec:
      command: ["echo", "marker.txt"]
  marker:
    with:
      name: \${{ tasks.prepare.output }}
    exec:
      command: ["touch", "\${{ with.name }}"]
  side:
    exec:
      command: ["echo", "key=\${{ secrets.api }}"]
  fan:
    for_each: "\${{ const.items }}"
    exec:
      command: ["echo", "item \${{ item }}"]
  broken:
    after: { marker: success }
    exec:
      command: ["false"]
    on_error: { skip: true }
  call:
    invoke: { workflow: "./child.nika.yaml", args: { who: "ada" } }
`;
const CHILD = `nika: v1
workflow:
  id: child
permits:
  exec: ["echo"]
inputs:
  who: { type: string, required: true }
tasks:
  inner:
    exec:
      command: ["echo", "child \${{ inputs.who }}"]
`;
const SECRET = "node-secret-31337";

function lineOf(file: string, needle: string): number {
  return fs.readFileSync(file, "utf8").split("\n").findIndex((l) => l.includes(needle)) + 1;
}

interface Session {
  dc: InstanceType<typeof DebugClient>;
  problems: string[];
  seen: unknown[];
  /** The next event `name` not taken yet (an event that came before the wait is kept, never lost). */
  next(name: string): Promise<DebugProtocol.Event>;
}

function client(cwd: string): Session {
  const dc = new DebugClient("python3", launcher, "nika", { cwd, env: { ...env, NIKA_DAP_NODE_KEY: SECRET } }, true);
  const problems: string[] = [];
  const seen: unknown[] = [];
  const events: DebugProtocol.Event[] = [];
  const waiting: { name: string; resolve: (e: DebugProtocol.Event) => void }[] = [];
  const dispatch = (dc as unknown as { dispatch: (m: string) => void }).dispatch.bind(dc);
  (dc as unknown as { dispatch: (m: string) => void }).dispatch = (body: string) => {
    const msg = JSON.parse(body);
    seen.push(msg);
    problems.push(...schema.check(msg).map((p) => `${msg.type} ${msg.command ?? msg.event}: ${p}`));
    if (msg.type === "event") {
      const w = waiting.findIndex((x) => x.name === msg.event);
      if (w >= 0) waiting.splice(w, 1)[0].resolve(msg);
      else events.push(msg);
    }
    dispatch(body);
  };
  const next = (name: string) => {
    const i = events.findIndex((e) => e.event === name);
    if (i >= 0) return Promise.resolve(events.splice(i, 1)[0]);
    return new Promise<DebugProtocol.Event>((resolve, reject) => {
      const timer = setTimeout(() => {
        const last = seen.slice(-12).map((m) => {
          const x = m as { type: string; event?: string; command?: string; body?: unknown };
          return `${x.type} ${x.event ?? x.command ?? ""} ${JSON.stringify(x.body ?? {}).slice(0, 160)}`;
        });
        reject(new Error(`no ${name} event within 60 s; the last messages:\n${last.join("\n")}`));
      }, 60_000);
      waiting.push({ name, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  };
  return { dc, problems, seen, next };
}

async function variables(dc: InstanceType<typeof DebugClient>, threadId: number): Promise<Record<string, Record<string, string>>> {
  const st = await dc.stackTraceRequest({ threadId });
  const scopes = await dc.scopesRequest({ frameId: st.body.stackFrames[0].id });
  const out: Record<string, Record<string, string>> = {};
  for (const s of scopes.body.scopes) {
    const vs = await dc.variablesRequest({ variablesReference: s.variablesReference });
    out[s.name] = Object.fromEntries(vs.body.variables.map((v: DebugProtocol.Variable) => [v.name, v.value]));
  }
  return out;
}

async function expand(dc: InstanceType<typeof DebugClient>, threadId: number, scope: string, name: string): Promise<Record<string, string>> {
  const st = await dc.stackTraceRequest({ threadId });
  const scopes = await dc.scopesRequest({ frameId: st.body.stackFrames[0].id });
  const s = scopes.body.scopes.find((x: DebugProtocol.Scope) => x.name === scope)!;
  const vs = await dc.variablesRequest({ variablesReference: s.variablesReference });
  const v = vs.body.variables.find((x: DebugProtocol.Variable) => x.name === name)!;
  const inner = await dc.variablesRequest({ variablesReference: v.variablesReference });
  return Object.fromEntries(inner.body.variables.map((x: DebugProtocol.Variable) => [x.name, x.value]));
}

test("the protocol types are read from @vscode/debugprotocol", () => {
  assert.ok(schema.size > 150);
  assert.deepEqual(schema.check({ seq: 1, type: "event", event: "stopped", body: { reason: "breakpoint", threadId: 1 } }), []);
  assert.notDeepEqual(schema.check({ seq: 1, type: "event", event: "stopped", body: { threadId: "one" } }), []);
  assert.notDeepEqual(schema.check({ seq: 1, type: "response", request_seq: 1, command: "threads", success: true, body: { threads: [{ id: 1 }] } }), []);
});

test("launch configurations: debug a file, replay a run, F5 without a launch.json", () => {
  const c = debugWorkflowConfig("/w/a.nika.yaml", "/w");
  assert.deepEqual([c.type, c.request, c.program, c.cwd], ["nika", "launch", "/w/a.nika.yaml", "/w"]);
  const r = replayConfig({ run: "r1", workflow: "wf", state: "success", startedNs: 0, tasks: 1, taskStates: {}, latest: true, traceDir: "/w/.nika/traces", path: ".nika/traces/r1.ndjson" });
  assert.deepEqual([r.trace, r.cwd, r.stopOnEntry], ["/w/.nika/traces/r1.ndjson", "/w", true]);
  assert.equal((completeConfig({}, "/w/b.nika.yaml", "/w") as { program: string }).program, "/w/b.nika.yaml");
  assert.equal(typeof completeConfig({}, undefined, "/w"), "string");
  assert.equal(typeof completeConfig({ type: "nika", request: "launch", name: "x" }, undefined, undefined), "string");
});

test("a live session: the breakpoint holds the task before its effect, every view, then the replay steps back", { skip: why, timeout: 120_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(work, "live-"));
  const file = path.join(dir, "debugged.nika.yaml");
  fs.writeFileSync(file, WORKFLOW);
  fs.writeFileSync(path.join(dir, "child.nika.yaml"), CHILD);
  const child = path.join(dir, "child.nika.yaml");
  const { dc, problems, seen, next } = client(dir);
  await dc.start();
  try {
    const markerLine = lineOf(file, "marker:");
    const fanLine = lineOf(file, '"item ${{');
    await Promise.all([
      next("initialized").then(async () => {
        const bps = await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: markerLine }, { line: fanLine, condition: "${{ item == 2 }}" }] });
        assert.ok(bps.body.breakpoints.every((b: DebugProtocol.Breakpoint) => b.verified));
        await dc.setBreakpointsRequest({ source: { path: child }, breakpoints: [{ line: lineOf(child, "inner:") }] });
        await dc.setExceptionBreakpointsRequest({ filters: ["task_failure"] });
        return dc.configurationDoneRequest();
      }),
      dc.launch({ program: file, traceDir: "traces" } as DebugProtocol.LaunchRequestArguments),
    ]);
    const stops: string[] = [];
    let markerSeen = false;
    for (;;) {
      const ev = (await next("stopped")) as DebugProtocol.StoppedEvent;
      const tid = ev.body.threadId!;
      assert.equal(ev.body.allThreadsStopped, true);
      const st = await dc.stackTraceRequest({ threadId: tid });
      const names = st.body.stackFrames.map((f: DebugProtocol.StackFrame) => f.name);
      stops.push(`${ev.body.reason}:${names.join(" < ")}`);
      if (names[0] === "debugged › marker") {
        assert.equal(fs.existsSync(path.join(dir, "marker.txt")), false, "the marker exists while the task is held");
        const task = await expand(dc, tid, "Task", "with");
        assert.equal(task.name, '"marker.txt"');
        markerSeen = true;
      }
      if (names[0].startsWith("debugged › fan")) {
        const v = await variables(dc, tid);
        assert.equal(v.Task.item, "2");
      }
      if (names[0] === "child › inner") assert.deepEqual(names, ["child › inner", "debugged › call"]);
      await dc.continueRequest({ threadId: tid });
      if (stops.length === 4) break;
    }
    await next("terminated");
    assert.ok(markerSeen);
    assert.ok(fs.existsSync(path.join(dir, "marker.txt")), "continue ran the held effect");
    assert.deepEqual(stops.map((s) => s.split(":")[0]).sort(), ["breakpoint", "breakpoint", "breakpoint", "exception"]);
    assert.ok(!JSON.stringify(seen).includes(SECRET), "the secret reached the client");
    assert.deepEqual(problems, []);
  } finally {
    await dc.stop();
  }

  // the recorded run, replayed: forward to the breakpoint, back a step, reverse-continue to the start
  // the run's own journal, as the adapter names it: the child workflow writes a journal of its own
  // in the same folder, and a directory listing's order would pick either
  const said = seen
    .map((m) => (m as { event?: string; body?: { output?: string } }).body?.output ?? "")
    .map((text) => /^workflow \w+ \(trace: (.+)\)$/m.exec(text)?.[1])
    .find((t) => t !== undefined);
  assert.ok(said, "the adapter names the run's journal");
  const trace = path.basename(said);
  const replay = client(dir);
  await replay.dc.start();
  try {
    await Promise.all([
      replay.next("initialized").then(async () => {
        await replay.dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: markerLine(file) }] });
        return replay.dc.configurationDoneRequest();
      }),
      replay.dc.launch({ trace: path.join("traces", trace), program: file, stopOnEntry: false } as DebugProtocol.LaunchRequestArguments),
    ]);
    const hit = (await replay.next("stopped")) as DebugProtocol.StoppedEvent;
    assert.equal(hit.body.reason, "breakpoint");
    assert.equal((await variables(replay.dc, 1)).Task.id, '"marker"');
    await replay.dc.stepBackRequest({ threadId: 1 });
    await replay.next("stopped");
    assert.notEqual((await variables(replay.dc, 1)).Task.id, '"marker"');
    await replay.dc.reverseContinueRequest({ threadId: 1 });
    const start = (await replay.next("stopped")) as DebugProtocol.StoppedEvent;
    assert.equal(start.body.reason, "entry");
    assert.deepEqual(replay.problems, []);
  } finally {
    await replay.dc.stop();
  }
});

function markerLine(file: string): number {
  return lineOf(file, "marker:");
}
