/**
 * The quick subset of the fault suite (docs/reliability.md, `npm run faults` for all of it): kill -9
 * twice under load, a 100-socket reconnect storm, epochs and sends at once, a short fixed-seed
 * fuzz. Each calls the same code as the full suite with small parameters.
 */
import { expect, test } from "bun:test";
import { formatResult } from "../faults/lib.ts";
import { quickParts, runPart } from "../faults/run.ts";

for (const part of quickParts) {
  test(
    `fault: ${part.name}`,
    async () => {
      const r = await runPart(part);
      console.log(formatResult(r));
      expect(r.failures).toEqual([]);
    },
    part.limitMs + 15_000,
  );
}
