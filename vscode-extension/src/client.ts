/** The language client: command resolution, start/stop/restart, bounded restarts, status bar. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  COPY_INSTALL,
  expandSetting,
  INSTALL_COMMAND,
  type Machine,
  notFoundActions,
  notFoundMessage,
  resolveNika,
  type Resolved,
  SELECT_INTERPRETER,
  SET_PATH,
} from "./resolve";
import { type NikaSettings, pathSettingCommand, readSettings, RestartBudget } from "./settings";

export const machine: Machine = {
  platform: process.platform,
  pathEnv: process.env.PATH,
  pathExt: process.env.PATHEXT,
  async isExecutable(file: string): Promise<boolean> {
    try {
      const st = await fs.promises.stat(file);
      if (!st.isFile()) return false;
      if (process.platform === "win32") return true;
      await fs.promises.access(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!ext) return undefined;
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

/** The python executable of the environment the Python extension has selected, if any. */
async function selectedPython(): Promise<string | undefined> {
  const envs = (await pythonApi())?.environments;
  if (!envs) return undefined;
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const active = envs.getActiveEnvironmentPath(resource);
  const env = await envs.resolveEnvironment(active);
  return env?.executable?.uri?.fsPath ?? active?.path;
}

/** Show the `nika.path` setting where it can be set (the remote machine's settings in a remote window). */
async function openPathSetting(): Promise<void> {
  const [command, arg] = pathSettingCommand(vscode.env.remoteName);
  await vscode.commands.executeCommand(command, arg);
}

export function currentSettings(): NikaSettings {
  const cfg = vscode.workspace.getConfiguration("nika");
  return readSettings(<T>(key: string, fallback: T) => cfg.get<T>(key, fallback));
}

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** The nika command, from the settings and the machine (see resolve.ts for the order). */
export async function findNika(): Promise<Resolved | undefined> {
  const s = currentSettings();
  const setting = s.path ? expandSetting(s.path, os.homedir(), workspaceFolder()) : undefined;
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  return resolveNika(setting, machine, selectedPython, folders);
}

export class NikaClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  resolved: Resolved | undefined;
  private readonly budget = new RestartBudget(5, 3 * 60_000);
  private notified = false;
  private readonly status: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;

  constructor(readonly output: vscode.LogOutputChannel) {
    this.status = vscode.window.createStatusBarItem("nika.status", vscode.StatusBarAlignment.Right, 100);
    this.status.name = "Nika";
    this.status.command = "nika.showOutput";
    this.setStatus("starting");
    this.disposables.push(this.status, vscode.window.onDidChangeActiveTextEditor(() => this.updateVisibility()));
    void pythonApi().then((api) => {
      const ev = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (ev) {
        this.disposables.push(
          ev(() => {
            if (this.resolved?.source !== "setting") void this.restart("the selected Python environment changed");
          }),
        );
      }
    });
    this.updateVisibility();
  }

  private updateVisibility(): void {
    const lang = vscode.window.activeTextEditor?.document.languageId;
    if (lang === "nika") this.status.show();
    else this.status.hide();
  }

  setStatus(state: "starting" | "running" | "stopped" | "missing" | "failed", detail?: string): void {
    const icon = { starting: "$(sync~spin)", running: "$(check)", stopped: "$(circle-slash)", missing: "$(warning)", failed: "$(error)" }[state];
    this.status.text = `${icon} Nika`;
    const md = new vscode.MarkdownString(
      `**Nika language server**: ${state}\n\n${detail ?? this.resolved?.why ?? ""}\n\nClick to show the output.`,
    );
    this.status.tooltip = md;
    this.status.backgroundColor =
      state === "failed" || state === "missing" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  async start(): Promise<void> {
    if (this.starting) return this.starting;
    this.starting = this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const settings = currentSettings();
    this.setStatus("starting");
    this.resolved = await findNika();
    if (!this.resolved) {
      this.setStatus("missing", notFoundMessage(vscode.extensions.getExtension("ms-python.python") !== undefined));
      this.output.warn("nika not found (nika.path empty, no nika in the workspace's .venv/venv, the selected Python environment or on PATH)");
      await this.notifyMissing();
      return;
    }
    this.output.info(`starting ${this.resolved.command} ${settings.args.join(" ")} (${this.resolved.why})`);
    // stdio without `transport`: the client would append `--stdio`, which `nika lsp` does not take
    const serverOptions: ServerOptions = {
      command: this.resolved.command,
      args: settings.args,
      options: { cwd: workspaceFolder() },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { language: "nika", scheme: "file" },
        { language: "nika", scheme: "untitled" },
      ],
      outputChannel: this.output,
      // the extension implements `nika.runTask`, so it asks for the server's "Run task" lenses
      initializationOptions: { inlayHints: settings.inlayHints, runLenses: settings.runLenses },
      synchronize: { configurationSection: "nika" },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (this.budget.allow(Date.now())) {
            this.output.warn("the server stopped; restarting it");
            return { action: CloseAction.Restart, handled: true };
          }
          this.setStatus("failed", "The server stopped 5 times in 3 minutes and was not restarted.");
          return {
            action: CloseAction.DoNotRestart,
            message:
              "The Nika language server stopped 5 times in 3 minutes and will not be restarted. See the Nika output, then run “Nika: Restart Language Server”.",
          };
        },
      },
    };
    const client = new LanguageClient("nika", "Nika", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.setStatus("running");
      else if (e.newState === State.Starting) this.setStatus("starting");
      else this.setStatus("stopped");
    });
    try {
      await client.start();
    } catch (err) {
      this.setStatus("failed", `Could not start \`${this.resolved.command}\`: ${String(err)}`);
      this.output.error(`could not start the server: ${String(err)}`);
      void vscode.window
        .showErrorMessage(`Nika: could not start \`${this.resolved.command} ${settings.args.join(" ")}\`: ${String(err)}`, "Show Output", "Open Setting")
        .then((pick) => {
          if (pick === "Show Output") this.output.show();
          if (pick === "Open Setting") void openPathSetting();
        });
    }
  }

  /** The one "not found" notification of a session (`force`: the user just asked for something that needs nika). */
  async notifyMissing(force = false): Promise<void> {
    if (this.notified && !force) return;
    this.notified = true;
    const python = vscode.extensions.getExtension("ms-python.python") !== undefined;
    const pick = await vscode.window.showErrorMessage(notFoundMessage(python), ...notFoundActions(python));
    if (pick === SELECT_INTERPRETER) await vscode.commands.executeCommand("python.setInterpreter");
    if (pick === SET_PATH) await openPathSetting();
    if (pick === COPY_INSTALL) await vscode.env.clipboard.writeText(INSTALL_COMMAND);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(2000);
      } catch (err) {
        this.output.warn(`stopping the server: ${String(err)}`);
      }
      await client.dispose();
    }
  }

  async restart(why: string): Promise<void> {
    this.output.info(`restarting the server: ${why}`);
    this.budget.reset();
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
