/** The task-graph webview: asks the server for `nika/semanticDocument` (the canonical projection,
 * spec 16), draws its graph, reveals a task on click. While the file has no graph (not a workflow
 * yet, or `nika check` finds an error) the last graph stays drawn and the bar says why. */
import * as vscode from "vscode";
import type { NikaClient } from "./client";
import { drawableGraph, drawingOf, type LspRange, noGraphReason, type SemanticReply } from "./graphModel";

const DEBOUNCE_MS = 300;

export class GraphView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private uri: vscode.Uri | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The spans of the graph on show (task id → the range of its id), for a click to reveal. */
  private spans: Record<string, LspRange> = {};
  /** The last run's task statuses, per workflow file (from the live run view). */
  private readonly runs = new Map<string, Record<string, string>>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly nika: NikaClient,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.panel && this.uri && e.document.uri.toString() === this.uri.toString()) this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor((ed) => {
        if (this.panel && ed && ed.document.languageId === "nika" && ed.document.uri.toString() !== this.uri?.toString()) {
          this.show(ed.document.uri, false);
        }
      }),
    );
  }

  show(uri: vscode.Uri, focus = true): void {
    this.uri = uri;
    const title = `Graph: ${uri.path.split("/").pop()}`;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "nika.graph",
        title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: !focus },
        {
          enableScripts: true,
          retainContextWhenHidden: true,
          localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist")],
        },
      );
      this.panel.webview.html = this.html(this.panel.webview);
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      }, null, this.disposables);
      this.panel.webview.onDidReceiveMessage((m) => this.onMessage(m), null, this.disposables);
    } else {
      this.panel.title = title;
      if (focus) this.panel.reveal(undefined, true);
    }
    this.schedule(0);
  }

  /** Colour the nodes by the statuses of a run of `uri` (shown now if its graph is open). */
  runStatuses(uri: vscode.Uri, statuses: Record<string, string>): void {
    this.runs.set(uri.toString(), statuses);
    if (this.panel && this.uri?.toString() === uri.toString()) void this.panel.webview.postMessage({ type: "run", statuses });
  }

  private schedule(delay = DEBOUNCE_MS): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  private async refresh(): Promise<void> {
    const panel = this.panel;
    const uri = this.uri;
    if (!panel || !uri) return;
    const client = this.nika.client;
    if (!client || !client.isRunning()) {
      void panel.webview.postMessage({ type: "message", text: "The Nika language server is not running (see “Nika: Show Output”)." });
      return;
    }
    let reply: SemanticReply;
    try {
      reply = await client.sendRequest<SemanticReply>("nika/semanticDocument", { textDocument: { uri: uri.toString() } });
    } catch (err) {
      void panel.webview.postMessage({ type: "message", text: `nika/semanticDocument failed: ${String(err)}` });
      return;
    }
    if (uri.toString() !== this.uri?.toString()) return; // superseded
    const graph = drawableGraph(reply);
    if (graph && reply) {
      this.spans = reply.spans;
      void panel.webview.postMessage({ type: "graph", doc: drawingOf(graph), file: uri.path.split("/").pop() });
      void panel.webview.postMessage({ type: "run", statuses: this.runs.get(uri.toString()) ?? {} });
    } else {
      if (reply) this.spans = { ...this.spans, ...reply.spans }; // the tasks it could recover still link back
      void panel.webview.postMessage({ type: "message", text: noGraphReason(reply) });
    }
  }

  private async onMessage(m: { type: string; id?: string }): Promise<void> {
    if (m.type === "ready") return this.schedule(0);
    if (m.type !== "reveal" || !m.id || !this.uri) return;
    const r = this.spans[m.id];
    if (!r) return;
    const key = new vscode.Range(new vscode.Position(r.start.line, r.start.character), new vscode.Position(r.end.line, r.end.character));
    const doc = await vscode.workspace.openTextDocument(this.uri);
    const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === this.uri?.toString());
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One, selection: key });
    editor.revealRange(key, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  private html(webview: vscode.Webview): string {
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
    const worker = webview.asWebviewUri(vscode.Uri.joinPath(dist, "elk-worker.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.css"));
    const nonce = [...Array(32)].map(() => Math.floor(Math.random() * 36).toString(36)).join("");
    const csp = [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `connect-src ${webview.cspSource}`,
      "worker-src blob:",
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Nika graph</title>
</head>
<body>
<div id="bar"><span id="summary">Waiting for the language server…</span>
<span id="legend"></span>
<button id="fit" title="Fit the graph to the view">Fit</button></div>
<div id="view"><svg id="graph" xmlns="http://www.w3.org/2000/svg"></svg></div>
<script nonce="${nonce}" id="boot" data-worker="${worker}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
