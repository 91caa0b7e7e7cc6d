import { strict as assert } from "node:assert";
import { test } from "node:test";
import { LineBuffer, parseEventLine, RunState } from "../runEvents";
import { liveRunArgs, taskSymbol } from "../run";
import { ago, historyRow, lsArgs, mergeRuns, parseTraceLs, replayArgs, traceDirs } from "../runHistory";
import { exitSummary, formatDuration, rowFor, runTitle } from "../runPresent";

// Lines as `nika run examples/resilient-lookup.nika.yaml --events ndjson` writes them (long members trimmed).
const RESILIENT = [
  '{"type":"workflow.started","workflow":"resilient-lookup","permits":"declared boundary · default-deny","task":null,"at":1}',
  '{"type":"task.scheduled","task":"cached","at":2}',
  '{"type":"task.scheduled","task":"live","at":3}',
  '{"type":"task.scheduled","task":"log","at":4}',
  '{"type":"task.started","task":"cached","note":"invoke · nika:read","at":5}',
  '{"type":"task.started","task":"live","note":"invoke · nika:fetch","at":6}',
  '{"type":"permit.checked","task":"live","plane":"net","gate":"api.example.com","decision":"allow","at":7}',
  '{"type":"task.retrying","task":"live","attempt":1,"error_code":"NIKA-BUILTIN-FETCH-001","delay_ms":570.6,"at":8}',
  '{"type":"task.failed","task":"cached","note":"invoke · nika:read","duration_ms":581.584,"error_code":"NIKA-BUILTIN-READ-001","message":"there is no file at ./cache/rates.json","outcome":"{}","at":9}',
  '{"type":"task.recovered","task":"live","error_code":"NIKA-BUILTIN-FETCH-001","at":10}',
  '{"type":"task.completed","task":"live","note":"invoke · nika:fetch","duration_ms":2957.42,"output":"null","recovered_from":"NIKA-BUILTIN-FETCH-001","at":11}',
  '{"type":"task.started","task":"log","note":"invoke · nika:log","at":12}',
  '{"type":"tool.invoked","task":"log","event":"log","level":"info","message":"rates ready","at":13}',
  '{"type":"task.completed","task":"log","note":"invoke · nika:log","duration_ms":10.774,"output":"null","at":14}',
  '{"type":"workflow.failed","workflow":"resilient-lookup","state":"failure","outputs":"{\\"rates\\":null}","task":null,"at":15}',
];

function replay(lines: string[]): RunState {
  const s = new RunState();
  for (const l of lines) s.applyLine(l);
  return s;
}

test("a line parses to an event with type, task and at; bad lines are one-line errors", () => {
  const p = parseEventLine('{"type":"task.started","task":"a","note":"agent","at":7}');
  assert.ok("event" in p);
  assert.deepEqual([p.event.type, p.event.task, p.event.at, p.event.note], ["task.started", "a", 7, "agent"]);
  assert.deepEqual(parseEventLine("   "), { blank: true });
  assert.match((parseEventLine("Traceback (most recent call last):") as { error: string }).error, /^not a JSON line: Traceback/);
  assert.deepEqual(parseEventLine("[1,2]"), { error: "an event line must be a JSON object" });
  assert.deepEqual(parseEventLine('{"task":"a"}'), { error: "an event line has no `type`" });
  const wf = parseEventLine('{"type":"workflow.started","task":null}');
  assert.ok("event" in wf && wf.event.task === null);
});

test("the line buffer joins chunks split mid-line and keeps CRLF out", () => {
  const b = new LineBuffer();
  assert.deepEqual(b.push('{"type":"a"'), []);
  assert.deepEqual(b.push(',"task":null}\r\n{"ty'), ['{"type":"a","task":null}']);
  assert.deepEqual(b.push('pe":"b"}\n\n'), ['{"type":"b"}', ""]);
  assert.deepEqual(b.push('{"type":"c"}'), []);
  assert.deepEqual(b.end(), ['{"type":"c"}']);
  assert.deepEqual(b.end(), []);
});

