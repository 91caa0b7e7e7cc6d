/** The extension's settings and which changes need a server restart. Pure: no `vscode` import. */

export interface NikaSettings {
  path: string;
  args: string[];
  inlayHints: boolean;
  runLenses: boolean;
  trace: "off" | "messages" | "verbose";
}

export const DEFAULTS: NikaSettings = { path: "", args: ["lsp"], inlayHints: true, runLenses: true, trace: "off" };

/** Read the settings from any `get(key, default)` accessor (a WorkspaceConfiguration for `nika`). */
export function readSettings(get: <T>(key: string, fallback: T) => T): NikaSettings {
  const args = get<unknown>("args", DEFAULTS.args);
  const trace = get<string>("trace.server", DEFAULTS.trace);
  return {
    path: String(get<unknown>("path", DEFAULTS.path) ?? ""),
    args: Array.isArray(args) && args.every((a) => typeof a === "string") && args.length ? args : DEFAULTS.args,
    inlayHints: get<unknown>("inlayHints", DEFAULTS.inlayHints) !== false,
    runLenses: get<unknown>("runLenses", DEFAULTS.runLenses) !== false,
    trace: trace === "messages" || trace === "verbose" ? trace : "off",
  };
}

/** Settings whose change restarts the language server (inlay hints, run lenses and tracing are applied live). */
export const RESTART_KEYS = ["nika.path", "nika.args"] as const;

export type ChangeAction = "restart" | "live" | "none";

/** What to do about a configuration change, given `affects(section)`. */
export function actionFor(affects: (section: string) => boolean): ChangeAction {
  if (RESTART_KEYS.some((k) => affects(k))) return "restart";
  if (affects("nika.inlayHints") || affects("nika.runLenses") || affects("nika.trace.server")) return "live";
  return "none";
}

/**
 * Bounded restarts after crashes: at most `max` within `windowMs`. Returns whether to restart now;
 * the clock is passed in so tests need no timers.
 */
export class RestartBudget {
  private times: number[] = [];
  constructor(
    readonly max = 5,
    readonly windowMs = 3 * 60_000,
  ) {}

  allow(now: number): boolean {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    if (this.times.length >= this.max) return false;
    this.times.push(now);
    return true;
  }

  reset(): void {
    this.times = [];
  }
}

/**
 * The command (and its argument) that shows the `nika.path` setting. `nika.path` is a machine
 * setting: in a remote window (code-server, SSH, a container) the User tab does not list it
 * ("No Settings Found"), so the remote machine's settings are opened instead.
 */
export function pathSettingCommand(remoteName: string | undefined): [string, unknown] {
  if (remoteName) return ["workbench.action.openRemoteSettings", { query: "nika.path" }];
  return ["workbench.action.openSettings", "nika.path"];
}
