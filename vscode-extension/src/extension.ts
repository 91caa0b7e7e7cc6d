/** Entry point: the language client, the graph view, the live run view, and the run/check commands. */
import * as path from "node:path";
import * as vscode from "vscode";
import { NikaClient, findNika } from "./client";
import { GraphView } from "./graphView";
import { checkArgs, encodeInputValue, inputsFromSymbols, liveRunArgs, runArgs, taskRunArgs, taskSymbol } from "./run";
import { HistoryView } from "./historyView";
import { answerOptions, approveArgs, journalPath, type PastRun, pausedPrompt, replayArgs, runFolder, typedAnswer } from "./runHistory";
import { RunView } from "./runView";
import { actionFor } from "./settings";

let nika: NikaClient | undefined;
let runView: RunView | undefined;
let historyView: HistoryView | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<{ nika: NikaClient }> {
  const output = vscode.window.createOutputChannel("Nika", { log: true });
  nika = new NikaClient(output);
  const graph = new GraphView(context.extensionUri, nika);
  const client = nika;
  const live = new RunView(graph);
  runView = live;
  // no notification from here: the client's start already says once when nika is missing
  const history = new HistoryView(async () => (client.resolved ?? (await findNika()))?.command, (line) => output.warn(line));
  historyView = history;
  live.onDidFinish = () => void history.refresh();
  context.subscriptions.push(
    output,
    client,
    graph,
    live,
    history,
    vscode.commands.registerCommand("nika.restartServer", () => client.restart("requested")),
    vscode.commands.registerCommand("nika.showOutput", () => output.show()),
    vscode.commands.registerCommand("nika.showGraph", (uri?: vscode.Uri) => {
      const target = uri ?? nikaEditor()?.document.uri;
      if (!target) return void vscode.window.showInformationMessage("Nika: open a *.nika.yaml file to see its task graph.");
      graph.show(target);
    }),
    vscode.commands.registerCommand("nika.runWorkflow", () => runWorkflow("live")),
    vscode.commands.registerCommand("nika.runWorkflowInTerminal", () => runWorkflow("terminal")),
    vscode.commands.registerCommand("nika.stopRun", () => live.stop()),
    vscode.commands.registerCommand("nika.refreshHistory", () => history.refresh()),
    vscode.commands.registerCommand("nika.openPastRun", async (r: PastRun) => {
      const command = await nikaCommand();
      if (command) await live.start(command, replayArgs(r), runFolder(r), { label: r.workflow, replay: true });
    }),
    vscode.commands.registerCommand("nika.approveRun", (r?: PastRun) => approveRun(r)),
    vscode.commands.registerCommand("nika.revealTask", (uri: vscode.Uri, id: string) => revealTask(uri, id)),
    // the server's "Run task" lens (nika.runLenses): [uri, task id, with dependents?]
    vscode.commands.registerCommand("nika.runTask", (uri: string | vscode.Uri, id: string, withDependents?: boolean) =>
      runOneTask(typeof uri === "string" ? vscode.Uri.parse(uri) : uri, id, withDependents === true),
    ),
    vscode.commands.registerCommand("nika.checkWorkspace", () => checkWorkspace()),
    vscode.tasks.registerTaskProvider("nika", {
      provideTasks: async () => {
        const folder = vscode.workspace.workspaceFolders?.[0];
        const task = folder ? await checkTask(folder, undefined) : undefined;
        return task ? [task] : [];
      },
      resolveTask: async (task) => {
        const folder = task.scope && typeof task.scope === "object" ? (task.scope as vscode.WorkspaceFolder) : vscode.workspace.workspaceFolders?.[0];
        const def = task.definition as { command?: string; paths?: string[]; file?: string; vars?: Record<string, string> };
        if (folder && def.command === "check") return checkTask(folder, def.paths, task.definition);
        if (def.command === "run" && def.file) {
          const command = await nikaCommand();
          const file = path.isAbsolute(def.file) || !folder ? def.file : path.join(folder.uri.fsPath, def.file);
          return command ? runTask(command, { type: "nika", command: "run", file, vars: def.vars }, folder ?? vscode.TaskScope.Workspace) : undefined;
        }
        return undefined;
      },
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const action = actionFor((s) => e.affectsConfiguration(s));
      if (action === "restart") void client.restart("settings changed");
    }),
  );
  await client.start();
  void history.refresh();
  return { nika: client };
}

export async function deactivate(): Promise<void> {
  await nika?.stop();
}

function nikaEditor(): vscode.TextEditor | undefined {
  const ed = vscode.window.activeTextEditor;
  return ed?.document.languageId === "nika" ? ed : vscode.window.visibleTextEditors.find((e) => e.document.languageId === "nika");
}

async function nikaCommand(): Promise<string | undefined> {
  const resolved = nika?.resolved ?? (await findNika());
  if (!resolved) await nika?.notifyMissing(true);
  return resolved?.command;
}

async function checkTask(folder: vscode.WorkspaceFolder, paths: string[] | undefined, definition?: vscode.TaskDefinition): Promise<vscode.Task | undefined> {
  const command = await nikaCommand();
  if (!command) return undefined;
  const def = definition ?? { type: "nika", command: "check" };
  const exec = new vscode.ProcessExecution(command, checkArgs(paths), { cwd: folder.uri.fsPath });
  const task = new vscode.Task(def, folder, "check", "nika", exec, "$nika");
  task.group = vscode.TaskGroup.Build;
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Silent, clear: true };
  return task;
}

