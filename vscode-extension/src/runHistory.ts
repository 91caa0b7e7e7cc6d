/**
 * The run history view's model: `nika trace ls --output-format json` of each trace folder → the
 * past runs, newest first, and their rows. Pure (no `vscode` import).
 */
import * as path from "node:path";
import { EVENTS_ARGS } from "./run";
import type { Row } from "./runPresent";
import { formatDuration } from "./runPresent";

export interface PastRun {
  run: string;
  workflow: string;
  state: string;
  startedNs: number;
  durationMs?: number;
  tasks: number;
  taskStates: Record<string, number>;
  pausedTask?: string;
  /** The journal file, as `nika trace ls` names it (relative to the folder the run started in, or absolute). */
  path?: string;
  /** The newest run of its workflow in its folder (`nika trace ls`'s `resume_candidate`): a later run supersedes it. */
  latest: boolean;
  /** The trace folder it was listed from (absolute). */
  traceDir: string;
}

export const HISTORY_LIMIT = 50;

/** `.nika/traces` under each folder runs are started in, once each, in the order given. */
export function traceDirs(folders: (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const f of folders) {
    if (!f) continue;
    const dir = path.join(f, ".nika", "traces");
    if (!out.includes(dir)) out.push(dir);
  }
  return out;
}

export function lsArgs(traceDir: string): string[] {
  return ["trace", "ls", "--trace-dir", traceDir, "--output-format", "json"];
}

/** Replaying a past run prints the same event lines as the live stream (docs/events.md). */
export function replayArgs(r: PastRun): string[] {
  return ["trace", "replay", r.run, "--trace-dir", r.traceDir, "--output-format", "json"];
}

/** One `nika trace ls` reply → its runs; a reply that is not the listing is a one-line error. */
export function parseTraceLs(stdout: string, traceDir: string): PastRun[] | { error: string } {
  let reply: unknown;
  try {
    reply = JSON.parse(stdout);
  } catch {
    return { error: `nika trace ls did not print JSON: ${stdout.trim().slice(0, 80)}` };
  }
  const runs = (reply as { runs?: unknown })?.runs;
  if (!Array.isArray(runs)) return { error: "nika trace ls printed no `runs` list" };
  const out: PastRun[] = [];
  for (const r of runs as Record<string, unknown>[]) {
    if (!r || typeof r.run !== "string") continue;
    out.push({
      run: r.run,
      workflow: typeof r.workflow === "string" ? r.workflow : "?",
      state: typeof r.state === "string" ? r.state : "unknown",
      startedNs: typeof r.started_ns === "number" ? r.started_ns : 0,
      durationMs: typeof r.duration_ms === "number" ? r.duration_ms : undefined,
      tasks: typeof r.tasks === "number" ? r.tasks : 0,
      taskStates: r.task_states && typeof r.task_states === "object" ? (r.task_states as Record<string, number>) : {},
      pausedTask: typeof r.paused_task === "string" ? r.paused_task : undefined,
      path: typeof r.path === "string" ? r.path : undefined,
      latest: r.resume_candidate !== false,
      traceDir,
    });
  }
  return out;
}

