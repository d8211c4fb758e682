/**
 * Files from the command line (issue 31): `wsync send CHANNEL --file PATH` encrypts and uploads,
 * `read --json` shows the file (never its key), and `wsync get CHANNEL/BLOB -o PATH` by another member
 * saves the same bytes; it refuses extra arguments (exit 2) and an existing -o file unless --force.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, registerCli, tempDir } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await registerCli(t.url, "alice");
  bob = await registerCli(t.url, "bob");
  const id = (await alice.cli.ok(["create", "g", "--type", "public"])).trim().split("\n").pop()?.trim();
  await bob.cli.ok(["join", id as string]);
  // The first message after a join rotates the epoch; a text first keeps the file test about files.
  await alice.cli.ok(["send", "#g", "hello"]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  cleanupTempDirs();
});

test("send --file, read --json, get -o: the same bytes arrive; overwrite only with --force", async () => {
  const dir = tempDir();
  const src = join(dir, "report.pdf");
  const data = new Uint8Array(200_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 1) & 255;
  writeFileSync(src, data);
  const sent = JSON.parse(await alice.cli.ok(["send", "#g", "--file", src, "--json", "the", "report"])) as {
    text: string;
    file: { blob: string; name: string; size: number; mime: string };
  };
  expect(sent.text).toBe("the report");
  expect(sent.file).toMatchObject({ name: "report.pdf", size: 200_000, mime: "application/pdf" });
  const items = JSON.parse(await bob.cli.ok(["read", "#g", "--json"])) as {
    verified: boolean;
    file: Record<string, unknown> | null;
  }[];
  const item = items.find((i) => i.file?.blob === sent.file.blob);
  expect(item?.verified).toBe(true);
  expect(Object.keys(item?.file ?? {})).not.toContain("key");
  expect(await bob.cli.ok(["read", "#g"])).toContain(`[file report.pdf (195 KB) blob ${sent.file.blob}]`);

  const out = join(dir, "got.pdf");
  const piped = await bob.cli.run(["get", `#g/${sent.file.blob}`, "-o", out]);
  expect(piped.code).toBe(0);
  // Piped: no progress bar, only the closing line.
  expect(piped.stderr).not.toContain("Receiving");
  expect(piped.stderr).toContain("Saved report.pdf (200000 bytes)");
  expect(new Uint8Array(readFileSync(out))).toEqual(data);

  writeFileSync(out, "keep me");
  const again = await bob.cli.run(["get", `#g/${sent.file.blob}`, "-o", out]);
  expect(again.code).toBe(8);
  expect(again.stderr).toContain("--force");
  expect(readFileSync(out, "utf8")).toBe("keep me");
  await bob.cli.ok(["get", `#g/${sent.file.blob}`, "-o", out, "--force"]);
  expect(new Uint8Array(readFileSync(out))).toEqual(data);

  expect((await bob.cli.run(["get", `#g/${sent.file.blob}`, "extra", "-o", out])).code).toBe(2);
  expect((await bob.cli.run(["get", "#g/not-a-blob", "-o", out])).code).toBe(2);
  expect((await bob.cli.run(["get", `#g/${"0".repeat(32)}`, "-o", join(dir, "none")])).code).toBe(4);
}, 120_000);

test("get draws a progress bar on a terminal (a pseudo-terminal from script(1))", async () => {
  const dir = tempDir();
  const src = join(dir, "big.bin");
  writeFileSync(src, new Uint8Array(300_000).fill(7));
  const sent = JSON.parse(await alice.cli.ok(["send", "#g", "--file", src, "--json"])) as {
    file: { blob: string };
  };
  const out = join(dir, "big-got.bin");
  const q = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, "cli/main.ts", "get", `#g/${sent.file.blob}`, "-o", out]
    .map(q)
    .join(" ");
  const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], {
    cwd: bob.cli.cwd,
    env: { ...process.env, XDG_CONFIG_HOME: bob.cli.configHome, WSYNC_SERVER: t.url },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [tty, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(tty).toContain("Receiving big.bin [");
  expect(tty).toContain("[####################] 100%");
  expect(new Uint8Array(readFileSync(out))).toEqual(new Uint8Array(300_000).fill(7));
}, 60_000);
