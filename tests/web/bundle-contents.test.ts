/**
 * What the browser build ships: the web bundles (every route, every lazy chunk) hold no test-only
 * code. The deterministic randomness and its P-256 and ChaCha20 arithmetic live in
 * tests/support/fixed-randomness.ts (with @noble/curves and @noble/ciphers, dev dependencies), behind
 * core's one hook; a marker of any of them in a chunk fails this test. Sizes are the benchmark's
 * (`npm run bench:js`), not asserted here.
 */
import { expect, test } from "bun:test";
import { buildWebAssets } from "../../server/web/assets.ts";

const MARKERS = [
  "dangerouslyUseFixedRandomness",
  "keyPairFromSeed",
  "fixed-randomness",
  // The P-256 field prime as hex (any hand-written curve arithmetic carries it), and ChaCha20's
  // constant "expand 32-byte k".
  "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
  "expand 32-byte k",
  "@noble/curves",
  "@noble/ciphers",
];

test("no chunk of the browser build holds test-only crypto", async () => {
  const assets = await buildWebAssets();
  const found: string[] = [];
  let scripts = 0;
  for (const [url, asset] of assets.files) {
    if (!url.endsWith(".js")) continue;
    scripts++;
    const text = new TextDecoder().decode(asset.body);
    for (const m of MARKERS) if (text.includes(m)) found.push(`${url}: ${m}`);
  }
  expect(scripts).toBeGreaterThan(5);
  expect(found).toEqual([]);
}, 60_000);
