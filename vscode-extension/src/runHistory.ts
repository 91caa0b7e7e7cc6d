/**
 * The run history view's model: `nika trace ls --output-format json` of each trace folder → the
 * past runs, newest first, and their rows. Pure (no `vscode` import).
 */
import * as path from "node:path";
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
