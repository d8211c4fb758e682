// Writes tests/vectors/protocol-v3-project.json, the known-answer vectors of every protocol v3
// construction this project makes (see kat-v3-build.ts for the cases). Regenerate with:
//
//   npx bun tests/core/crypto/generate-kat-v3.ts
//
// It drives the implementation under the test-only fixed randomness, so it must run with
// NODE_ENV=test; it sets that itself when unset and refuses any other value. Signatures already in
// the file are kept while they still verify, so regenerating unchanged code leaves the file as it is
// (kat-v3.test.ts checks exactly that).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildKatV3 } from "./kat-v3-build.ts";

if (process.env.NODE_ENV === undefined) process.env.NODE_ENV = "test";
if (process.env.NODE_ENV !== "test") {
  console.error(`generate-kat-v3: refusing to run with NODE_ENV=${process.env.NODE_ENV} (needs "test")`);
  process.exit(1);
}

const OUT = join(import.meta.dir, "..", "..", "vectors", "protocol-v3-project.json");
const previous = existsSync(OUT) ? JSON.parse(readFileSync(OUT, "utf8")) : null;
const file = await buildKatV3(previous);
writeFileSync(OUT, `${JSON.stringify(file, null, 2)}\n`);
console.log(`wrote ${OUT}`);
