/**
 * `wsync backup` while the server runs under write load, `wsync restore` into an empty folder, and a
 * server started on the restored folder (issue 34): every message acknowledged before the backup
 * began is there, readable by its member (the JWT secret came along: the old token still works);
 * messages acknowledged after the backup finished are not (it is a snapshot). A non-empty data folder
 * and a damaged backup are refused before anything is written.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decryptMessage } from "../../core/crypto/message.ts";
import { Collections, type MessageRecord } from "../../core/protocol/index.ts";
import { TestSocket } from "../server/harness.ts";
import { allRecords, createChannel, person, seal } from "../server/people.ts";
import { type ServerProcess, startServerProcess, wsync } from "../server/server-process.ts";

const dirs: string[] = [];
const servers: ServerProcess[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("backup under write load, restore, start: every message acknowledged before the backup is there and readable", async () => {
  const dataA = tmp("wsync-bk-a-");
  const a = await startServerProcess(dataA);
  servers.push(a);
  const alice = await person(a.url, "alice");
  const created = await createChannel(a.url, alice, "public");
  const epoch = { epochId: created.epochId, epochKey: created.epochKey, epochNumber: 1 };
  const socket = await TestSocket.connect(a.wsUrl, alice.token);
  await socket.request("channel:join", { channelUri: created.channel.uri });

  const acked: { text: string; seq: number }[] = [];
  let writing = true;
  let n = 0;
  const writer = (async () => {
    while (writing) {
      const text = `message ${++n}`;
      const f = await socket.request("channel:message", await seal(alice, created.channel, epoch, text));
      if (f.type !== "ack") throw new Error(`send refused: ${JSON.stringify(f.data)}`);
      acked.push({ text, seq: (f.data.record as { seq: number }).seq });
    }
  })();
  while (acked.length < 50) await Bun.sleep(5);

  const out = join(tmp("wsync-bk-out-"), "backup");
  const before = acked.length;
  const backup = await wsync(["backup", "--to", out, "--data", dataA]);
  const after = acked.length;
  // Messages kept being acknowledged while the backup ran (it is an online backup).
  expect(after).toBeGreaterThan(before);
  expect(backup.stderr).toContain("holds the server's JWT secret");
  expect(backup.code).toBe(0);
  expect(backup.stdout).toMatch(/^Backed up to .*: 1 accounts, 1 channels, \d+ timeline records/);
  // And after it finished, so the last ones cannot be in the copy.
  while (acked.length < after + 20) await Bun.sleep(5);
  writing = false;
  await writer;
  socket.close();
  const lateSeqs = acked.slice(acked.length - 5).map((m) => m.seq);

  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
  expect(manifest.files.map((f: { path: string }) => f.path).sort()).toEqual(["jwt-secret", "wsync.db"]);
  expect(manifest.jwtSecret).toBe("included");

  // A non-empty data folder is refused, and left as it was.
  const busy = tmp("wsync-bk-busy-");
  writeFileSync(join(busy, "keep.txt"), "mine");
  const refused = await wsync(["restore", "--from", out, "--data", busy]);
  expect(refused.code).toBe(8);
  expect(refused.stderr).toContain("is not empty");
  expect(readdirSync(busy)).toEqual(["keep.txt"]);

  const dataB = join(tmp("wsync-bk-b-"), "data");
  const restored = await wsync(["restore", "--from", out, "--data", dataB]);
  expect(restored.stderr).toBe("");
  expect(restored.code).toBe(0);
  expect(restored.stdout).toContain("every checksum matches");

  await a.stop();
  const b = await startServerProcess(dataB);
  servers.push(b);
  // The same secret: alice's token from before the backup is still good.
  const records = (await allRecords(b.url, alice, created.channel.uri)).filter(
    (r): r is MessageRecord => r.value.$type === Collections.message,
  );
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  for (const m of acked.slice(0, before)) {
    const r = bySeq.get(m.seq);
    expect(r).toBeDefined();
    const opened = await decryptMessage({
      contentJson: (r as MessageRecord).value.content,
      channelId: created.channel.id,
      recordAuthorDid: alice.session.did,
      epochKey: created.epochKey,
      senderPublicKey: alice.publicKey,
    });
    expect(opened.plaintext).toEqual({ type: "text", text: m.text });
  }
  for (const seq of lateSeqs) expect(bySeq.has(seq)).toBe(false);
}, 120_000);

test("a .tar.gz backup restores; a damaged one is refused before anything is written", async () => {
  const dataA = tmp("wsync-bk-c-");
  const a = await startServerProcess(dataA);
  servers.push(a);
  const alice = await person(a.url, "alice");
  await createChannel(a.url, alice, "public");
  // A blob folder (encrypted files) under the data folder comes along.
  const { mkdirSync } = await import("node:fs");
  mkdirSync(join(dataA, "blobs", "ab"), { recursive: true });
  writeFileSync(join(dataA, "blobs", "ab", "abcdef"), "ciphertext bytes");
  const file = join(tmp("wsync-bk-f-"), "wsync.tar.gz");
  const r = await wsync(["backup", "--to", file, "--data", dataA, "--json"]);
  expect(r.code).toBe(0);
  const manifest = JSON.parse(r.stdout);
  expect(manifest.files.map((f: { path: string }) => f.path)).toContain("blobs/ab/abcdef");
  expect(manifest.counts.accounts).toBe(1);
  await a.stop();

  const dataB = join(tmp("wsync-bk-d-"), "data");
  const fromTar = await wsync(["restore", "--from", file, "--data", dataB]);
  expect(fromTar.stderr).toBe("");
  expect(fromTar.code).toBe(0);
  expect(readFileSync(join(dataB, "blobs", "ab", "abcdef"), "utf8")).toBe("ciphertext bytes");
  expect(readFileSync(join(dataB, "jwt-secret"), "utf8")).toBe(
    readFileSync(join(dataA, "jwt-secret"), "utf8"),
  );

  // Damage the folder form of a backup: one byte of the secret.
  const dir = join(tmp("wsync-bk-g-"), "b");
  expect((await wsync(["backup", "--to", dir, "--data", dataA])).code).toBe(0);
  const secret = readFileSync(join(dir, "jwt-secret"), "utf8");
  writeFileSync(join(dir, "jwt-secret"), `${secret[0] === "A" ? "B" : "A"}${secret.slice(1)}`);
  const dataC = join(tmp("wsync-bk-h-"), "data");
  const bad = await wsync(["restore", "--from", dir, "--data", dataC]);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("jwt-secret does not match its checksum");
  expect(existsSync(dataC)).toBe(false);
}, 120_000);

test("backup and restore refuse extra arguments and PostgreSQL (pg_dump instead) with exit 2", async () => {
  expect((await wsync(["backup", "--to", "/tmp/x", "extra"])).code).toBe(2);
  expect((await wsync(["restore", "--from", "/tmp/x", "extra"])).code).toBe(2);
  const pg = await wsync(["backup", "--to", "/tmp/x"], {
    WSYNC_DATABASE_URL: "postgres://u:p@127.0.0.1:9/db",
  });
  expect(pg.code).toBe(2);
  expect(pg.stderr).toContain("pg_dump");
  expect(pg.stderr).not.toContain("u:p");
});
