/**
 * The run history view ("Nika Runs"): the runs `nika trace ls` lists in the trace folders of the
 * workspace and of the workflows run from this window, newest first. Clicking a run replays its
 * journal (`nika trace replay RUN --output-format json`, the same lines as the live stream) into
 * the Nika Run view, so a past run reads like a live one.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as vscode from "vscode";
import { historyRow, lsArgs, mergeRuns, parseTraceLs, type PastRun, pausedRuns, replayArgs, traceDirs } from "./runHistory";

export class HistoryView implements vscode.TreeDataProvider<PastRun>, vscode.Disposable {
  private runs: PastRun[] = [];
  /** Folders runs were started in from this window (their `.nika/traces` is listed too). */
  private readonly runFolders = new Set<string>();
  private readonly changed = new vscode.EventEmitter<PastRun | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tree: vscode.TreeView<PastRun>;

  constructor(
    private readonly command: () => Promise<string | undefined>,
    private readonly log: (line: string) => void,
  ) {
    this.tree = vscode.window.createTreeView("nika.history", { treeDataProvider: this });
    this.tree.message = "No runs yet: the runs in the workspace's .nika/traces show here.";
  }

  ranIn(folder: string): void {
    this.runFolders.add(folder);
  }

  getTreeItem(r: PastRun): vscode.TreeItem {
    const row = historyRow(r, Date.now());
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `${r.traceDir}/${r.run}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon(row.icon, row.color ? new vscode.ThemeColor(row.color) : undefined);
    // `waiting`: paused and not superseded, so "Approve Paused Run" is offered on its row
    item.contextValue = pausedRuns([r]).length ? "nika.pastRun.waiting" : `nika.pastRun.${r.state}`;
    item.command = { command: "nika.openPastRun", title: "Open run", arguments: [r] };
    return item;
  }

  getChildren(r?: PastRun): PastRun[] {
    return r ? [] : this.runs;
  }

  async refresh(): Promise<void> {
    const command = await this.command();
    if (!command) return;
    const folders = [...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath), ...this.runFolders];
    const dirs = traceDirs(folders).filter((d) => fs.existsSync(d));
    const lists = await Promise.all(dirs.map((d) => this.list(command, d)));
    this.runs = mergeRuns(lists);
    this.tree.message = this.runs.length ? undefined : "No runs yet: the runs in the workspace's .nika/traces show here.";
    this.changed.fire(undefined);
  }

  /** The listed runs that wait for an answer at a human gate. */
  waiting(): PastRun[] {
    return pausedRuns(this.runs);
  }

  /** A past run's journal as event lines (`nika trace replay`), or a one-line error. */
  replay(r: PastRun): Promise<{ stdout: string } | { error: string }> {
    return this.command().then(
      (command) =>
        new Promise((resolve) => {
          if (!command) return resolve({ error: "nika was not found" });
          execFile(command, replayArgs(r), { timeout: 20_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
            if (err) resolve({ error: `nika trace replay ${r.run}: ${stderr.trim().split("\n").pop() || err.message}` });
            else resolve({ stdout });
          });
        }),
    );
  }

  private list(command: string, dir: string): Promise<PastRun[]> {
    return new Promise((resolve) => {
      execFile(command, lsArgs(dir), { timeout: 20_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
        const parsed = parseTraceLs(stdout, dir);
        if ("error" in parsed) {
          this.log(`nika trace ls in ${dir}: ${err ? String(err.message) : parsed.error} ${stderr.trim()}`.trim());
          resolve([]);
        } else resolve(parsed);
      });
    });
  }

  dispose(): void {
    this.tree.dispose();
    this.changed.dispose();
  }
}
