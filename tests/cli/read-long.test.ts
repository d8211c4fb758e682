/**
 * `wsync read` of more than one server page, printed through a pipe: every row arrives, in order,
 * however much is written (a process that exits before its pipe drains used to cut the output at
 * 64 KiB), and `api read` takes the same larger limit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signedUp } from "../core/client/engine-harness.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, registerCli } from "./cli-harness.ts";

const COUNT = 150;
// Long enough that the printed rows are several times a pipe's 64 KiB buffer.
const FILLER = "lorem ipsum dolor sit amet ".repeat(60);

let t: TestServer;
let reader: CliUser;
let channelId: string;
let writerHandle: string;

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  reader = await registerCli(t.url, "reader");
  channelId = (await reader.cli.ok(["create", "long-read", "--type", "public"])).trim();
  const writer = await signedUp(t.url, "writer");
  writerHandle = writer.handle;
  await writer.client.open(channelId);
  for (let i = 1; i <= COUNT; i++) await writer.client.send(channelId, `message ${i} ${FILLER}`);
  writer.client.disconnect();
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

// The channel's rows: the signed epoch change that let the writer in (placed before everything, at
// seq 0.25), the server's notice of the join (seq 1), then the 150 messages.
test("read --limit over one page prints every row through a pipe, oldest first", async () => {
  const out = await reader.cli.ok(["read", channelId, "--limit", String(COUNT + 1)], { timeoutMs: 120_000 });
  expect(out.length).toBeGreaterThan(3 * 64 * 1024);
  const lines = out.trimEnd().split("\n");
  expect(lines).toHaveLength(COUNT + 1);
  expect(lines[0]).toContain(`→ ${writerHandle} joined`);
  const numbers = lines
    .slice(1)
    .map((l) => Number(new RegExp(`${writerHandle} ✓ message (\\d+) `).exec(l)?.[1]));
  expect(numbers).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
});

test("read --json with a limit between pages gives exactly that many items", async () => {
  const items = JSON.parse(await reader.cli.ok(["read", channelId, "--limit", "123", "--json"])) as {
    kind: string;
    text: string;
  }[];
  expect(items).toHaveLength(123);
  // The newest 123 rows are messages: the epoch row that stands before all loaded records is older
  // than they are, and is not counted while older history is on the server.
  expect(items.map((i) => i.kind)).toEqual(Array(123).fill("message"));
  expect(items.at(-1)?.text.startsWith(`message ${COUNT} `)).toBe(true);
  expect(items[0]?.text.startsWith(`message ${COUNT - 122} `)).toBe(true);
});

test("read and api read refuse a limit over 10,000", async () => {
  const r = await reader.cli.run(["read", channelId, "--limit", "10001"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("--limit must be 1 to 10000");
});

test("api read takes the same limit: the whole history in one answer", async () => {
  const input = [
    { id: 1, method: "read", params: { channel: channelId, limit: COUNT + 1 } },
    { id: 2, method: "read", params: { channel: channelId, limit: 10_001 } },
  ]
    .map((r) => JSON.stringify(r))
    .join("\n");
  const out = (await reader.cli.ok(["api"], { stdin: `${input}\n`, timeoutMs: 120_000 }))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; ok: boolean; result?: { text: string }[]; error?: unknown });
  const whole = out.find((a) => a.id === 1);
  expect(whole?.ok).toBe(true);
  expect(whole?.result).toHaveLength(COUNT + 1);
  expect(whole?.result?.[1]?.text.startsWith("message 1 ")).toBe(true);
  expect(out.find((a) => a.id === 2)).toMatchObject({ ok: false });
});
