/**
 * The layer rules hold by a check, not by habit: core imports no platform (Bun, Node, React, Elysia,
 * the DOM), web never imports server, nothing outside tests imports tests, frame names and API paths
 * are spelled only in core/protocol, and no product file is in an import cycle. The same check is run
 * on planted violations, so it is known to fire.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { WsEvent } from "../../core/protocol/index.ts";
import { checkLayers } from "./layers.ts";

const ROOT = `${import.meta.dir}/../..`;
const frameNames = Object.values(WsEvent);

function productFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const tracked = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
  })
    .stdout.toString()
    .split("\n");
  for (const f of tracked) {
    if (!/\.(ts|tsx)$/.test(f) || f.startsWith("node_modules/")) continue;
    if (!/^(core|server|web|cli|bench|scripts|tests)\//.test(f)) continue;
    try {
      files.set(f, readFileSync(`${ROOT}/${f}`, "utf8"));
    } catch {
      // Deleted in the working tree but still in the index.
    }
  }
  return files;
}

test("the tree keeps the layer rules and has no import cycle", () => {
  const files = productFiles();
  expect(files.size).toBeGreaterThan(300);
  // The product: core, server, web, cli and scripts. Tests and the benchmark suite (bench/, which
  // drives a server with the tests' harness) are tooling: no cycles among the product's files, and
  // the tooling keeps every rule but may import tests' helpers and form cycles among them.
  const tooling = (f: string) => f.startsWith("tests/") || f.startsWith("bench/");
  const product = new Map([...files].filter(([f]) => !tooling(f)));
  const tests = new Map([...files].filter(([f]) => tooling(f)));
  expect(checkLayers(product, frameNames)).toEqual([]);
  expect(
    checkLayers(tests, frameNames).filter(
      (v) => v.rule !== "cycle" && v.rule !== "imports-tests" && v.rule !== "protocol-names",
    ),
  ).toEqual([]);
});

test("each rule fires on a planted violation", () => {
  const planted = new Map<string, string>([
    [
      "core/client/bad-platform.ts",
      `import { Database } from "bun:sqlite";\nimport { readFileSync } from "node:fs";`,
    ],
    ["core/client/bad-dom.ts", "export const x = () => window.location.href;"],
    ["web/features/bad.tsx", `import { startServer } from "../../server/main.ts";`],
    ["cli/bad.ts", `import { harness } from "../tests/server/harness.ts";`],
    ["server/bad-frame.ts", `export const f = { type: "channel:typing" };`],
    ["web/bad-path.ts", `fetch("/api/board/weather");`],
    ["core/a.ts", `import { b } from "./b.ts";\nexport const a = 1;`],
    ["core/b.ts", `import type { a } from "./a.ts";\nexport const b = 2;`],
    // Allowed: a comment that quotes a rule, a type import of core from web, protocol's own names.
    ["core/protocol/events-copy.ts", `export const t = "channel:typing";`],
    ["core/client/fine.ts", `// window.location is never read here\nimport { x } from "../crypto/index.ts";`],
  ]);
  const rules = checkLayers(planted, frameNames).map((v) => `${v.rule} ${v.file}`);
  expect(rules.sort()).toEqual(
    [
      "core-platform core/client/bad-platform.ts",
      "core-platform core/client/bad-platform.ts",
      "core-dom core/client/bad-dom.ts",
      "web-server web/features/bad.tsx",
      "imports-tests cli/bad.ts",
      "protocol-names server/bad-frame.ts",
      "protocol-names web/bad-path.ts",
      "cycle core/a.ts",
    ].sort(),
  );
});