function runTask(
  command: string,
  def: { type: string; command: string; file: string; vars?: Record<string, string> },
  scope: vscode.WorkspaceFolder | vscode.TaskScope,
): vscode.Task {
  const vars = Object.entries(def.vars ?? {}).map(([k, v]) => [k, String(v)] as [string, string]);
  const exec = new vscode.ProcessExecution(command, runArgs(def.file, vars), { cwd: path.dirname(def.file) });
  const task = new vscode.Task(def, scope, `run ${path.basename(def.file)}`, "nika", exec, []);
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, focus: true, clear: true };
  return task;
}

async function checkWorkspace(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) return void vscode.window.showInformationMessage("Nika: open a folder to check its workflows.");
  const task = await checkTask(folder, undefined);
  if (task) await vscode.tasks.executeTask(task);
}

/** Select a task's key in its workflow (from a row of the run view), through the server's outline. */
async function revealTask(uri: vscode.Uri, id: string): Promise<void> {
  const symbols =
    (await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>("vscode.executeDocumentSymbolProvider", uri)) ?? [];
  const sym = taskSymbol(symbols, id);
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, { preserveFocus: false, selection: sym?.selectionRange });
  if (sym) editor.revealRange(sym.selectionRange, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** "Nika: Approve Paused Run": answer the prompt a paused run waits on, then resume it in the live run view. */
async function approveRun(given?: PastRun): Promise<void> {
  const history = historyView;
  if (!history || !runView) return;
  let r = given;
  if (!r) {
    await history.refresh();
    const waiting = history.waiting();
    if (!waiting.length) return void vscode.window.showInformationMessage("Nika: no run is waiting for an answer (Nika Runs lists paused runs).");
    if (waiting.length === 1) r = waiting[0];
    else {
      const pick = await vscode.window.showQuickPick(
        waiting.map((w) => ({ label: w.workflow, description: `paused at ${w.pausedTask ?? "?"}`, detail: w.run, run: w })),
        { title: "Nika: approve which paused run?", ignoreFocusOut: true },
      );
      if (!pick) return;
      r = pick.run;
    }
  }
  const command = await nikaCommand();
  if (!command) return;
  const replayed = await history.replay(r);
  const prompt = "error" in replayed ? replayed : pausedPrompt(replayed.stdout);
  if ("error" in prompt) return void vscode.window.showErrorMessage(`Nika: ${r.workflow}: ${prompt.error}`);
  if (!prompt.source) return void vscode.window.showErrorMessage(`Nika: ${r.workflow}: the journal does not name its workflow file.`);
  const title = `${r.workflow} waits at \`${prompt.task}\``;
  const options = answerOptions(prompt);
  let answer: string | undefined;
  if (options) {
    const pick = await vscode.window.showQuickPick(options.map((o) => ({ label: o.label, json: o.json })), {
      title,
      placeHolder: prompt.message.replace(/\s+/g, " "),
      ignoreFocusOut: true,
    });
    answer = pick?.json;
  } else {
    const text = await vscode.window.showInputBox({ title, prompt: prompt.message, ignoreFocusOut: true });
    answer = text === undefined ? undefined : typedAnswer(text);
  }
  if (answer === undefined) return; // cancelled
  const cwd = runFolder(r);
  const file = path.resolve(cwd, prompt.source);
  historyView?.ranIn(cwd);
  await runView.start(command, approveArgs(file, journalPath(r), prompt.task, answer), cwd, { file: vscode.Uri.file(file), label: r.workflow });
}

/** A "Run task" lens: save the workflow, then `nika run FILE --task ID` in the live run view (ancestors from the run history). */
async function runOneTask(uri: vscode.Uri, id: string, withDependents: boolean): Promise<void> {
  if (uri.scheme !== "file") return void vscode.window.showInformationMessage("Nika: save the workflow before running a task.");
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (doc?.isDirty && !(await doc.save())) return;
  const command = await nikaCommand();
  if (!command) return;
  const file = uri.fsPath;
  historyView?.ranIn(path.dirname(file));
  await runView?.start(command, taskRunArgs(file, id, withDependents), path.dirname(file), { file: uri, label: `${path.basename(file)} · ${id}` });
}

async function runWorkflow(mode: "live" | "terminal"): Promise<void> {
  const editor = nikaEditor();
  if (!editor) return void vscode.window.showInformationMessage("Nika: open a *.nika.yaml file to run it.");
  const doc = editor.document;
  if (doc.isUntitled) return void vscode.window.showInformationMessage("Nika: save the workflow before running it.");
  if (doc.isDirty && !(await doc.save())) return;
  const command = await nikaCommand();
  if (!command) return;
  const symbols =
    (await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>("vscode.executeDocumentSymbolProvider", doc.uri)) ?? [];
  const values: [string, string][] = [];
  for (const input of inputsFromSymbols(symbols)) {
    const text = await vscode.window.showInputBox({
      title: `Run ${path.basename(doc.fileName)}: input \`${input.name}\``,
      prompt: `${input.name}${input.type ? ` (${input.type})` : ""}: a JSON value, or plain text for a string. Leave empty to use the declared default.`,
      ignoreFocusOut: true,
    });
    if (text === undefined) return; // cancelled
    if (text !== "") values.push([input.name, encodeInputValue(text, input.type)]);
  }
  if (mode === "live") {
    historyView?.ranIn(path.dirname(doc.fileName));
    await runView?.start(command, liveRunArgs(doc.fileName, values), path.dirname(doc.fileName), { file: doc.uri });
    return;
  }
  // A task, not a bare terminal: its terminal stays open after `nika run` exits, so its message can be read.
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri) ?? vscode.TaskScope.Workspace;
  const def = { type: "nika", command: "run", file: doc.fileName, vars: Object.fromEntries(values) };
  await vscode.tasks.executeTask(runTask(command, def, folder));
}
