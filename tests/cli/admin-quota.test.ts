/**
 * `wsync admin quota` beside a running server (issue 34, docs/decisions/quota.md), on SQLite and, with
 * WSYNC_TEST_DATABASE_URL, on PostgreSQL: the list of defaults and overrides, one account's quota and
 * use, an override set with --files and removed with --default, --json on every form; an upload refused
 * (429, naming the account's limit) once its quota is lowered and accepted again after --default, with
 * no restart; and the refusals (unknown handle: exit 4; bad numbers and bad combinations: exit 2), each
 * changing nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encryptedFileSize, FILE_CIPHER_CHUNK, newClientMsgId } from "../../core/crypto/index.ts";
import { BlobPaths } from "../../core/protocol/index.ts";
import { bytesText } from "../../server/ops/admin.ts";
import { createChannel, type Person, person } from "../server/people.ts";
import { dropAll, newDatabase, PG_URL } from "../server/pg-harness.ts";
import { type ServerProcess, startServerProcess, wsync } from "../server/server-process.ts";

const MiB = 1024 * 1024;
/** The server's default quota in these tests (WSYNC_FILE_QUOTA_MB), given to the server and the command alike. */
const LIMITS = { WSYNC_FILE_QUOTA_MB: "2", WSYNC_MAX_FILE_MB: "1" };

interface QuotaJson {
  handle: string;
  did: string;
  fileQuotaMb: number;
  fileQuotaBytes: number;
  override: boolean;
  usedBytes: number;
  defaults: { fileQuotaMb: number; maxFileMb: number };
}

