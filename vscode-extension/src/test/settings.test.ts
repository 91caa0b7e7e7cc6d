import { strict as assert } from "node:assert";
import { test } from "node:test";
import { actionFor, DEFAULTS, pathSettingCommand, readSettings, RestartBudget } from "../settings";

function from(values: Record<string, unknown>) {
  return <T>(key: string, fallback: T): T => (key in values ? (values[key] as T) : fallback);
}

test("defaults", () => {
  assert.deepEqual(readSettings(from({})), DEFAULTS);
});

test("bad values fall back to the defaults", () => {
  const s = readSettings(from({ args: [1, 2], "trace.server": "loud", inlayHints: "no", path: null }));
  assert.deepEqual(s.args, ["lsp"]);
  assert.equal(s.trace, "off");
  assert.equal(s.inlayHints, true);
  assert.equal(s.path, "");
  assert.deepEqual(readSettings(from({ args: [] })).args, ["lsp"]);
});

test("values are read", () => {
  const s = readSettings(
    from({ path: "/x/nika", args: ["lsp", "--tcp", "127.0.0.1:9"], inlayHints: false, runLenses: false, "trace.server": "verbose" }),
  );
  assert.deepEqual(s, { path: "/x/nika", args: ["lsp", "--tcp", "127.0.0.1:9"], inlayHints: false, runLenses: false, trace: "verbose" });
});

test("path and args restart the server; inlay hints and tracing apply live", () => {
  const only = (key: string) => (s: string) => s === key || key.startsWith(s + ".");
  assert.equal(actionFor(only("nika.path")), "restart");
  assert.equal(actionFor(only("nika.args")), "restart");
  assert.equal(actionFor(only("nika.inlayHints")), "live");
  assert.equal(actionFor(only("nika.runLenses")), "live");
  assert.equal(actionFor(only("nika.trace.server")), "live");
  assert.equal(actionFor(only("editor.fontSize")), "none");
});

test("restarts after crashes are bounded in a sliding window", () => {
  const b = new RestartBudget(3, 1000);
  assert.deepEqual([b.allow(0), b.allow(10), b.allow(20), b.allow(30)], [true, true, true, false]);
  assert.equal(b.allow(1005), true); // the first restart left the window
  b.reset();
  assert.equal(b.allow(1006), true);
});

test("Set Path opens nika.path where a machine setting is listed: the remote settings in a remote window", () => {
  // found by the code-server e2e: the User tab of a remote window says "No Settings Found" for nika.path
  assert.deepEqual(pathSettingCommand(undefined), ["workbench.action.openSettings", "nika.path"]);
  assert.deepEqual(pathSettingCommand("ssh-remote"), ["workbench.action.openRemoteSettings", { query: "nika.path" }]);
});
