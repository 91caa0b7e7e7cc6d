/**
 * The launch configurations of the `nika` debugger (`nika dap`, docs/debugging.md): debugging a
 * workflow live, replaying a recorded run, and completing what F5 starts without a launch.json.
 * Pure (no `vscode` import), so the node tests check it directly.
 */
import * as path from "node:path";
import type { PastRun } from "./runHistory";
import { journalPath, runFolder } from "./runHistory";

export const DEBUG_TYPE = "nika";

/** The arguments that start the adapter: `nika dap` speaks DAP on stdio. */
export const DAP_ARGS = ["dap"];

export interface NikaDebugConfiguration {
  type: string;
  request: "launch";
  name: string;
  /** The workflow file (a live run; with `trace`, the source its lines map to). */
  program?: string;
  /** A recorded journal: the session replays it (step back, reverse continue), nothing runs. */
  trace?: string;
  /** The working directory relative paths resolve from (spec 02). */
  cwd?: string;
  inputs?: Record<string, unknown>;
  stopOnEntry?: boolean;
  traceDir?: string;
}

/** "Debug Workflow": a live run of `file`, from the workspace folder (or the file's folder). */
export function debugWorkflowConfig(file: string, folder: string | undefined): NikaDebugConfiguration {
  return {
    type: DEBUG_TYPE,
    request: "launch",
    name: `Debug ${path.basename(file)}`,
    program: file,
    cwd: folder ?? path.dirname(file),
  };
}

/** "Replay Run": the run's journal, in the folder it ran in, stopped at its first recorded task. */
export function replayConfig(r: PastRun): NikaDebugConfiguration {
  return {
    type: DEBUG_TYPE,
    request: "launch",
    name: `Replay ${r.workflow} (${r.run})`,
    trace: journalPath(r),
    cwd: runFolder(r),
    stopOnEntry: true,
  };
}

/**
 * What F5 starts: a configuration as given, or (no launch.json: an empty one) the active Nika file
 * debugged live; an error string when there is nothing to debug.
 */
export function completeConfig(
  given: Partial<NikaDebugConfiguration>,
  activeNikaFile: string | undefined,
  folder: string | undefined,
): NikaDebugConfiguration | string {
  if (!given.type && !given.request && !given.name) {
    if (!activeNikaFile) return "Open a Nika workflow (*.nika.yaml) to debug it, or add a `nika` launch configuration.";
    return debugWorkflowConfig(activeNikaFile, folder);
  }
  if (!given.program && !given.trace) return "A `nika` launch configuration needs `program` (a workflow) or `trace` (a journal to replay).";
  return { type: DEBUG_TYPE, request: "launch", name: given.name ?? "Nika", ...given } as NikaDebugConfiguration;
}