function suite(backend: "SQLite" | "PostgreSQL") {
  describe(`wsync admin quota (${backend})`, () => {
    let dir: string;
    let data: string;
    let server: ServerProcess;
    let env: Record<string, string | undefined>;
    let alice: Person;
    let channelUri: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "wsync-quota-"));
      data = join(dir, "data");
      env = { ...LIMITS, WSYNC_DATABASE_URL: undefined };
      if (backend === "PostgreSQL") {
        env.WSYNC_DATABASE_URL = (await newDatabase()).url;
        env.WSYNC_JWT_SECRET = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
      }
      server = await startServerProcess(
        data,
        Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>,
      );
      alice = await person(server.url, "alice");
      channelUri = (await createChannel(server.url, alice, "public")).channel.uri;
    });

    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const admin = (...args: string[]) => wsync(["admin", ...args, "--data", data], env);
    const handle = () => alice.session.handle;

    /** Starts an upload of a file sealed to `size` ciphertext bytes: the quota is checked here. */
    const startUpload = (size: number) =>
      fetch(server.url + BlobPaths.create, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
        body: JSON.stringify({
          channelUri,
          clientMsgId: newClientMsgId(),
          size,
          chunks: size / FILE_CIPHER_CHUNK,
        }),
      });

    test("the forms: list, show, --files, --default, with --json; the running server follows", async () => {
      // Before any override: the defaults, and no overrides.
      const list0 = await admin("quota");
      expect(list0.stderr).toBe("");
      expect(list0.code).toBe(0);
      expect(list0.stdout).toBe(
        "Defaults: file quota 2 MB per user (WSYNC_FILE_QUOTA_MB), largest file 1 MB (WSYNC_MAX_FILE_MB)\nNo per-user overrides.\n",
      );
      expect(JSON.parse((await admin("quota", "--json")).stdout)).toEqual({
        defaults: { fileQuotaMb: 2, maxFileMb: 1 },
        overrides: [],
      });

      // One upload under the default quota.
      const size = encryptedFileSize(600 * 1024);
      // The numbers this test rests on: two such files fit in 2 MB, not in 1 MB.
      expect(size).toBeGreaterThan(MiB / 2);
      expect(2 * size).toBeLessThanOrEqual(2 * MiB);
      expect((await startUpload(size)).status).toBe(200);

      const shown = JSON.parse((await admin("quota", handle(), "--json")).stdout) as QuotaJson;
      expect(shown).toEqual({
        handle: handle(),
        did: alice.session.did,
        fileQuotaMb: 2,
        fileQuotaBytes: 2 * MiB,
        override: false,
        usedBytes: size,
        defaults: { fileQuotaMb: 2, maxFileMb: 1 },
      });
      const shownText = await admin("quota", handle());
      expect(shownText.stdout).toBe(
        `${handle()} (${alice.session.did}): file quota 2 MB (the default), ${bytesText(size)} used\n`,
      );

      // Lowered to 1 MB: the next upload is refused by the running server, naming that limit.
      const set = await admin("quota", handle(), "--files", "1");
      expect(set.stderr).toBe("");
      expect(set.code).toBe(0);
      expect(set.stdout).toContain(
        `Set the file quota of ${handle()} (${alice.session.did}): 1 MB (override; the default is 2 MB), was 2 MB (the default)`,
      );
      const refused = await startUpload(size);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        error: "RateLimited",
        message: "Your files use up your 1 MB quota; delete some to make room",
      });
      const afterSet = JSON.parse((await admin("quota", handle(), "--json")).stdout) as QuotaJson;
      expect(afterSet).toMatchObject({
        fileQuotaMb: 1,
        fileQuotaBytes: MiB,
        override: true,
        usedBytes: size,
      });
      // The list shows it.
      expect(JSON.parse((await admin("quota", "--json")).stdout)).toEqual({
        defaults: { fileQuotaMb: 2, maxFileMb: 1 },
        overrides: [
          { did: alice.session.did, handle: handle(), fileQuotaBytes: MiB, fileQuotaMb: 1, usedBytes: size },
        ],
      });
      const listText = (await admin("quota")).stdout.split("\n");
      expect(listText[1]).toMatch(/^HANDLE\s+DID\s+FILE QUOTA\s+USED$/);
      expect(listText[2]).toMatch(
        new RegExp(`^${handle().replaceAll(".", "\\.")}\\s+${alice.session.did}\\s+1 MB\\s+`),
      );

      // Zero: not even the smallest file; an override above the default is allowed too.
      const zero = JSON.parse((await admin("quota", handle(), "--files", "0", "--json")).stdout) as QuotaJson;
      expect(zero).toMatchObject({ fileQuotaMb: 0, fileQuotaBytes: 0, override: true });
      expect((await startUpload(FILE_CIPHER_CHUNK)).status).toBe(429);

      // --default: the server's quota applies again, at once, and the same upload is accepted.
      const back = await admin("quota", handle(), "--default");
      expect(back.code).toBe(0);
      expect(back.stdout).toContain(
        `Removed the override of ${handle()} (${alice.session.did}): 2 MB (the default), was 0 MB (override; the default is 2 MB)`,
      );
      expect((await startUpload(size)).status).toBe(200);
      expect(JSON.parse((await admin("quota", handle(), "--json")).stdout)).toMatchObject({
        fileQuotaMb: 2,
        override: false,
        usedBytes: 2 * size,
      });
      expect(JSON.parse((await admin("quota", "--json")).stdout).overrides).toEqual([]);

      // Raised above the default for one account: a third file fits now.
      const raised = await admin("quota", handle(), "--files", "3", "--json");
      expect(JSON.parse(raised.stdout)).toMatchObject({
        fileQuotaMb: 3,
        fileQuotaBytes: 3 * MiB,
        override: true,
      });
      expect(3 * size).toBeLessThanOrEqual(3 * MiB);
      expect((await startUpload(size)).status).toBe(200);
    }, 90_000);

    test("refusals: unknown handle exit 4, bad numbers and combinations exit 2, nothing changed", async () => {
      const before = JSON.parse((await admin("quota", "--json")).stdout);

      const unknown = await admin("quota", "nobody-by-that-name", "--files", "5");
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain('no account "nobody-by-that-name"');
      expect((await admin("quota", "nobody-by-that-name")).code).toBe(4);

      for (const bad of ["-1", "abc", "1.5", "1e3", "", "1000000001"]) {
        const r = await admin("quota", handle(), "--files", bad);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`--files must be a whole number of MB from 0 to 1000000000, got "${bad}"`);
        expect(r.stdout).toBe("");
      }
      const both = await admin("quota", handle(), "--files", "5", "--default");
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("give --files MB or --default, not both");
      const noHandle = await admin("quota", "--default");
      expect(noHandle.code).toBe(2);
      expect(noHandle.stderr).toContain("--default needs a handle");
      const noHandleFiles = await admin("quota", "--files", "5");
      expect(noHandleFiles.code).toBe(2);
      expect(noHandleFiles.stderr).toContain("--files needs a handle");
      // A bad server setting is named, not guessed around.
      const badEnv = await wsync(["admin", "quota", "--data", data], { ...env, WSYNC_FILE_QUOTA_MB: "lots" });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain('WSYNC_FILE_QUOTA_MB must be a number > 0, got "lots"');

      expect(JSON.parse((await admin("quota", "--json")).stdout)).toEqual(before);
    }, 90_000);
  });
}

suite("SQLite");
if (PG_URL) {
  suite("PostgreSQL");
  afterAll(() => dropAll());
} else {
  test("wsync admin quota (PostgreSQL): not run (set WSYNC_TEST_DATABASE_URL)", () => {
    console.log("wsync admin quota on PostgreSQL not run: set WSYNC_TEST_DATABASE_URL");
  });
}
