import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  expandSetting,
  findOnPath,
  type Machine,
  nikaBesidePython,
  nikaInWorkspaceVenv,
  notFoundActions,
  notFoundMessage,
  resolveNika,
} from "../resolve";

function machine(executables: string[], opts: Partial<Machine> = {}): Machine {
  const set = new Set(executables);
  return { platform: "linux", pathEnv: "/usr/local/bin:/usr/bin", isExecutable: async (f) => set.has(f), ...opts };
}
const noPython = async () => undefined;

test("the nika.path setting wins over everything, used as it is", async () => {
  const m = machine(["/usr/bin/nika", "/venv/bin/nika"]);
  const r = await resolveNika("  /opt/nika/bin/nika ", m, async () => "/venv/bin/python");
  assert.deepEqual(r, { command: "/opt/nika/bin/nika", source: "setting", why: "nika.path setting: /opt/nika/bin/nika" });
});

test("then the selected Python environment's nika", async () => {
  const m = machine(["/usr/bin/nika", "/venv/bin/nika"]);
  const r = await resolveNika("", m, async () => "/venv/bin/python");
  assert.equal(r?.command, "/venv/bin/nika");
  assert.equal(r?.source, "python");
});

test("an environment without nika falls through to PATH", async () => {
  const m = machine(["/usr/bin/nika"]);
  const r = await resolveNika(undefined, m, async () => "/venv/bin/python");
  assert.deepEqual([r?.command, r?.source], ["/usr/bin/nika", "path"]);
});

test("a Python extension that throws is the same as none", async () => {
  const m = machine(["/usr/local/bin/nika"]);
  const r = await resolveNika("", m, async () => {
    throw new Error("no interpreter");
  });
  assert.equal(r?.command, "/usr/local/bin/nika");
});

test("PATH is searched in order; nothing found is undefined", async () => {
  assert.equal(await findOnPath("nika", machine(["/usr/bin/nika", "/usr/local/bin/nika"])), "/usr/local/bin/nika");
  assert.equal(await resolveNika("", machine([]), noPython), undefined);
});

test("Windows: Scripts\\nika.exe beside python.exe, PATHEXT on PATH", async () => {
  const m = machine(["C:\\venv\\Scripts\\nika.exe", "C:\\tools\\nika.CMD"], {
    platform: "win32",
    pathEnv: "C:\\tools;C:\\other",
    pathExt: ".EXE;.CMD",
  });
  assert.equal(await nikaBesidePython("C:\\venv\\python.exe", m), "C:\\venv\\Scripts\\nika.exe");
  assert.equal(await findOnPath("nika", m), "C:\\tools\\nika.CMD");
});

test("the setting expands ~ and ${workspaceFolder}", () => {
  assert.equal(expandSetting("~/bin/nika", "/home/me", undefined), "/home/me/bin/nika");
  assert.equal(expandSetting("${workspaceFolder}/.venv/bin/nika", "/home/me", "/w"), "/w/.venv/bin/nika");
});

test("the workspace's .venv, then venv, comes before the Python extension and PATH", async () => {
  const m = machine(["/w/.venv/bin/nika", "/w/venv/bin/nika", "/env/bin/nika", "/usr/bin/nika"]);
  const r = await resolveNika("", m, async () => "/env/bin/python", ["/w"]);
  assert.deepEqual([r?.command, r?.source], ["/w/.venv/bin/nika", "venv"]);
  assert.match(r!.why, /workspace's virtual environment/);
  assert.equal(await nikaInWorkspaceVenv("/w", machine(["/w/venv/bin/nika"])), "/w/venv/bin/nika");
  const second = await resolveNika("", machine(["/b/venv/bin/nika", "/env/bin/nika"]), async () => "/env/bin/python", ["/a", "/b"]);
  assert.deepEqual([second?.command, second?.source], ["/b/venv/bin/nika", "venv"], "every workspace folder is tried");
  const noVenv = await resolveNika("", machine(["/env/bin/nika"]), async () => "/env/bin/python", ["/w"]);
  assert.equal(noVenv?.source, "python");
  const setting = await resolveNika("/opt/nika", m, noPython, ["/w"]);
  assert.equal(setting?.source, "setting", "nika.path still wins");
  const win = machine(["C:\\w\\.venv\\Scripts\\nika.exe"], { platform: "win32", pathExt: ".EXE" });
  assert.equal(await nikaInWorkspaceVenv("C:\\w", win), "C:\\w\\.venv\\Scripts\\nika.exe");
});

test("the not-found message: where it looked, a working install command, the ways out", () => {
  const msg = notFoundMessage(true);
  assert.equal(
    msg,
    "Nika: `nika.path` is not set and there is no `nika` in the workspace's `.venv` or `venv`, in the selected Python interpreter or on `PATH`. " +
      "Install nika-tools from its checkout (`python3 -m pip install .`), then select an interpreter that has it, or set `nika.path`.",
  );
  assert.doesNotMatch(msg, /pip install nika-tools/, "the package is not published");
  assert.equal(
    notFoundMessage(false),
    "Nika: `nika.path` is not set and there is no `nika` in the workspace's `.venv` or `venv` or on `PATH`. " +
      "Install nika-tools from its checkout (`python3 -m pip install .`), then set `nika.path` if it is not on `PATH`.",
  );
  assert.deepEqual(notFoundActions(true), ["Select Interpreter", "Set Path", "Copy Install Command"]);
  assert.deepEqual(notFoundActions(false), ["Set Path", "Copy Install Command"], "no interpreter to select without the Python extension");
});
