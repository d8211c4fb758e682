/**
 * What the browser build ships: the web bundles (every route, every lazy chunk) hold no test-only
 * code. The deterministic randomness and its P-256 and ChaCha20 arithmetic live in
 * tests/support/fixed-randomness.ts (with @noble/ciphers, a dev dependency), behind core's one hook; a
 * marker of any of them in a chunk fails this test. One chunk may carry P-256 arithmetic: the lazily
 * loaded ATProto proof verifier (core/atproto), which checks PLC and repository signatures on both of
 * ATProto's curves with @noble/curves (a production dependency since issue 33); it is told by the
 * PLC operation type it verifies ("plc_operation", with "did:key:"; the lexicon name moved to a chunk
 * shared with the proof publisher), and must still hold none of the test-only markers. Sizes are the
 * benchmark's (`npm run bench:js`), not asserted here.
 */
import { expect, test } from "bun:test";
import { gunzipSync, gzipSync } from "node:zlib";
import { buildWebAssets, gzipAsset } from "../../server/web/assets.ts";

const P256_PRIME = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff";
const MARKERS = [
  "dangerouslyUseFixedRandomness",
  "keyPairFromSeed",
  "fixed-randomness",
  // The P-256 field prime as hex (any hand-written curve arithmetic carries it), and ChaCha20's
  // constant "expand 32-byte k".
  P256_PRIME,
  "expand 32-byte k",
  "@noble/curves",
  "@noble/ciphers",
];
/** Only the ATProto proof verifier's chunk may hold P-256 arithmetic (see above). */
const ATPROTO_VERIFIER = "plc_operation";

test("no chunk of the browser build holds test-only crypto", async () => {
  const assets = await buildWebAssets();
  const found: string[] = [];
  let scripts = 0;
  let verifiers = 0;
  for (const [url, asset] of assets.files) {
    if (!url.endsWith(".js")) continue;
    scripts++;
    const text = new TextDecoder().decode(asset.body);
    const verifier = text.includes(ATPROTO_VERIFIER) && text.includes("did:key:");
    if (verifier) verifiers++;
    for (const m of MARKERS) {
      if (m === P256_PRIME && verifier) continue;
      if (text.includes(m)) found.push(`${url}: ${m}`);
    }
  }
  expect(scripts).toBeGreaterThan(5);
  expect(found).toEqual([]);
  // The exception covers one lazily loaded chunk, not the pages' own scripts.
  expect(verifiers).toBeLessThanOrEqual(1);
}, 60_000);

test("every script's gzip form is a standard gzip stream of its body, smaller than zlib's best", async () => {
  const assets = await buildWebAssets();
  let zlibBest = 0;
  let served = 0;
  for (const [url, asset] of assets.files) {
    if (!url.endsWith(".js")) continue;
    // Node's own gunzip reads it back byte for byte, as a browser's would.
    expect(Buffer.from(gunzipSync(asset.gzip)).equals(Buffer.from(asset.body))).toBe(true);
    zlibBest += gzipSync(asset.body, { level: 9 }).length;
    served += asset.gzip.length;
  }
  // libdeflate's level 12 (gzipAsset): if a Bun upgrade stopped honouring it, this says so.
  expect(served).toBeLessThan(zlibBest);
  expect(gzipAsset(new TextEncoder().encode("wsync ".repeat(100))).length).toBeLessThan(60);
}, 60_000);
