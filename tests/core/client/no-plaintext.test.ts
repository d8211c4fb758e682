/**
 * The server never holds a plaintext, an epoch key or a private key: three real engines hold a whole
 * conversation (create, join by link, invite and join, leave, rotate, many messages, a deletion), then
 * the server's SQLite files (database, WAL, shared memory) are scanned for every secret the clients
 * had, in every encoding a careless implementation might store it in.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import type { MemoryStore } from "../../../core/client/index.ts";
import { fromBase64, toBase64, toBase64Url, toHex, utf8 } from "../../../core/crypto/index.ts";
import { startTestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

const unpadded = (s: string) => s.replace(/=+$/, "");

/** Raw bytes, hex (both cases), base64 and base64url (without padding, so unpadded copies match too). */
function encodings(secret: Uint8Array | string): string[] {
  const bytes = typeof secret === "string" ? utf8(secret) : secret;
  const out = [
    toHex(bytes),
    toHex(bytes).toUpperCase(),
    unpadded(toBase64(bytes)),
    unpadded(toBase64Url(bytes)),
    Buffer.from(bytes).toString("latin1"),
  ];
  if (typeof secret === "string") out.push(secret);
  return out;
}

/** Every epoch key a client holds, from its store (`wsync-epochs:*`, base64url in symmetricKeyJwk.k). */
function epochKeys(store: MemoryStore): { epochId: string; key: Uint8Array }[] {
  const out: { epochId: string; key: Uint8Array }[] = [];
  for (const [k, v] of store.data) {
    if (!k.startsWith("wsync-epochs:")) continue;
    for (const e of JSON.parse(v) as { epochId: string; symmetricKeyJwk: { k: string } }[]) {
      out.push({ epochId: e.epochId, key: fromBase64(e.symmetricKeyJwk.k) });
    }
  }
  return out;
}

/** The private scalar d of a PKCS8 P-256 key (what a leak of the key would have to contain). */
async function privateScalar(pkcs8B64: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "pkcs8",
    fromBase64(pkcs8B64),
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", key);
  return fromBase64(jwk.d as string);
}

test("after a real three-engine conversation, no plaintext, epoch key or private key is in the database", async () => {
  const t = await startTestServer();
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const c = await signedUp(t.url, "carol");
  const name = `np-${crypto.randomUUID().slice(0, 8)}`;
  const plaintexts: string[] = [];
  const say = async (who: typeof a, text: string) => {
    plaintexts.push(text);
    return who.client.send(channelId, text);
  };

  // create, join by link, invite + join
  const { channel, link } = await a.client.createChannel({ name, type: "secret" });
  const channelId = channel.id;
  const joinToken = (link as string).split("#")[1] as string;
  await a.client.open(channelId);
  await b.client.join(link as string);
  await a.client.invite(channelId, c.handle);
  await c.client.join(channelId);

  // many messages from everyone
  const people = [a, b, c];
  for (let i = 0; i < 30; i++) {
    await say(people[i % 3] as typeof a, `canary ${i} ${crypto.randomUUID()} meet at the old mill at ${i}pm`);
  }
  await until(() => texts(c.client, channelId).length === 30, 10000, "carol has 30");

  // bob leaves; the next send rotates; then an explicit rotation, and more messages
  await b.client.leave(channelId);
  await until(() => a.client.view(channelId)?.members.length === 2, 5000, "alice sees bob leave");
  await say(a, `after bob left ${crypto.randomUUID()}`);
  await a.client.rotate(channelId);
  for (let i = 0; i < 10; i++) {
    await say(i % 2 ? a : c, `later ${i} ${crypto.randomUUID()} the password is swordfish-${i}`);
  }
  // one deletion
  const doomed = await say(a, `delete me ${crypto.randomUUID()}`);
  await a.client.deleteMessage(doomed.uri);
  // v2 keeps a signed deletion in the timeline as "deleted by alice", with its text gone.
  await until(
    () => c.client.view(channelId)?.items.some((i) => i.uri === doomed.uri && i.deleted?.signed) ?? false,
    5000,
    "deletion seen",
  );
  await until(() => texts(c.client, channelId).length === 42, 10000, "carol has the rest");
  const shown = (c.client.view(channelId)?.items ?? []).filter((i) => i.kind === "message");
  expect(shown.find((i) => i.uri === doomed.uri)?.text).toBeNull();
  expect(shown.filter((i) => i.uri !== doomed.uri).every((i) => i.text !== null)).toBe(true);

  const keys = [a, b, c].flatMap((p) => epochKeys(p.store));
  // Every epoch made along the way: 1 (create), 2 (bob), 3 (carol), 4 (leave), 5 (rotate).
  expect(new Set(keys.map((k) => k.epochId)).size).toBe(5);
  const privateKeys = [a, b, c].map((p) => p.keys.privateKey);
  const scalars = await Promise.all(privateKeys.map(privateScalar));

  for (const p of [a, b, c]) p.client.disconnect();
  await t.services.storage.close();
  const files = ["", "-wal", "-shm"].map((s) => t.config.sqlitePath + s).filter((f) => existsSync(f));
  expect(files).toContain(t.config.sqlitePath);
  const blob = Buffer.concat(files.map((f) => readFileSync(f))).toString("latin1");

  // The scan works: what the server is meant to hold is found.
  expect(blob).toContain(name);
  for (const k of keys) expect(blob).toContain(k.epochId);
  expect(blob).toContain(a.keys.publicKey);
  expect(blob).toContain(a.did);

  const secrets: { what: string; value: Uint8Array | string }[] = [
    ...plaintexts.map((value, i) => ({ what: `plaintext ${i}`, value })),
    { what: "plaintext fragment", value: "meet at the old mill" },
    { what: "plaintext fragment", value: "swordfish" },
    ...keys.map((k) => ({ what: `epoch key ${k.epochId}`, value: k.key })),
    ...privateKeys.map((value, i) => ({ what: `private key ${i} (text)`, value })),
    ...privateKeys.map((k, i) => ({ what: `private key ${i} (pkcs8)`, value: fromBase64(k) })),
    ...scalars.map((value, i) => ({ what: `private scalar ${i}`, value })),
    { what: "join token", value: joinToken },
  ];
  const found = secrets.flatMap((s) =>
    encodings(s.value)
      .filter((enc) => blob.includes(enc))
      .map((enc) => `${s.what} as ${enc.slice(0, 16)}…`),
  );
  expect(found).toEqual([]);
  await t.stop().catch(() => undefined);
}, 60_000);
