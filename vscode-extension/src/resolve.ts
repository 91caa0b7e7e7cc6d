/**
 * Which `nika` executable the extension runs, in this order:
 *   1. the `nika.path` setting,
 *   2. the `nika` of a virtual environment in the workspace folder (`.venv`, then `venv`),
 *   3. the `nika` of the Python environment selected in the Python extension (when it is installed),
 *   4. `nika` on PATH.
 * Pure: the caller passes what it knows about the machine, so the order is unit-tested without VS Code.
 */
import * as path from "node:path";

export type Source = "setting" | "venv" | "python" | "path";

export interface Resolved {
  command: string;
  source: Source;
  /** One line for the output channel and the status bar tooltip. */
  why: string;
}

export interface Machine {
  platform: NodeJS.Platform;
  /** The PATH variable. */
  pathEnv: string | undefined;
  /** PATHEXT on Windows. */
  pathExt?: string;
  /** Is there an executable file here? */
  isExecutable(file: string): Promise<boolean>;
}

/** The python executable of the selected environment, or undefined (no Python extension, none selected). */
export type PythonEnvLookup = () => Promise<string | undefined>;

/** nika-tools is not on the package index: it installs from a checkout of its repository. */
export const INSTALL_COMMAND = "python3 -m pip install .";

function exeNames(machine: Machine, base: string): string[] {
  if (machine.platform !== "win32") return [base];
  const exts = (machine.pathExt ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean);
  return [base, ...exts.map((e) => base + e.toLowerCase()), ...exts.map((e) => base + e)];
}

/** The `nika` next to an environment's python: `bin/nika`, or `Scripts\nika.exe` on Windows. */
export async function nikaBesidePython(pythonExe: string, machine: Machine): Promise<string | undefined> {
  const p = machine.platform === "win32" ? path.win32 : path.posix;
  const dir = p.dirname(pythonExe);
  const dirs = machine.platform === "win32" ? [dir, p.join(dir, "Scripts")] : [dir];
  for (const d of dirs) {
    for (const name of exeNames(machine, "nika")) {
      const candidate = p.join(d, name);
      if (await machine.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The workspace's own virtual environments, in the order they are tried. */
export const VENV_DIRS = [".venv", "venv"];

/** `FOLDER/.venv/bin/nika` (or `Scripts\\nika.exe` on Windows), then the same under `venv`. */
export async function nikaInWorkspaceVenv(folder: string, machine: Machine): Promise<string | undefined> {
  const win = machine.platform === "win32";
  const p = win ? path.win32 : path.posix;
  for (const venv of VENV_DIRS) {
    const dir = p.join(folder, venv, win ? "Scripts" : "bin");
    for (const name of exeNames(machine, "nika")) {
      const candidate = p.join(dir, name);
      if (await machine.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

export async function findOnPath(name: string, machine: Machine): Promise<string | undefined> {
  const p = machine.platform === "win32" ? path.win32 : path.posix;
  const sep = machine.platform === "win32" ? ";" : ":";
  for (const dir of (machine.pathEnv ?? "").split(sep)) {
    if (!dir) continue;
    for (const exe of exeNames(machine, name)) {
      const candidate = p.join(dir, exe);
      if (await machine.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Expand `~` and `${workspaceFolder}` in the `nika.path` setting. */
export function expandSetting(value: string, home: string, workspaceFolder: string | undefined): string {
  let out = value.trim();
  if (out === "~" || out.startsWith("~/")) out = home + out.slice(1);
  if (workspaceFolder !== undefined) out = out.split("${workspaceFolder}").join(workspaceFolder);
  return out;
}

/**
 * The command to run, or undefined when none is found. A `nika.path` that is set is used as it is
 * (a wrong path then fails loudly when the server starts, instead of silently falling back).
 */
export async function resolveNika(
  setting: string | undefined,
  machine: Machine,
  pythonEnv: PythonEnvLookup,
  workspaceFolders: string[] = [],
): Promise<Resolved | undefined> {
  if (setting && setting.trim()) {
    return { command: setting.trim(), source: "setting", why: `nika.path setting: ${setting.trim()}` };
  }
  for (const folder of workspaceFolders) {
    const venv = await nikaInWorkspaceVenv(folder, machine);
    if (venv) return { command: venv, source: "venv", why: `the workspace's virtual environment: ${venv}` };
  }
  let python: string | undefined;
  try {
    python = await pythonEnv();
  } catch {
    python = undefined;
  }
  if (python) {
    const beside = await nikaBesidePython(python, machine);
    if (beside) return { command: beside, source: "python", why: `selected Python environment: ${beside}` };
  }
  const onPath = await findOnPath("nika", machine);
  if (onPath) return { command: onPath, source: "path", why: `nika on PATH: ${onPath}` };
  return undefined;
}

/** The one "not found" notification: where the search looked, and the ways out. */
export function notFoundMessage(python: boolean): string {
  const places = ["in the workspace's `.venv` or `venv`", ...(python ? ["in the selected Python interpreter"] : []), "on `PATH`"];
  const list = places.slice(0, -1).join(", ") + " or " + places[places.length - 1];
  const then = python ? "then select an interpreter that has it, or set `nika.path`" : "then set `nika.path` if it is not on `PATH`";
  return `Nika: \`nika.path\` is not set and there is no \`nika\` ${list}. Install nika-tools from its checkout (\`${INSTALL_COMMAND}\`), ${then}.`;
}

export const SELECT_INTERPRETER = "Select Interpreter";
export const SET_PATH = "Set Path";
export const COPY_INSTALL = "Copy Install Command";

/** The notification's buttons: "Select Interpreter" only when the Python extension is there to do it. */
export function notFoundActions(python: boolean): string[] {
  return [...(python ? [SELECT_INTERPRETER] : []), SET_PATH, COPY_INSTALL];
}
