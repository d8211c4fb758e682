/**
 * The CLI's memo of verified message signatures (cli/verify-memo.ts, docs/decisions/verify-memo.md):
 * a file of SHA-256 digests in byte order beside the store file, 0600, read whole and merged into; a
 * torn file is not read; past its bound every other old digest goes. End to end: a second `read`
 * prints the same rows and adds nothing to the file; logout removes it.
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
    // Merged: a third process sees both processes' digests.
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

  test(`past ${VERIFY_MEMO_MAX} digests every other old one goes, the new ones stay`, () => {
    const path = join(tempDir("wsync-memo-"), "localhost_3000.verified");
    const old = Array.from({ length: VERIFY_MEMO_MAX }, () => Buffer.from(digest())).sort(Buffer.compare);
    writeFileSync(path, Buffer.concat(old), { mode: 0o600 });
    const memo = new FileVerifyMemo(path);
    expect(memo.has(old[0] as Buffer)).toBe(true);
    expect(memo.has(old[1] as Buffer)).toBe(true);
    const newest = digest();
    memo.add(newest);
    memo.flush();
    expect(statSync(path).size).toBe(32 * (VERIFY_MEMO_MAX / 2 + 1));
    const again = new FileVerifyMemo(path);
    expect(again.has(old[0] as Buffer)).toBe(true);
    expect(again.has(old[1] as Buffer)).toBe(false);
    expect(again.has(old[2] as Buffer)).toBe(true);
    expect(again.has(newest)).toBe(true);
  });

  test("two processes that verified at once both keep what they verified", () => {
    const path = join(tempDir("wsync-memo-"), "localhost_3000.verified");
    const a = new FileVerifyMemo(path);
    const b = new FileVerifyMemo(path);
    const fromA = [digest(), digest()];
    const fromB = [digest(), digest(), digest()];
    expect(a.has(fromB[0] as Uint8Array)).toBe(false);
    expect(b.has(fromA[0] as Uint8Array)).toBe(false);
    for (const d of fromA) a.add(d);
    for (const d of fromB) b.add(d);
    a.flush();
    b.flush();
    const next = new FileVerifyMemo(path);
    for (const d of [...fromA, ...fromB]) expect(next.has(d)).toBe(true);
    expect(statSync(path).size).toBe(5 * 32);
    const bytes = readFileSync(path);
    const sorted = Array.from({ length: 5 }, (_, k) => bytes.subarray(k * 32, k * 32 + 32)).sort(
      Buffer.compare,
    );
    expect(Buffer.concat(sorted).equals(bytes)).toBe(true);
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
