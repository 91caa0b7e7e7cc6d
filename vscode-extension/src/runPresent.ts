/** How the live run view shows a task and a run: text, icon and colour ids. Pure (no `vscode` import). */
import type { RunPhase, RunState, TaskState, TaskStatus } from "./runEvents";

export interface Row {
  label: string;
  description: string;
  tooltip: string;
  /** A codicon id (ThemeIcon). */
  icon: string;
  /** A theme colour id, or undefined for the default. */
  color?: string;
}

const ICONS: Record<TaskStatus, [string, string | undefined]> = {
  pending: ["circle-outline", "disabledForeground"],
  running: ["sync~spin", "charts.blue"],
  retrying: ["debug-restart", "charts.yellow"],
  success: ["pass", "testing.iconPassed"],
  recovered: ["warning", "charts.yellow"],
  cache_hit: ["database", "testing.iconPassed"],
  failed: ["error", "testing.iconFailed"],
  skipped: ["debug-step-over", "disabledForeground"],
  cancelled: ["circle-slash", "testing.iconSkipped"],
  paused: ["debug-pause", "charts.yellow"],
};

/** Milliseconds as people read them: `11 ms`, `2.96 s`, `1 m 05 s`. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return "";
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, "0")} s`;
}

function describe(t: TaskState, nowNs?: number): string {
  const took = formatDuration(t.durationMs);
  switch (t.status) {
    case "pending":
      return "waiting";
    case "running": {
      const elapsed = nowNs !== undefined && t.startedAt !== undefined ? formatDuration((nowNs - t.startedAt) / 1e6) : "";
      return elapsed ? `running · ${elapsed}` : "running";
    }
    case "retrying":
      return `retrying: attempt ${t.attempt ?? "?"} failed${t.errorCode ? ` (${t.errorCode})` : ""}`;
    case "success":
      return took;
    case "cache_hit":
      return took ? `cache hit · ${took}` : "cache hit";
    case "recovered":
      return [`recovered from ${t.recoveredFrom ?? "a failure"}`, took].filter(Boolean).join(" · ");
    case "failed":
    case "cancelled":
      return [t.errorCode ?? t.status, took].filter(Boolean).join(" · ");
    case "skipped":
      return t.message ? `skipped: ${t.message}` : "skipped";
    case "paused":
      return "waits for an answer";
  }
}

export function rowFor(t: TaskState, nowNs?: number): Row {
  const [icon, color] = ICONS[t.status];
  const tip = [
    `${t.id}: ${t.status.replace("_", " ")}`,
    t.note,
    t.durationMs !== undefined ? `took ${formatDuration(t.durationMs)}` : undefined,
    t.errorCode && t.status !== "recovered" ? `error: ${t.errorCode}` : undefined,
    t.recoveredFrom ? `recovered from ${t.recoveredFrom} (on_error.recover)` : undefined,
    t.message,
  ].filter(Boolean);
  return { label: t.id, description: describe(t, nowNs), tooltip: tip.join("\n"), icon, color };
}

const PHASE_WORD: Record<RunPhase, string> = {
  starting: "starting",
  running: "running",
  success: "succeeded",
  failure: "failed",
  cancelled: "cancelled",
  paused: "paused",
};

/** The run's header line, e.g. `translate-fanout: succeeded · 2 success`. */
export function runTitle(state: RunState, fallbackName: string): string {
  const counts = state.counts();
  return `${state.workflow ?? fallbackName}: ${PHASE_WORD[state.phase]}${counts ? ` · ${counts}` : ""}`;
}

/**
 * What the process's exit means when the stream did not say (exit codes of `nika run`):
 * 2 is a refusal before any effect, the usual case when no `workflow.*` line came at all.
 */
export function exitSummary(code: number | null, signal: string | null, phase: RunPhase): string | undefined {
  if (phase !== "starting" && phase !== "running") return undefined;
  if (signal) return `stopped by ${signal}`;
  if (code === 2) return "refused before any effect (see the Nika Run output)";
  if (code === 0) return "ended without a final event";
  return `nika run exited with code ${code} (see the Nika Run output)`;
}
