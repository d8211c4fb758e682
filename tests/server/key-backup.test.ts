/**
 * The encrypted key backup on the server (docs/key-backup.md: PUT/GET/DELETE /api/keys/backup),
 * against a real test server. Browser cookie sessions: cookie-session.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateIdentity, toBase64 } from "../../core/crypto/index.ts";
import { type KeyBackup, openKeyBackup, sealKeyBackup } from "../../core/crypto/key-backup.ts";
import { API_BASE, Routes } from "../../core/protocol/index.ts";
import { DEFAULT_RATES } from "../../server/services/rate-limit.ts";
import { call, ManualClock, ok, startTestServer, type TestServer } from "./harness.ts";
import { type Person, person } from "./people.ts";

/** The floor of the client's bounds: the server only checks the shape, so tests seal cheaply. */
const CHEAP = { m: 19_456, t: 2, p: 1 } as const;
const PASSPHRASE = "correct horse battery staple";
const PASSWORD = "correct horse battery";
const BACKUP = API_BASE + Routes.keyBackupPut.path;

let t: TestServer;
const clock = new ManualClock();
/** Every blob a test sealed: none of their secrets-bearing fields may ever reach the server's log. */
const sealedBlobs: KeyBackup[] = [];

beforeAll(async () => {
  // Default limits: the backup bucket is the one under test (burst 10, then 1 per minute).
  t = await startTestServer({ clock });
});
afterAll(() => t.stop());

interface Answer {
  status: number;
  body: { error?: string; message?: string } & Record<string, unknown>;
  headers: Headers;
}

