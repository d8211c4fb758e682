/**
 * Benchmark: what dist/wsync is made of. The compiled binary is Bun's own executable with the
 * bundled program appended (`bun build --compile`, scripts/build.ts): this prints the binary's size,
 * the Bun runtime inside it (the same bun executable that compiled it), and the payload appended to
 * it, split into the bundled JavaScript, its bytecode (`bytecode: true`) and the embedded web assets
 * (dist/web), each built again here the way scripts/build.ts builds them. Then what would shrink it:
 * the payload without bytecode, and the whole binary compressed (what an xz-packed download or a
 * self-extracting packer such as UPX would save). dist/wsync is built first when missing.
 * Usage: npm run bench:binary-size
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { BunPlugin } from "bun";
import { REPO_ROOT } from "../cli/cli-harness.ts";
import { freshBinary } from "./fresh-binary.ts";

const binary = join(REPO_ROOT, "dist", "wsync");
freshBinary();

const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
function sizeOf(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

// The same stub as scripts/build.ts (Ink's optional devtools are not shipped).
const stubDevtools: BunPlugin = {
  name: "stub-react-devtools-core",
  setup(build) {
    build.onResolve({ filter: /^react-devtools-core$/ }, () => ({
      path: "react-devtools-core",
      namespace: "stub",
    }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
      contents: "export default {};",
      loader: "js",
    }));
  },
};

/** Compiles cli/main.ts as scripts/build.ts does, with or without bytecode and the web assets. */
async function compiled(dir: string, o: { bytecode: boolean; assets: string | null }): Promise<number> {
  const outfile = join(dir, `wsync-${o.bytecode ? "bc" : "js"}${o.assets ? "-assets" : ""}`);
  const result = await Bun.build({
    entrypoints: [join(REPO_ROOT, "cli", "main.ts")],
    compile: {
      outfile,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
      ...(o.assets ? { assets: [o.assets] } : {}),
    },
    minify: true,
    bytecode: o.bytecode,
    format: "esm",
    sourcemap: "none",
    plugins: [stubDevtools],
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new Error(result.logs.map(String).join("\n"));
  return statSync(outfile).size;
}

const total = statSync(binary).size;
const runtime = statSync(process.execPath).size;
const out = mkdtempSync(join(tmpdir(), "wsync-size-"));
try {
  const webDir = join(REPO_ROOT, "dist", "web");
  const jsOnly = await compiled(out, { bytecode: false, assets: null });
  const withBytecode = await compiled(out, { bytecode: true, assets: null });
  const js = jsOnly - runtime;
  const bytecode = withBytecode - jsOnly;
  const assets = total - withBytecode;
  const assetFiles = existsSync(webDir) ? sizeOf(webDir) : 0;
  const gz = gzipSync(readFileSync(binary), { level: 6 }).length;
  const xz = Bun.spawnSync(["xz", "-6", "-T1", "-c", binary], { stdout: "pipe", stderr: "ignore" });

  console.log(`dist/wsync: ${MiB(total)}`);
  console.log(
    `  the Bun runtime (${process.execPath}, Bun ${Bun.version}): ${MiB(runtime)} (${((runtime / total) * 100).toFixed(0)}%)`,
  );
  console.log(`  appended payload: ${MiB(total - runtime)}, of which`);
  console.log(`    bundled JavaScript (minified: server, CLI, Ink, React, the engine): ${MiB(js)}`);
  console.log(`    its bytecode (bytecode: true, for a faster start): ${MiB(bytecode)}`);
  console.log(
    `    web assets (dist/web, ${MiB(assetFiles)} on disk: browser bundles and compressed copies): ${MiB(assets)}`,
  );
  console.log("what would shrink it:");
  console.log(`  without bytecode: ${MiB(total - bytecode)} (a slower cold start: npm run bench:bot)`);
  console.log(`  gzip -6 of the binary (a download): ${MiB(gz)}`);
  if (xz.exitCode === 0) console.log(`  xz -6 of the binary (a download): ${MiB(xz.stdout.length)}`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
