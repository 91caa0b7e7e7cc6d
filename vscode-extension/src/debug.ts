/**
 * The debugger contribution: VS Code starts `nika dap` (the resolved `nika` executable) for a
 * `nika` launch configuration; "Debug Workflow" and "Replay Run" start one from the editor and the
 * run history view.
 */
import * as vscode from "vscode";
import { completeConfig, DAP_ARGS, DEBUG_TYPE, debugWorkflowConfig, type NikaDebugConfiguration, replayConfig } from "./debugConfig";
import type { PastRun } from "./runHistory";

export function registerDebugging(context: vscode.ExtensionContext, nikaCommand: () => Promise<string | undefined>): void {
  const folderOf = (uri?: vscode.Uri) => (uri ? vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath : undefined);
  const activeNika = () => {
    const ed = vscode.window.activeTextEditor;
    return ed?.document.languageId === "nika" ? ed.document.uri : undefined;
  };
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
      async createDebugAdapterDescriptor(session) {
        const command = await nikaCommand();
        if (!command) throw new Error("nika was not found: set `nika.path`, or install nika-tools in the workspace's environment.");
        const cwd = typeof session.configuration.cwd === "string" ? session.configuration.cwd : session.workspaceFolder?.uri.fsPath;
        return new vscode.DebugAdapterExecutable(command, DAP_ARGS, cwd ? { cwd } : undefined);
      },
    }),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, {
      resolveDebugConfiguration(folder, config) {
        const uri = activeNika();
        const done = completeConfig(config as Partial<NikaDebugConfiguration>, uri?.fsPath, folder?.uri.fsPath ?? folderOf(uri));
        if (typeof done === "string") {
          void vscode.window.showErrorMessage(done);
          return undefined;
        }
        return done as vscode.DebugConfiguration;
      },
    }),
    vscode.commands.registerCommand("nika.debugWorkflow", async (uri?: vscode.Uri) => {
      const target = uri ?? activeNika();
      if (!target) {
        void vscode.window.showErrorMessage("Open a Nika workflow (*.nika.yaml) to debug it.");
        return;
      }
      const folder = vscode.workspace.getWorkspaceFolder(target);
      await vscode.debug.startDebugging(folder, debugWorkflowConfig(target.fsPath, folder?.uri.fsPath) as vscode.DebugConfiguration);
    }),
    vscode.commands.registerCommand("nika.replayRun", async (r?: PastRun) => {
      if (!r) {
        void vscode.window.showErrorMessage("Pick a run in the Nika Runs view to replay it.");
        return;
      }
      await vscode.debug.startDebugging(undefined, replayConfig(r) as vscode.DebugConfiguration);
    }),
  );
}
