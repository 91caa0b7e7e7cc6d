/**
 * The live run view: "Nika: Run Workflow" runs `nika run FILE --events ndjson:-`, feeds each line to
 * the run state (runEvents.ts) and shows the tasks in the "Nika Run" tree as they start and settle;
 * the graph view colours its nodes from the same state. Standard error (the progress view and the
 * summary) goes to the "Nika Run" output channel.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import { LineBuffer, RunState, type TaskState } from "./runEvents";
import { exitSummary, rowFor, runTitle } from "./runPresent";

/** The button of a paused run's notification: runs "Nika: Approve Paused Run". */
export const APPROVE = "Approve…";

/** Receives the task statuses of the current run (the graph view). */
export interface RunListener {
  runStatuses(uri: vscode.Uri, statuses: Record<string, string>): void;
}

export interface StartOptions {
  /** The workflow file (else the one the stream's `workflow.started` names). */
  file?: vscode.Uri;
  /** The name shown until the stream names the workflow. */
  label?: string;
  /** A past run replayed from its journal: no notifications when it ends. */
  replay?: boolean;
}

export class RunView implements vscode.TreeDataProvider<TaskState>, vscode.Disposable {
  private state = new RunState();
  private child: ChildProcess | undefined;
  private file: vscode.Uri | undefined;
  private cwd = ".";
  private replay = false;
  private ticker: NodeJS.Timeout | undefined;
  private readonly changed = new vscode.EventEmitter<TaskState | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tree: vscode.TreeView<TaskState>;
  private readonly output: vscode.OutputChannel;

  constructor(private readonly listener: RunListener) {
    this.output = vscode.window.createOutputChannel("Nika Run");
    this.tree = vscode.window.createTreeView("nika.run", { treeDataProvider: this, showCollapseAll: false });
    this.tree.message = "Run a workflow with “Nika: Run Workflow” to follow its tasks here.";
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  getTreeItem(t: TaskState): vscode.TreeItem {
    const row = rowFor(t, Date.now() * 1e6);
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = t.id;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon(row.icon, row.color ? new vscode.ThemeColor(row.color) : undefined);
    item.contextValue = `nika.task.${t.status}`;
    if (this.file) item.command = { command: "nika.revealTask", title: "Reveal task", arguments: [this.file, t.id] };
    return item;
  }

  getChildren(t?: TaskState): TaskState[] {
    return t ? [] : [...this.state.tasks.values()];
  }

  /** Start a run; a run already going is stopped first. */
  /** Called when a run (or a replay) ends. */
  onDidFinish: (() => void) | undefined;

  /** `args`: the whole command line after the command (liveRunArgs, or replayArgs for a past run). */
  async start(command: string, args: string[], cwd: string, opts: StartOptions = {}): Promise<void> {
    const { file, label } = opts;
    this.replay = opts.replay === true;
    const previous = this.child;
    this.child = undefined; // its remaining lines and its exit are ignored from now on
    previous?.kill("SIGINT");
    if (this.ticker) clearInterval(this.ticker);
    this.state = new RunState();
    this.file = file;
    this.cwd = cwd;
    const name = label ?? (file ? path.basename(file.fsPath) : "run");
    this.output.clear();
    this.output.appendLine(`$ ${command} ${args.join(" ")}   (in ${cwd})`);
    void vscode.commands.executeCommand("setContext", "nika.running", true);
    await vscode.commands.executeCommand("nika.run.focus");
    this.refresh(name);
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    this.child = child;
    const lines = new LineBuffer();
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    const mine = (): boolean => this.child === child; // a later run replaces this one
    child.stdout?.on("data", (chunk: string) => mine() && this.feed(lines.push(chunk), name));
    child.stderr?.on("data", (chunk: string) => mine() && this.output.append(chunk));
    this.ticker = setInterval(() => this.changed.fire(undefined), 1000); // running tasks' elapsed time
    child.on("error", (err) => {
      if (!mine()) return;
      this.output.appendLine(`could not start ${command}: ${err.message}`);
      this.finish(name, `could not start \`${command}\`: ${err.message}`);
    });
    child.on("close", (code, signal) => {
      if (!mine()) return;
      this.feed(lines.end(), name);
      this.finish(name, exitSummary(code, signal, this.state.phase));
    });
  }

  /** Ask the run to stop (SIGINT: `nika run` cancels its tasks, runs their cleanup and exits 3). */
  stop(): void {
    this.child?.kill("SIGINT");
  }

  private feed(lines: string[], name: string): void {
    const before = this.state.problems.length;
    for (const line of lines) this.state.applyLine(line);
    if (!this.file && this.state.source) this.file = vscode.Uri.file(path.resolve(this.cwd, this.state.source));
    for (const p of this.state.problems.slice(before)) this.output.appendLine(`event stream: ${p}`);
    if (lines.some((l) => l.trim())) this.refresh(name);
  }

  private refresh(name: string, extra?: string): void {
    this.tree.message = undefined;
    this.tree.description = extra ? `${runTitle(this.state, name)} · ${extra}` : runTitle(this.state, name);
    this.changed.fire(undefined);
    if (this.file) this.listener.runStatuses(this.file, this.state.statuses());
  }

  private finish(name: string, why: string | undefined): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.child = undefined;
    void vscode.commands.executeCommand("setContext", "nika.running", false);
    this.refresh(name, why);
    this.onDidFinish?.();
    const title = runTitle(this.state, name);
    if (this.replay && !why) return;
    if (why) {
      void vscode.window.showErrorMessage(`Nika: ${name}: ${why}`, "Show Output").then((pick) => pick && this.output.show(true));
    } else if (this.state.phase === "paused") {
      const at = this.state.pausedTask ? `\`${this.state.pausedTask}\` waits for an answer` : "it waits for an answer";
      void vscode.window
        .showInformationMessage(`Nika: ${title}: ${at}.`, APPROVE)
        .then((pick) => pick === APPROVE && vscode.commands.executeCommand("nika.approveRun"));
    } else if (this.state.phase === "failure") {
      void vscode.window.showWarningMessage(`Nika: ${title}`, "Show Output").then((pick) => pick && this.output.show(true));
    } else {
      void vscode.window.setStatusBarMessage(`Nika: ${title}`, 8000);
    }
  }

  dispose(): void {
    this.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.tree.dispose();
    this.output.dispose();
    this.changed.dispose();
  }
}