/** One request to the backup route (the harness's `call` sends a body only with POST). */
async function backup(
  method: "PUT" | "GET" | "DELETE",
  opts: { token?: string; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const res = await fetch(t.url + BACKUP, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: Answer["body"];
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** `who`'s private key sealed for `did` (their own unless given). */
async function seal(who: { privateKey: string; session: { did: string } }, did = who.session.did) {
  const b = await sealKeyBackup({
    did,
    privateKey: who.privateKey,
    kind: "passphrase",
    secret: PASSPHRASE,
    params: CHEAP,
  });
  sealedBlobs.push(b);
  return b;
}

/** `b64` without its padding and lengthened to 4n+1 characters, which no base64 decoder accepts. */
function oneTooMany(b64: string): string {
  const body = b64.replace(/=+$/, "");
  return body + "A".repeat((5 - (body.length % 4)) % 4);
}

function expectError(a: Answer, status: number, error: string): void {
  expect({ status: a.status, error: a.body.error }).toEqual({ status, error });
}

async function stored(p: Person): Promise<unknown> {
  return (await t.storage.accounts.getKeyBackup(p.session.did))?.blob ?? null;
}

describe("PUT / GET / DELETE /api/keys/backup", () => {
  test("happy path: store, fetch (the same blob, which opens), replace, delete; then 404", async () => {
    const a = await person(t.url, "kb-happy");
    expectError(await backup("GET", { token: a.token }), 404, "NotFound");

    const first = await seal(a);
    const put = await backup("PUT", { token: a.token, body: { backup: first } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, updatedAt: clock.now() });
    expect(put.headers.get("cache-control")).toBe("no-store");

    const got = await backup("GET", { token: a.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ backup: first, updatedAt: put.body.updatedAt });
    expect(got.headers.get("cache-control")).toBe("no-store");
    const opened = await openKeyBackup(got.body.backup, PASSPHRASE, {
      did: a.session.did,
      publicKey: a.publicKey,
    });
    expect(opened.privateKey).toBe(a.privateKey);

    // A second PUT replaces the first (one backup per account).
    clock.advance(5_000);
    const second = await seal(a);
    const put2 = await backup("PUT", { token: a.token, body: { backup: second } });
    expect(put2.body).toEqual({ success: true, updatedAt: clock.now() });
    expect((put2.body.updatedAt as number) > (put.body.updatedAt as number)).toBe(true);
    expect((await backup("GET", { token: a.token })).body).toEqual({
      backup: second,
      updatedAt: put2.body.updatedAt,
    });

    const del = await backup("DELETE", { token: a.token });
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: { success: true } });
    expectError(await backup("GET", { token: a.token }), 404, "NotFound");
    expectError(await backup("DELETE", { token: a.token }), 404, "NotFound");
    expect(await stored(a)).toBeNull();
  });

  test("no token, or a bad one: 401 on every method, nothing stored", async () => {
    const a = await person(t.url, "kb-noauth");
    const blob = await seal(a);
    for (const method of ["PUT", "GET", "DELETE"] as const) {
      const body = method === "PUT" ? { backup: blob } : undefined;
      expectError(await backup(method, { body }), 401, "Unauthorized");
      expectError(await backup(method, { body, token: "not-a-jwt" }), 401, "Unauthorized");
    }
    expect(await stored(a)).toBeNull();
  });

  test("another user never gets, deletes or overwrites A's blob", async () => {
    const [a, b] = await Promise.all([person(t.url, "kb-owner"), person(t.url, "kb-other")]);
    const blob = await seal(a);
    expect((await backup("PUT", { token: a.token, body: { backup: blob } })).status).toBe(200);

    // B's calls act on B's own (absent) backup: there is no way to name A's.
    expectError(await backup("GET", { token: b.token }), 404, "NotFound");
    expectError(await backup("DELETE", { token: b.token }), 404, "NotFound");
    // B uploading A's blob: it names A's did.
    const stolen = await backup("PUT", { token: b.token, body: { backup: blob } });
    expectError(stolen, 403, "Forbidden");
    expect(await stored(b)).toBeNull();

    const still = await backup("GET", { token: a.token });
    expect(still.status).toBe(200);
    expect(still.body.backup).toEqual(blob);
  });

  test("a blob whose did is another account's: 403 Forbidden, nothing stored", async () => {
    const [a, b] = await Promise.all([person(t.url, "kb-did"), person(t.url, "kb-did-other")]);
    // A's own key, labelled with B's did (a blob a client could never open for A).
    const r = await backup("PUT", { token: a.token, body: { backup: await seal(a, b.session.did) } });
    expectError(r, 403, "Forbidden");
    expect(await stored(a)).toBeNull();
    expect(await stored(b)).toBeNull();
  });

  test("a blob whose public key is not the account's current key: 422 InvalidRequest naming backup", async () => {
    const a = await person(t.url, "kb-stale");
    const otherKey = await generateIdentity();
    const wrongKey = await sealKeyBackup({
      did: a.session.did,
      privateKey: otherKey.privateKey,
      kind: "passphrase",
      secret: PASSPHRASE,
      params: CHEAP,
    });
    sealedBlobs.push(wrongKey);
    const r = await backup("PUT", { token: a.token, body: { backup: wrongKey } });
    expectError(r, 422, "InvalidRequest");
    expect(r.body.message).toStartWith("backup:");
    expect(await stored(a)).toBeNull();
  });

  test("an account with no public key yet cannot store a backup (422)", async () => {
    const handle = `kb-nokey-${Math.random().toString(36).slice(2, 8)}`;
    const session = await ok(t.url, "register", {
      handle,
      email: `${handle}@example.com`,
      password: PASSWORD,
    });
    const keys = await generateIdentity();
    const blob = await sealKeyBackup({
      did: session.did,
      privateKey: keys.privateKey,
      kind: "passphrase",
      secret: PASSPHRASE,
      params: CHEAP,
    });
    sealedBlobs.push(blob);
    expectError(
      await backup("PUT", { token: session.accessJwt, body: { backup: blob } }),
      422,
      "InvalidRequest",
    );
    expect(await t.storage.accounts.getKeyBackup(session.did)).toBeNull();
  });

  test("malformed blobs: 422 InvalidRequest whose message names backup; nothing stored", async () => {
    // Two users, so that no one passes the backup bucket's burst of 10 (every refused call counts).
    const users = await Promise.all([person(t.url, "kb-malformed"), person(t.url, "kb-malformed2")]);
    const [a] = users as [Person, Person];
    const good = await seal(a);
    const cases: [string, unknown][] = [
      ["{v: 1}", { v: 1 }],
      ["null", null],
      ["a string", "backup"],
      ["an array", [good]],
      ["an extra field", { ...good, hint: "my cat" }],
      ["kdf below the floor", { ...good, kdf: { ...good.kdf, m: 1024 } }],
      ["kdf above the ceiling", { ...good, kdf: { ...good.kdf, t: 1000 } }],
      ["salt of the wrong length", { ...good, kdf: { ...good.kdf, salt: toBase64(new Uint8Array(8)) } }],
      ["iv not base64", { ...good, aead: { ...good.aead, iv: "!!!!!!!!!!!!!!!!" } }],
      ["ct too long", { ...good, ct: toBase64(new Uint8Array(600)) }],
      ["version 2", { ...good, v: 2 }],
      // No backup field at all: the schema refuses, naming the field.
      ["no backup field", undefined],
    ];
    for (const [i, [why, value]] of cases.entries()) {
      const who = users[i % 2] as Person;
      const r = await backup("PUT", { token: who.token, body: value === undefined ? {} : { backup: value } });
      expect({ why, status: r.status, error: r.body.error }).toEqual({
        why,
        status: 422,
        error: "InvalidRequest",
      });
      expect({ why, named: r.body.message?.startsWith("backup") }).toEqual({ why, named: true });
    }
    // A field beside the backup: refused by the strict schema, naming that field.
    const extra = await backup("PUT", { token: a.token, body: { backup: good, did: a.session.did } });
    expectError(extra, 422, "InvalidRequest");
    expect(extra.body.message).toStartWith("did");
    expectError(await backup("PUT", { token: a.token, raw: "{not json" }), 400, "BadRequest");
    for (const u of users) expect(await stored(u)).toBeNull();
  });

  test("base64 the shape check's character test passes but decoding refuses: 422, not 500", async () => {
    const a = await person(t.url, "kb-b64");
    const good = await seal(a);
    const cases: [string, unknown][] = [
      // 22 characters + "==" whose last character leaves non-zero bits.
      [
        "salt with non-zero leftover bits",
        { ...good, kdf: { ...good.kdf, salt: "AAAAAAAAAAAAAAAAAAAAAB==" } },
      ],
      ["iv of 4n+1 characters", { ...good, aead: { ...good.aead, iv: "AAAAAAAAAAAAA" } }],
      ["ct of 4n+1 characters", { ...good, ct: oneTooMany(good.ct) }],
    ];
    for (const [why, value] of cases) {
      const r = await backup("PUT", { token: a.token, body: { backup: value } });
      expect({ why, status: r.status, error: r.body.error }).toEqual({
        why,
        status: 422,
        error: "InvalidRequest",
      });
    }
    expect(t.logs.filter((l) => l.startsWith("internal error"))).toEqual([]);
    expect(await stored(a)).toBeNull();
  });

  test("a body over 4096 bytes: 413 TooLarge, nothing stored", async () => {
    const a = await person(t.url, "kb-large");
    const good = await seal(a);
    const padded = JSON.stringify({ backup: { ...good, pad: "x".repeat(4096) } });
    expect(Buffer.byteLength(padded)).toBeGreaterThan(4096);
    expectError(await backup("PUT", { token: a.token, raw: padded }), 413, "TooLarge");
    // Just over the limit, too (the limit is the route's own, not the general 64 KiB).
    const body = JSON.stringify({ backup: good });
    const justOver = `${body.slice(0, -1)}${" ".repeat(4097 - Buffer.byteLength(body))}}`;
    expect(Buffer.byteLength(justOver)).toBe(4097);
    expectError(await backup("PUT", { token: a.token, raw: justOver }), 413, "TooLarge");
    // Under it, with whitespace, the same blob is fine.
    const justUnder = `${body.slice(0, -1)}${" ".repeat(4096 - Buffer.byteLength(body))}}`;
    expect((await backup("PUT", { token: a.token, raw: justUnder })).status).toBe(200);
  });

  test("rate limit: the 11th call in a burst is 429 RateLimited with Retry-After; PUT, GET and DELETE share it", async () => {
    expect(DEFAULT_RATES.backup).toEqual({ burst: 10, perMinute: 1 });
    const [a, b] = await Promise.all([person(t.url, "kb-rate"), person(t.url, "kb-rate-other")]);
    const blob = await seal(a);
    const statuses: number[] = [];
    statuses.push((await backup("PUT", { token: a.token, body: { backup: blob } })).status);
    for (let i = 0; i < 7; i++) statuses.push((await backup("GET", { token: a.token })).status);
    statuses.push((await backup("DELETE", { token: a.token })).status);
    statuses.push((await backup("GET", { token: a.token })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 404]);

    for (const method of ["GET", "PUT", "DELETE"] as const) {
      const r = await backup(method, {
        token: a.token,
        ...(method === "PUT" ? { body: { backup: blob } } : {}),
      });
      expectError(r, 429, "RateLimited");
      const retry = Number(r.headers.get("retry-after"));
      expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    }
    // Refused calls change nothing.
    expect(await stored(a)).toBeNull();
    // Another user has a bucket of their own.
    expectError(await backup("GET", { token: b.token }), 404, "NotFound");

    // One minute refills one call.
    clock.advance(60_000);
    expect((await backup("PUT", { token: a.token, body: { backup: blob } })).status).toBe(200);
    expectError(await backup("GET", { token: a.token }), 429, "RateLimited");
  });

  test("replacing the account's key (save-public-key replace: true) deletes the backup", async () => {
    const a = await person(t.url, "kb-replace");
    const old = await seal(a);
    expect((await backup("PUT", { token: a.token, body: { backup: old } })).status).toBe(200);

    // Without replace the key stays and so does the backup.
    const next = await generateIdentity();
    const refused = await call(t.url, "savePublicKey", { publicKey: next.publicKey }, a.token);
    expectError(refused as Answer, 409, "KeyExists");
    expect(await stored(a)).not.toBeNull();

    await ok(t.url, "savePublicKey", { publicKey: next.publicKey, replace: true }, a.token);
    expectError(await backup("GET", { token: a.token }), 404, "NotFound");
    expect(await stored(a)).toBeNull();

    // The old blob can no longer be stored; one of the new key can.
    expectError(await backup("PUT", { token: a.token, body: { backup: old } }), 422, "InvalidRequest");
    const fresh = await seal({ privateKey: next.privateKey, session: a.session });
    expect((await backup("PUT", { token: a.token, body: { backup: fresh } })).status).toBe(200);
    expect((await backup("GET", { token: a.token })).body.backup).toEqual(fresh);
  });

  test("the server's log never holds a blob (nor any of its fields)", async () => {
    expect(sealedBlobs.length).toBeGreaterThan(5);
    const logged = t.logs.join("\n");
    for (const b of sealedBlobs) {
      for (const secretish of [b.ct, b.kdf.salt, b.aead.iv, b.ct.slice(0, 24)]) {
        expect(logged.includes(secretish)).toBe(false);
      }
    }
    expect(logged).not.toContain("argon2id");
    expect(logged).not.toContain("A256GCM");
  });
});
