import { strict as assert } from "node:assert";
import { test } from "node:test";
import { expandSetting, findOnPath, type Machine, nikaBesidePython, notFoundMessage, resolveNika } from "../resolve";

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

test("the not-found message carries the install command and names nika.path", () => {
  const msg = notFoundMessage(true);
  assert.match(msg, /from a nika-tools checkout with `python3 -m pip install \.`/);
  assert.match(msg, /nika\.path/);
  assert.match(msg, /selected Python environment/);
  assert.doesNotMatch(notFoundMessage(false), /Python environment/);
});
