// Bundles the extension (Node, CommonJS), the graph view's page script (browser) and the tests.
import { build, context } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");
const tests = process.argv.includes("--tests");

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "warning" };

if (tests) {
  rmSync("out", { recursive: true, force: true });
  const entryPoints = readdirSync("src/test").filter((f) => f.endsWith(".test.ts")).map((f) => `src/test/${f}`);
  // the views' tests run against a small fake of the `vscode` module (src/test/fakes/vscode.ts)
  const alias = { vscode: "./src/test/fakes/vscode.ts" };
  // the debug adapter tests load the official DAP client and the TypeScript compiler (which reads the protocol types) unbundled
  const external = ["@vscode/debugadapter-testsupport", "typescript"];
  await build({ ...common, entryPoints, outdir: "out/test", platform: "node", format: "cjs", target: "node20", alias, external });
} else {
  mkdirSync("dist", { recursive: true });
  copyFileSync("node_modules/elkjs/lib/elk-worker.min.js", "dist/elk-worker.js");
  copyFileSync("src/webview/webview.css", "dist/webview.css");
  const targets = [
    { ...common, entryPoints: ["src/extension.ts"], outfile: "dist/extension.js", platform: "node", format: "cjs", target: "node20", external: ["vscode"] },
    { ...common, entryPoints: ["src/webview/main.ts"], outfile: "dist/webview.js", platform: "browser", format: "iife", target: "es2022" },
  ];
  if (watch) {
    for (const t of targets) await (await context(t)).watch();
  } else {
    await Promise.all(targets.map((t) => build(t)));
  }
}
