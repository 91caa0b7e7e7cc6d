/**
 * The live run view's model: `nika run --events ndjson:-` lines → events → per-task state.
 * Pure (no `vscode` import), so the parsing and the state changes are unit-tested with node's runner.
 * The event vocabulary is docs/events.md; members not known here are ignored (spec 17's additive law).
 */

export interface RunEvent {
  type: string;
  task: string | null;
  /** Unix epoch nanoseconds, or undefined when the line has none. */
  at?: number;
  [member: string]: unknown;
}

export type Parsed = { event: RunEvent } | { error: string } | { blank: true };

/** One line of the stream → an event, a one-line error (not JSON, no `type`), or blank. */
export function parseEventLine(line: string): Parsed {
  const text = line.trim();
  if (!text) return { blank: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: `not a JSON line: ${text.length > 80 ? text.slice(0, 77) + "…" : text}` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { error: "an event line must be a JSON object" };
  const obj = value as Record<string, unknown>;
  if (typeof obj.type !== "string" || !obj.type) return { error: "an event line has no `type`" };
  const task = typeof obj.task === "string" ? obj.task : null;
  const at = typeof obj.at === "number" ? obj.at : undefined;
  return { event: { ...obj, type: obj.type, task, at } };
}

/** Splits chunks of a byte stream (already decoded) into whole lines; keeps a partial last line. */
export class LineBuffer {
  private rest = "";

  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const lines = text.split(/\r?\n/);
    this.rest = lines.pop() ?? "";
    return lines;
  }

  /** The stream ended: the partial line, if any. */
  end(): string[] {
    const last = this.rest;
    this.rest = "";
    return last ? [last] : [];
  }
}

export type TaskStatus =
  | "pending"
  | "running"
  | "retrying"
  | "success"
  | "recovered"
  | "cache_hit"
  | "failed"
  | "skipped"
  | "cancelled"
  /** Waiting at a human gate (`workflow.paused` names it): not running, not settled. */
  | "paused";

export interface TaskState {
  id: string;
  status: TaskStatus;
  /** `infer · provider/model`, `exec · program`, `invoke · tool`, `agent`. */
  note?: string;
  durationMs?: number;
  errorCode?: string;
  message?: string;
  /** The failed attempt being retried. */
  attempt?: number;
  recoveredFrom?: string;
  startedAt?: number;
}

export type RunPhase = "starting" | "running" | "success" | "failure" | "cancelled" | "paused";

const SETTLED: Record<string, TaskStatus> = {
  "task.completed": "success",
  "task.failed": "failed",
  "task.skipped": "skipped",
  "task.cancelled": "cancelled",
  "task.cache_hit": "cache_hit",
};

const WORKFLOW_END: Record<string, RunPhase> = {
  "workflow.completed": "success",
  "workflow.failed": "failure",
  "workflow.cancelled": "cancelled",
  "workflow.paused": "paused",
};

function str(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** A cleanup step (`TASK.on_finally[N]`) is not a task of the graph. */
function isTaskId(id: string | null): id is string {
  return id !== null && !/\.on_finally\[\d+\]$/.test(id);
}

export class RunState {
  workflow: string | undefined;
  /** The workflow file, as `workflow.started` names it. */
  source: string | undefined;
  phase: RunPhase = "starting";
  /** The task whose prompt the run paused on (`workflow.paused`). */
  pausedTask: string | undefined;
  /** Parsed `outputs` of the last line, when it carried them. */
  outputs: unknown;
  readonly tasks = new Map<string, TaskState>();
  /** Lines that were not events (shown once in the output, never fatal). */
  readonly problems: string[] = [];

  /** Feed one line; returns the ids of the tasks it changed (empty for a workflow-level line). */
  applyLine(line: string): string[] {
    const parsed = parseEventLine(line);
    if ("error" in parsed) {
      this.problems.push(parsed.error);
      return [];
    }
    return "event" in parsed ? this.apply(parsed.event) : [];
  }

  apply(ev: RunEvent): string[] {
    if (ev.type === "workflow.started") {
      this.workflow = str(ev.workflow) ?? this.workflow;
      this.source = str(ev.source) ?? this.source;
      this.phase = "running";
      return [];
    }
    const end = WORKFLOW_END[ev.type];
    if (end) {
      this.phase = end;
      this.workflow = str(ev.workflow) ?? this.workflow;
      this.outputs = parseMaybe(ev.outputs);
      this.pausedTask = end === "paused" ? (ev.task ?? undefined) : undefined;
      const gate = this.pausedTask !== undefined ? this.tasks.get(this.pausedTask) : undefined;
      if (gate && gate.status === "running") {
        gate.status = "paused";
        gate.message = str(ev.message);
        return [gate.id];
      }
      return [];
    }
    if (!isTaskId(ev.task)) return [];
    const t = this.task(ev.task);
    switch (ev.type) {
      case "task.scheduled":
        break;
      case "task.started":
        t.status = "running";
        t.note = str(ev.note) ?? t.note;
        t.startedAt = ev.at;
        break;
      case "task.retrying":
        t.status = "retrying";
        t.attempt = num(ev.attempt);
        t.errorCode = str(ev.error_code);
        break;
      case "task.recovered":
        t.recoveredFrom = str(ev.error_code);
        break;
      default: {
        const settled = SETTLED[ev.type];
        if (!settled) return [];
        this.settle(t, settled, ev);
      }
    }
    return [t.id];
  }

  private settle(t: TaskState, status: TaskStatus, ev: RunEvent): void {
    t.note = str(ev.note) ?? t.note;
    t.durationMs = num(ev.duration_ms);
    t.recoveredFrom = str(ev.recovered_from) ?? t.recoveredFrom;
    t.status = status === "success" && t.recoveredFrom ? "recovered" : status;
    if (status === "success" || status === "cache_hit") {
      t.errorCode = undefined;
      t.message = undefined;
    } else {
      t.errorCode = str(ev.error_code) ?? (status === "skipped" ? undefined : t.errorCode);
      t.message = str(ev.message) ?? str(ev.reason);
    }
  }

  private task(id: string): TaskState {
    let t = this.tasks.get(id);
    if (!t) {
      t = { id, status: "pending" };
      this.tasks.set(id, t);
    }
    return t;
  }

  /** Counts per status, in a fixed order, e.g. `2 success, 1 failed`. */
  counts(): string {
    const order: TaskStatus[] = ["success", "recovered", "cache_hit", "failed", "skipped", "cancelled", "paused", "running", "retrying", "pending"];
    const n = new Map<TaskStatus, number>();
    for (const t of this.tasks.values()) n.set(t.status, (n.get(t.status) ?? 0) + 1);
    return order
      .filter((s) => n.get(s))
      .map((s) => `${n.get(s)} ${s.replace("_", " ")}`)
      .join(", ");
  }

  /** Status by task id, for colouring the graph view's nodes. */
  statuses(): Record<string, TaskStatus> {
    return Object.fromEntries([...this.tasks.values()].map((t) => [t.id, t.status]));
  }
}

function parseMaybe(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
