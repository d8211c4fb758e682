/**
 * Benchmark (issue 33): the time to verify one chat-key proof (a did:plc log of two operations, a
 * getRecord CAR from a 61-record repository, the record's own sig) in Bun and in headless Chromium,
 * target under 50 ms in Chromium; the size of the lazily loaded verifier bundle; and how many proofs
 * a client checks when a 50-member channel of ATProto accounts is opened, twice (each key once).
 * Data made by the reference libraries (tests/core/atproto/fixture.ts). Usage: npm run bench:atproof
 * [-- --runs 20]
 */
import { join } from "node:path";
import { checkKeyProof } from "../../core/atproto/verify.ts";
import { Keyring } from "../../core/client/keys/keyring.ts";
import { MemoryStore } from "../../core/client/store.ts";
import {
  auditLog,
  chatKey,
  fixedSource,
  makePlcAccount,
  makeRepo,
  recordCar,
  SERVER,
} from "../core/atproto/fixture.ts";
import { hasChromium, launchChromium } from "../e2e/browser.ts";

const i = process.argv.indexOf("--runs");
const RUNS = i > 0 ? Number(process.argv[i + 1]) : 20;

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1);
  return `median ${f(s[Math.floor(s.length / 2)] ?? 0)} ms, min ${f(s[0] ?? 0)}, max ${f(s.at(-1) ?? 0)}`;
};

const acct = await makePlcAccount();
const chat = await chatKey(acct.did);
const { storage, repo } = await makeRepo(acct.did, acct.signing, chat.record);
const car = await recordCar(storage, repo);
const log = auditLog(acct.did, acct.ops);
const input = { did: acct.did, publicKey: chat.identity.publicKey, server: SERVER };

const bun: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  const result = await checkKeyProof(input, fixedSource({ log, car }));
  bun.push(performance.now() - t0);
  if (result.status !== "confirmed") throw new Error(`not confirmed: ${JSON.stringify(result)}`);
}
console.log(
  `atproof: bun ${Bun.version}: verify one proof (CAR ${car.length} bytes): ${RUNS} runs, ${stats(bun)}`,
);

// A 50-member channel of ATProto accounts, opened twice: each key is checked once.
const members = await Promise.all(
  Array.from({ length: 50 }, async () => {
    const a = await makePlcAccount();
    const c = await chatKey(a.did);
    const r = await makeRepo(a.did, a.signing, c.record);
    return {
      did: a.did,
      publicKey: c.identity.publicKey,
      log: auditLog(a.did, a.ops),
      car: await recordCar(r.storage, r.repo),
    };
  }),
);
const byDid = new Map(members.map((m) => [m.did, m]));
const keyring = new Keyring(new MemoryStore());
keyring.proofSource = () => ({
  server: SERVER,
  source: {
    plcLog: async (did) => byDid.get(did)?.log ?? null,
    didDocument: async () => null,
    record: async (did) => byDid.get(did)?.car ?? null,
  },
});
const entries = members.map((m) => ({ did: m.did, publicKey: m.publicKey, atproto: true }));
const t0 = performance.now();
await keyring.pinMany(entries);
const first = keyring.proofs.checked;
const firstMs = performance.now() - t0;
await keyring.pinMany(entries);
for (const m of members) await keyring.proofs.check(m.did, m.publicKey);
console.log(
  `atproof: opening a 50-member channel: ${first} proofs checked (${firstMs.toFixed(0)} ms in bun), reopening: ${keyring.proofs.checked - first} more`,
);

const built = await Bun.build({
  entrypoints: [join(import.meta.dir, "atproto-proof-entry.ts")],
  target: "browser",
  minify: true,
});
const js = await built.outputs[0]?.text();
if (!js) throw new Error("no bundle");
const gz = Bun.gzipSync(new TextEncoder().encode(js)).length;
console.log(
  `atproof: verifier bundle (loaded lazily): ${(js.length / 1024).toFixed(0)} KiB minified, ${(gz / 1024).toFixed(0)} KiB gzip`,
);

if (!hasChromium()) {
  console.log("atproof: chromium: not installed, not measured");
} else {
  const browser = await launchChromium();
  try {
    // A loopback origin: WebCrypto (the record's P-256 sig) needs a secure context, which about:blank is not.
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response("<!doctype html><title>atproof</title>", { headers: { "content-type": "text/html" } }),
    });
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await page.addScriptTag({ content: js, type: "module" });
    await page.waitForFunction(() => "atprotoProof" in globalThis);
    const times = await page.evaluate(
      async ({ runs, input, log, car }) => {
        const v = (globalThis as unknown as { atprotoProof: { checkKeyProof: typeof checkKeyProof } })
          .atprotoProof;
        const bytes = new Uint8Array(car);
        const source = { plcLog: async () => log, didDocument: async () => null, record: async () => bytes };
        const out: number[] = [];
        for (let r = 0; r < runs; r++) {
          const t = performance.now();
          const result = await v.checkKeyProof(input, source);
          out.push(performance.now() - t);
          if (result.status !== "confirmed") throw new Error(JSON.stringify(result));
        }
        return out;
      },
      { runs: RUNS, input, log, car: [...car] },
    );
    console.log(`atproof: chromium ${browser.version()}: verify one proof: ${RUNS} runs, ${stats(times)}`);
    server.stop(true);
  } finally {
    await browser.close();
  }
}
