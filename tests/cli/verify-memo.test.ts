/**
 * The CLI's memo of verified message signatures (cli/verify-memo.ts, docs/decisions/verify-memo.md):
 * a file of SHA-256 digests beside the store file, 0600, read once and appended to; a torn file is
 * not read; past its bound the oldest digests go. End to end: a second `read` prints the same rows
 * and adds nothing to the file; logout removes it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileVerifyMemo, VERIFY_MEMO_MAX, verifyMemoPath } from "../../cli/verify-memo.ts";
import { signedUp } from "../core/client/engine-harness.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, registerCli, tempDir } from "./cli-harness.ts";

afterAll(cleanupTempDirs);

const digest = () => new Uint8Array(randomBytes(32));

describe("the memo file", () => {
  test("what one process adds, the next reads; the file is 0600 and holds whole digests", () => {
    const path = join(tempDir("wsync-memo-"), "localhost_3000.verified");
    const first = new FileVerifyMemo(path);
    const a = digest();
    const b = digest();
    expect(first.has(a)).toBe(false);
    first.add(a);
    first.add(b);
    first.add(a);
    first.flush();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(path).size).toBe(64);
    const next = new FileVerifyMemo(path);
    expect(next.has(a)).toBe(true);
    expect(next.has(b)).toBe(true);
    expect(next.has(digest())).toBe(false);
    // Appended, not rewritten: a third process sees both processes' digests.
    const c = digest();
    next.add(c);
    next.flush();
    expect(statSync(path).size).toBe(96);
    expect(new FileVerifyMemo(path).has(c)).toBe(true);
  });

  test("a file cut short is not read, and is written anew", () => {
    const path = join(tempDir("wsync-memo-"), "localhost_3000.verified");
    const kept = digest();
    writeFileSync(path, kept, { mode: 0o600 });
    appendFileSync(path, new Uint8Array(10));
    const memo = new FileVerifyMemo(path);
    expect(memo.has(kept)).toBe(false);
    const fresh = digest();
    memo.add(fresh);
    memo.flush();
    expect(statSync(path).size).toBe(32);
    expect(new Uint8Array(readFileSync(path))).toEqual(fresh);
  });

  test(`past ${VERIFY_MEMO_MAX} digests the oldest go`, () => {
    const path = join(tempDir("wsync-memo-"), "localhost_3000.verified");
    const all = randomBytes(32 * VERIFY_MEMO_MAX);
    writeFileSync(path, all, { mode: 0o600 });
    const memo = new FileVerifyMemo(path);
    const oldest = new Uint8Array(all.subarray(0, 32));
    const second = new Uint8Array(all.subarray(32, 64));
    expect(memo.has(oldest)).toBe(true);
    const newest = digest();
    memo.add(newest);
    memo.flush();
    expect(statSync(path).size).toBe(32 * VERIFY_MEMO_MAX);
    const again = new FileVerifyMemo(path);
    expect(again.has(oldest)).toBe(false);
    expect(again.has(second)).toBe(true);
    expect(again.has(newest)).toBe(true);
  });
});

describe("read with the memo", () => {
  let t: TestServer;
  let reader: CliUser;
  let channelId: string;

  beforeAll(async () => {
    t = await startTestServer({ env: NO_WRITE_LIMITS });
    reader = await registerCli(t.url, "reader");
    channelId = (await reader.cli.ok(["create", "memo", "--type", "public"])).trim();
    const writer = await signedUp(t.url, "writer");
    await writer.client.open(channelId);
    for (let i = 1; i <= 30; i++) await writer.client.send(channelId, `message ${i}`);
    writer.client.disconnect();
  });
  afterAll(async () => {
    await t.stop();
  });

  const memoFile = () =>
    verifyMemoPath(join(reader.cli.configHome, "wsync", `localhost_${new URL(t.url).port}.json`));

  test("a second read prints the same verified rows and verifies nothing new; logout removes the file", async () => {
    const first = await reader.cli.ok(["read", channelId, "--limit", "100"]);
    expect(first.match(/ ✓ message \d+/g)).toHaveLength(30);
    // One digest per message another member signed (the reader's own epoch commits are not messages).
    expect(statSync(memoFile()).size).toBe(30 * 32);
    const second = await reader.cli.ok(["read", channelId, "--limit", "100"]);
    expect(second).toBe(first);
    expect(statSync(memoFile()).size).toBe(30 * 32);
    await reader.cli.ok(["logout", "--yes"]);
    expect(existsSync(memoFile())).toBe(false);
  });
});
