/** "Nika: Run workflow" and "Nika: Check workspace": argument building (pure) and the VS Code side. */

export interface DeclaredInput {
  name: string;
  /** The type as the outline shows it (e.g. `string`, `int`), if any. */
  type?: string;
}

/**
 * A typed answer → the JSON of `--var K=JSON`. Valid JSON is taken as it is (`3`, `true`,
 * `["a"]`, `"quoted"`); anything else is a string. For a `string` input, text is always a string.
 */
export function encodeInputValue(text: string, type?: string): string {
  if (type === "string") {
    try {
      const v = JSON.parse(text);
      if (typeof v === "string") return JSON.stringify(v);
    } catch {
      /* plain text */
    }
    return JSON.stringify(text);
  }
  try {
    JSON.parse(text);
    return text.trim();
  } catch {
    return JSON.stringify(text);
  }
}

export function runArgs(file: string, values: [string, string][]): string[] {
  const args = ["run", file];
  for (const [name, json] of values) args.push("--var", `${name}=${json}`);
  return args;
}

/** The live run view's command line: the run's own, plus the event stream on standard output (docs/events.md). */
export const EVENTS_ARGS = ["--events", "ndjson:-"];

export function liveRunArgs(file: string, values: [string, string][]): string[] {
  return [...runArgs(file, values), ...EVENTS_ARGS];
}

/** A "Run task" lens: one task (and with `withDependents` what depends on it), its ancestors from the latest run history. */
export function taskRunArgs(file: string, task: string, withDependents: boolean): string[] {
  return ["run", file, "--task", task, ...(withDependents ? ["--with-dependents"] : []), ...EVENTS_ARGS];
}

export const CHECK_ARGS = ["check", "--output-format", "concise", "--color", "never"];

export function checkArgs(paths: string[] | undefined): string[] {
  return [...CHECK_ARGS, ...(paths && paths.length ? paths : ["."])];
}

/** Children of the outline's `inputs` section: name and type (the symbol's detail). */
export function inputsFromSymbols(
  symbols: { name: string; detail?: string; children?: { name: string; detail?: string }[] }[],
): DeclaredInput[] {
  const section = symbols.find((s) => s.name === "inputs");
  return (section?.children ?? []).map((c) => ({ name: c.name, type: c.detail || undefined }));
}

interface OutlineSymbol<R> {
  name: string;
  selectionRange: R;
  children?: OutlineSymbol<R>[];
}

/** The outline symbol of task `id` (a child of the `tasks` section), if the outline has it. */
export function taskSymbol<R, S extends OutlineSymbol<R>>(symbols: S[], id: string): S | undefined {
  const section = symbols.find((s) => s.name === "tasks");
  return section?.children?.find((c) => c.name === id) as S | undefined;
}
