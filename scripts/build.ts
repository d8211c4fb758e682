/**
 * `npm run build`: one self-contained executable, dist/wsync, holding the server, the web assets and
 * the CLI. It runs with no Node, Bun or node_modules on the machine.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";
import { buildWebAssets } from "../server/web/assets.ts";

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "wsync");

/**
 * Ink loads react-devtools-core only when DEV=true; it is an optional peer we do not ship. The stub
 * keeps the bundler from failing on the import and makes DEV mode a clear no-op in the binary.
 */
const stubDevtools: BunPlugin = {
  name: "stub-react-devtools-core",
  setup(build) {
    build.onResolve({ filter: /^react-devtools-core$/ }, () => ({
      path: "react-devtools-core",
      namespace: "stub",
    }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
      contents: "export default { initialize() {}, connectToDevTools() {} };",
      loader: "js",
    }));
  },
};

mkdirSync(join(root, "dist"), { recursive: true });
const started = performance.now();
// The browser bundles first: written to dist/web with a manifest, then embedded in the binary.
const webDir = join(root, "dist", "web");
rmSync(webDir, { recursive: true, force: true });
mkdirSync(webDir, { recursive: true });
await buildWebAssets({ outdir: webDir });
const result = await Bun.build({
  // The SQLite writer thread's entry is bundled as its own entrypoint: a Worker in the binary is
  // started from a file inside it (server/storage/sqlite/writer.ts; docs/decisions/sqlite-writer-thread.md).
  entrypoints: [join(root, "cli", "main.ts"), join(root, "server", "storage", "sqlite", "writer-worker.ts")],
  compile: {
    outfile,
    autoloadBunfig: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
    assets: [webDir],
  },
  minify: true,
  bytecode: true,
  format: "esm",
  sourcemap: "none",
  plugins: [stubDevtools],
  define: { "process.env.NODE_ENV": '"production"' },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`built ${outfile} (${mb} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