test("a real stream: failed with its code, recovered with the code it recovered from, success with duration", () => {
  const s = replay(RESILIENT);
  assert.equal(s.workflow, "resilient-lookup");
  assert.equal(s.phase, "failure");
  assert.deepEqual(s.outputs, { rates: null });
  assert.deepEqual([...s.tasks.keys()], ["cached", "live", "log"]);
  const cached = s.tasks.get("cached")!;
  assert.deepEqual([cached.status, cached.errorCode, cached.durationMs], ["failed", "NIKA-BUILTIN-READ-001", 581.584]);
  assert.equal(cached.message, "there is no file at ./cache/rates.json");
  const live = s.tasks.get("live")!;
  assert.deepEqual([live.status, live.recoveredFrom, live.errorCode], ["recovered", "NIKA-BUILTIN-FETCH-001", undefined]);
  assert.equal(s.tasks.get("log")!.status, "success");
  assert.deepEqual(s.statuses(), { cached: "failed", live: "recovered", log: "success" });
  assert.equal(s.counts(), "1 success, 1 recovered, 1 failed");
  assert.deepEqual(s.problems, []);
});

test("each step of the stream moves the state: scheduled → running → retrying → settled", () => {
  const s = new RunState();
  assert.equal(s.phase, "starting");
  s.applyLine(RESILIENT[0]);
  assert.equal(s.phase, "running");
  assert.deepEqual(s.applyLine(RESILIENT[2]), ["live"]);
  assert.equal(s.tasks.get("live")!.status, "pending");
  s.applyLine(RESILIENT[5]);
  assert.deepEqual([s.tasks.get("live")!.status, s.tasks.get("live")!.note], ["running", "invoke · nika:fetch"]);
  assert.deepEqual(s.applyLine(RESILIENT[6]), [], "a permit line changes no task");
  s.applyLine(RESILIENT[7]);
  assert.deepEqual([s.tasks.get("live")!.status, s.tasks.get("live")!.attempt], ["retrying", 1]);
});

test("skipped, cancelled and cache hits; cleanup steps and unknown kinds are not tasks", () => {
  const s = replay([
    '{"type":"task.skipped","task":"a","reason":"when: was false","at":1}',
    '{"type":"task.cancelled","task":"b","error_code":"NIKA-EXEC-012","message":"cancelled","duration_ms":4,"at":2}',
    '{"type":"task.cache_hit","task":"c","duration_ms":1,"at":3}',
    '{"type":"verb.invoked","task":"b.on_finally[0]","phase":"on_finally","status":"success","at":4}',
    '{"type":"task.something_new","task":"d","at":5}',
    "garbage",
    '{"type":"workflow.cancelled","workflow":"w","state":"cancelled","outputs":null,"task":null,"at":6}',
  ]);
  assert.deepEqual(s.statuses(), { a: "skipped", b: "cancelled", c: "cache_hit", d: "pending" });
  assert.equal(s.tasks.get("a")!.message, "when: was false");
  assert.equal(s.tasks.get("b")!.errorCode, "NIKA-EXEC-012");
  assert.equal(s.phase, "cancelled");
  assert.deepEqual(s.problems, ["not a JSON line: garbage"]);
});

test("rows: description, icon and colour per status", () => {
  const s = replay(RESILIENT);
  const cached = rowFor(s.tasks.get("cached")!);
  assert.deepEqual([cached.label, cached.description, cached.icon, cached.color], ["cached", "NIKA-BUILTIN-READ-001 · 582 ms", "error", "testing.iconFailed"]);
  assert.match(cached.tooltip, /there is no file/);
  const live = rowFor(s.tasks.get("live")!);
  assert.equal(live.description, "recovered from NIKA-BUILTIN-FETCH-001 · 2.96 s");
  assert.equal(live.icon, "warning");
  assert.match(live.tooltip, /on_error\.recover/);
  assert.deepEqual([rowFor(s.tasks.get("log")!).description, rowFor(s.tasks.get("log")!).icon], ["11 ms", "pass"]);
  const running = rowFor({ id: "x", status: "running", startedAt: 1_000_000_000 }, 3_500_000_000);
  assert.deepEqual([running.description, running.icon], ["running · 2.50 s", "sync~spin"]);
  assert.equal(rowFor({ id: "y", status: "retrying", attempt: 2, errorCode: "E-1" }).description, "retrying: attempt 2 failed (E-1)");
  assert.equal(rowFor({ id: "z", status: "pending" }).description, "waiting");
});

