// Writes vectors/wsync-kat-v2.json, the known-answer vectors of every protocol v2 construction this
// project makes (see kat-v2-build.ts for the cases). Regenerate with:
//
//   npx bun tests/core/crypto/generate-kat-v2.ts
//
// It drives the implementation under the test-only fixed randomness, so it must run with
// NODE_ENV=test; it sets that itself when unset and refuses any other value. Signatures already in
// the file are kept while they still verify, so regenerating unchanged code leaves the file as it is
// (kat-v2.test.ts checks exactly that).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildKatV2 } from "./kat-v2-build.ts";

if (process.env.NODE_ENV === undefined) process.env.NODE_ENV = "test";
if (process.env.NODE_ENV !== "test") {
  console.error(`generate-kat-v2: refusing to run with NODE_ENV=${process.env.NODE_ENV} (needs "test")`);
  process.exit(1);
}

const OUT = join(import.meta.dir, "vectors", "wsync-kat-v2.json");
const previous = existsSync(OUT) ? JSON.parse(readFileSync(OUT, "utf8")) : null;
const file = await buildKatV2(previous);
writeFileSync(OUT, `${JSON.stringify(file, null, 2)}\n`);
console.log(`wrote ${OUT}`);
