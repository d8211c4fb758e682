/**
 * Benchmark: the key backup's Argon2id (core/crypto/key-backup.ts DEFAULT_KDF) in Bun and in headless
 * Chromium, the two places it runs. Both use hash-wasm's WebAssembly Argon2 (in Chromium its UMD
 * build, the same WASM module the web bundle loads). Prints the median and range of RUNS derivations
 * each, and Bun's resident memory before and after (Argon2id allocates m KiB by construction).
 * Target (issue 11): 0.5–1 s per derivation on the reference machine.
 * Usage: npm run bench:kdf [-- --runs 5]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toBase64 } from "../../core/crypto/index.ts";
import { DEFAULT_KDF, deriveBackupKey } from "../../core/crypto/key-backup.ts";
import { launchChromium } from "../e2e/browser.ts";

const i = process.argv.indexOf("--runs");
const RUNS = i > 0 ? Number(process.argv[i + 1]) : 5;
const SECRET = "correct horse battery staple";
const salt = () => toBase64(crypto.getRandomValues(new Uint8Array(16)));

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(0);
  return `median ${f(s[Math.floor(s.length / 2)] ?? 0)} ms, min ${f(s[0] ?? 0)}, max ${f(s.at(-1) ?? 0)}`;
};
const params = `m=${DEFAULT_KDF.m} KiB (${DEFAULT_KDF.m / 1024} MiB), t=${DEFAULT_KDF.t}, p=${DEFAULT_KDF.p}`;

const rssBefore = process.memoryUsage().rss;
const bun: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  await deriveBackupKey(SECRET, { ...DEFAULT_KDF, salt: salt() });
  bun.push(performance.now() - t0);
}
const rssAfter = process.memoryUsage().rss;
console.log(`kdf: bun ${Bun.version}: argon2id ${params}: ${RUNS} runs, ${stats(bun)}`);
console.log(
  `kdf: bun memory: rss ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssAfter / 2 ** 20).toFixed(0)} MiB after (+${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB)`,
);

const umd = readFileSync(
  join(import.meta.dir, "../../node_modules/hash-wasm/dist/argon2.umd.min.js"),
  "utf8",
);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setContent("<!doctype html><title>kdf</title>");
  await page.addScriptTag({ content: umd });
  const times = await page.evaluate(
    async ({ runs, secret, m, t, p }) => {
      const w = window as unknown as {
        hashwasm: { argon2id(o: Record<string, unknown>): Promise<Uint8Array> };
      };
      const out: number[] = [];
      for (let r = 0; r < runs; r++) {
        const salt = crypto.getRandomValues(new Uint8Array(16));
        const t0 = performance.now();
        await w.hashwasm.argon2id({
          password: secret,
          salt,
          parallelism: p,
          iterations: t,
          memorySize: m,
          hashLength: 32,
          outputType: "binary",
        });
        out.push(performance.now() - t0);
      }
      return out;
    },
    { runs: RUNS, secret: SECRET, m: DEFAULT_KDF.m, t: DEFAULT_KDF.t, p: DEFAULT_KDF.p },
  );
  console.log(`kdf: chromium ${browser.version()}: argon2id ${params}: ${RUNS} runs, ${stats(times)}`);
} finally {
  await browser.close();
}
