// A test double of the Python extension (ms-python.python) for scripts/vscode-e2e.sh: the part of its
// API the Nika extension uses (environments.getActiveEnvironmentPath / resolveEnvironment /
// onDidChangeActiveEnvironmentPath) and the python.setInterpreter command, over the interpreters
// listed in the `fakePython.interpreters` setting.
const vscode = require("vscode");

function activate(context) {
  const interpreters = vscode.workspace.getConfiguration("fakePython").get("interpreters", []);
  let active = interpreters[0] || "/usr/bin/python3";
  const changed = new vscode.EventEmitter();
  context.subscriptions.push(
    changed,
    vscode.commands.registerCommand("python.setInterpreter", async () => {
      const pick = await vscode.window.showQuickPick(
        interpreters.map((p) => ({ label: p, description: p === active ? "selected" : "" })),
        { title: "Select Interpreter (fake)" },
      );
      if (!pick) return;
      active = pick.label;
      changed.fire({ path: active, resource: undefined });
    }),
  );
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: active, path: active }),
      resolveEnvironment: async (env) => {
        const p = typeof env === "string" ? env : env.path;
        return { id: p, path: p, executable: { uri: vscode.Uri.file(p) } };
      },
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
}

module.exports = { activate, deactivate() {} };