test("durations, the run title and what an exit means without a final event", () => {
  assert.deepEqual([formatDuration(0.4), formatDuration(999.6), formatDuration(12_345), formatDuration(65_000)], ["0 ms", "1.00 s", "12.3 s", "1 m 05 s"]);
  assert.equal(formatDuration(undefined), "");
  assert.equal(runTitle(replay(RESILIENT), "x.nika.yaml"), "resilient-lookup: failed · 1 success, 1 recovered, 1 failed");
  assert.equal(runTitle(new RunState(), "x.nika.yaml"), "x.nika.yaml: starting");
  assert.match(exitSummary(2, null, "starting")!, /refused before any effect/);
  assert.equal(exitSummary(1, null, "failure"), undefined, "the stream already said how it ended");
  assert.equal(exitSummary(null, "SIGTERM", "running"), "stopped by SIGTERM");
  assert.match(exitSummary(1, null, "running")!, /exited with code 1/);
});

test("the live run's command line streams events to standard output; a task's outline symbol is found under tasks", () => {
  assert.deepEqual(liveRunArgs("/w/a.nika.yaml", [["topic", '"ducks"']]), ["run", "/w/a.nika.yaml", "--var", 'topic="ducks"', "--events", "ndjson:-"]);
  const outline = [
    { name: "inputs", selectionRange: 1, children: [{ name: "fetch", selectionRange: 2 }] },
    { name: "tasks", selectionRange: 3, children: [{ name: "fetch", selectionRange: 4 }, { name: "draft", selectionRange: 5 }] },
  ];
  assert.equal(taskSymbol(outline, "fetch")?.selectionRange, 4);
  assert.equal(taskSymbol(outline, "nope"), undefined);
  assert.equal(taskSymbol([], "fetch"), undefined);
});

test("run history: trace ls replies merge newest first; rows say state, duration and age; replay args", () => {
  const ls = (runs: object[]) => JSON.stringify({ trace_dir: ".nika/traces", runs });
  const a = parseTraceLs(
    ls([
      { run: "r1", workflow: "w", state: "success", started_ns: 1_000e9, duration_ms: 269.1, tasks: 2, task_states: { success: 2 } },
      { run: "r2", workflow: "w", state: "paused", started_ns: 3_000e9, tasks: 3, task_states: { success: 1 }, paused_task: "gate" },
    ]),
    "/w/.nika/traces",
  );
  const b = parseTraceLs(ls([{ run: "r3", workflow: "v", state: "failure", started_ns: 2_000e9, duration_ms: 5000, tasks: 1, task_states: { failure: 1 } }]), "/w/sub/.nika/traces");
  assert.ok(Array.isArray(a) && Array.isArray(b));
  const merged = mergeRuns([a, b, a]);
  assert.deepEqual(merged.map((r) => r.run), ["r2", "r3", "r1"], "newest first, each run once");
  assert.equal(mergeRuns([a, b], 2).length, 2);
  const row = historyRow(merged[2], 1_000e3 + 90_000);
  assert.deepEqual([row.label, row.description, row.icon], ["w", "success · 269 ms · 2 min ago", "pass"]);
  assert.match(row.tooltip, /run r1\ntasks: 2 success\nin \/w\/.nika\/traces/);
  assert.equal(historyRow(merged[0], 3_000e3).description, "paused at gate · just now");
  assert.equal(historyRow(merged[1], 2_000e3 + 3 * 86_400e3).icon, "error");
  assert.deepEqual(replayArgs(merged[1]), ["trace", "replay", "r3", "--trace-dir", "/w/sub/.nika/traces", "--output-format", "json"]);
  assert.deepEqual(lsArgs("/d"), ["trace", "ls", "--trace-dir", "/d", "--output-format", "json"]);
  assert.deepEqual(traceDirs(["/w", undefined, "/w", "/x"]), ["/w/.nika/traces", "/x/.nika/traces"]);
  assert.deepEqual(parseTraceLs("no runs", "/d"), { error: "nika trace ls did not print JSON: no runs" });
  assert.deepEqual(parseTraceLs("{}", "/d"), { error: "nika trace ls printed no `runs` list" });
  assert.deepEqual([ago(10_000), ago(3 * 3600e3), ago(2 * 86_400e3)], ["just now", "3 h ago", "2 d ago"]);
});