/** The runs of every folder, newest first, each once, at most `limit`. */
export function mergeRuns(lists: PastRun[][], limit = HISTORY_LIMIT): PastRun[] {
  const seen = new Set<string>();
  const all = lists.flat().filter((r) => {
    const key = `${r.traceDir}\u0000${r.run}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return all.sort((a, b) => b.startedNs - a.startedNs).slice(0, limit);
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

const STATE_ICON: Record<string, [string, string | undefined]> = {
  success: ["pass", "testing.iconPassed"],
  failure: ["error", "testing.iconFailed"],
  cancelled: ["circle-slash", "testing.iconSkipped"],
  paused: ["debug-pause", "charts.yellow"],
};

export function historyRow(r: PastRun, nowMs: number): Row {
  const [icon, color] = STATE_ICON[r.state] ?? ["question", undefined];
  const counts = Object.entries(r.taskStates)
    .map(([s, n]) => `${n} ${s}`)
    .join(", ");
  const state = r.state === "paused" && r.pausedTask ? `paused at ${r.pausedTask}` : r.state;
  const description = [state, formatDuration(r.durationMs), ago(nowMs - r.startedNs / 1e6)].filter(Boolean).join(" · ");
  const tooltip = [`${r.workflow}: ${state}`, `run ${r.run}`, counts && `tasks: ${counts}`, `in ${r.traceDir}`, "Click to load it into the Nika Run view."]
    .filter(Boolean)
    .join("\n");
  return { label: r.workflow, description, tooltip, icon, color };
}

// ── approving a paused run ──────────────────────────────────────────────────────────────────

/** The folder a run was started in: its trace folder is `FOLDER/.nika/traces`. */
export function runFolder(r: PastRun): string {
  return path.dirname(path.dirname(r.traceDir));
}

/** The run's journal file (absolute): what `nika run --resume` takes. */
export function journalPath(r: PastRun): string {
  if (r.path) return path.isAbsolute(r.path) ? r.path : path.resolve(runFolder(r), r.path);
  return path.join(r.traceDir, `${r.run}.ndjson`);
}

/** The prompt a paused run waits on, read from its replayed journal. */
export interface PausedPrompt {
  task: string;
  /** `confirm`, `choice` or `input` (nika:prompt's modes). */
  mode: string;
  message: string;
  choices?: unknown[];
  /** The workflow file, as `workflow.started` names it (relative to the run's folder, or absolute). */
  source?: string;
}

/** `nika trace replay RUN --output-format json` lines → the prompt of the last `workflow.paused`. */
export function pausedPrompt(replayStdout: string): PausedPrompt | { error: string } {
  let source: string | undefined;
  let paused: Record<string, unknown> | undefined;
  for (const line of replayStdout.split(/\r?\n/)) {
    if (!line.trim()) continue;
    let ev: Record<string, unknown>;
    try {
      ev = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (ev.type === "workflow.started" && typeof ev.source === "string") source = ev.source;
    if (ev.type === "workflow.paused") paused = ev;
  }
  if (!paused) return { error: "the run's journal has no `workflow.paused` line: it is not waiting for an answer" };
  if (typeof paused.task !== "string" || !paused.task) return { error: "the run's `workflow.paused` line names no task" };
  let choices: unknown = paused.choices;
  if (typeof choices === "string") {
    try {
      choices = JSON.parse(choices);
    } catch {
      choices = undefined;
    }
  }
  return {
    task: paused.task,
    mode: typeof paused.mode === "string" ? paused.mode : "input",
    message: typeof paused.message === "string" ? paused.message : "",
    choices: Array.isArray(choices) ? choices : undefined,
    source,
  };
}

export interface AnswerOption {
  label: string;
  /** The answer as JSON (`--answer TASK=JSON`). */
  json: string;
}

/** The answers to pick from (confirm: approve/reject; choice: its choices); undefined: a typed answer. */
export function answerOptions(p: PausedPrompt): AnswerOption[] | undefined {
  if (p.mode === "confirm") {
    return [
      { label: "Approve", json: "true" },
      { label: "Reject", json: "false" },
    ];
  }
  if (p.mode === "choice" && p.choices?.length) {
    return p.choices.map((c) => ({ label: typeof c === "string" ? c : JSON.stringify(c), json: JSON.stringify(c) }));
  }
  return undefined;
}

/** A typed answer to an `input` prompt is always a string (never re-read as a number or a boolean). */
export function typedAnswer(text: string): string {
  return JSON.stringify(text);
}

/** Resume the paused run with the answer, streaming its events like a live run. */
export function approveArgs(workflowFile: string, journal: string, task: string, answerJson: string): string[] {
  return ["run", workflowFile, "--resume", journal, "--answer", `${task}=${answerJson}`, ...EVENTS_ARGS];
}

/** The runs still waiting for an answer: paused, and not superseded by a later run of their workflow. */
export function pausedRuns(runs: PastRun[]): PastRun[] {
  return runs.filter((r) => r.state === "paused" && r.latest);
}
