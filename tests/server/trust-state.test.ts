/**
 * The trust state beside the key backup (protocol §8 "Fresh devices"; docs/key-backup.md "The trust
 * state"): PUT and GET /api/keys/trust-state against a real test server. Only beside a backup,
 * replaced only by a higher version, at most 1 MiB, gone with the backup, rate limited per user.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  generateIdentity,
  openTrustState,
  sealTrustState,
  type TrustStateBlob,
} from "../../core/crypto/index.ts";
import { sealKeyBackup } from "../../core/crypto/key-backup.ts";
import { API_BASE, Routes, TrustStateLimits } from "../../core/protocol/index.ts";
import { DEFAULT_RATES } from "../../server/services/rate-limit.ts";
import { ManualClock, ok, startTestServer, type TestServer } from "./harness.ts";
import { type Person, person } from "./people.ts";

const CHEAP = { m: 19_456, t: 2, p: 1 } as const;
const TRUST = API_BASE + Routes.trustStatePut.path;
const BACKUP = API_BASE + Routes.keyBackupPut.path;

let t: TestServer;
const clock = new ManualClock();
/** Every blob a test sealed: none of their ciphertexts may reach the server's log. */
const sealed: TrustStateBlob[] = [];

beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterAll(() => t.stop());

interface Answer {
  status: number;
  body: { error?: string; message?: string } & Record<string, unknown>;
  headers: Headers;
}

async function request(
  path: string,
  method: "PUT" | "GET" | "DELETE",
  opts: { token?: string; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const res = await fetch(t.url + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: Answer["body"];
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

const trust = (method: "PUT" | "GET", opts: { token?: string; body?: unknown; raw?: string } = {}) =>
  request(TRUST, method, opts);

function expectError(a: Answer, status: number, error: string): void {
  expect({ status: a.status, error: a.body.error }).toEqual({ status, error });
}

/** Stores a key backup of `p`'s own key (the trust state is kept only beside one). */
async function withBackup(p: Person): Promise<void> {
  const backup = await sealKeyBackup({
    did: p.session.did,
    privateKey: p.privateKey,
    kind: "passphrase",
    secret: "correct horse battery staple",
    params: CHEAP,
  });
  expect((await request(BACKUP, "PUT", { token: p.token, body: { backup } })).status).toBe(200);
}

async function seal(p: Person, version: number, state: object = { v: 1, version, channels: {} }) {
  const blob = await sealTrustState({ did: p.session.did, identity: p.identity, version, state });
  sealed.push(blob);
  return blob;
}

const storedVersion = async (p: Person) =>
  (await t.storage.accounts.getTrustState(p.session.did))?.version ?? null;

describe("PUT / GET /api/keys/trust-state", () => {
  test("happy path: only beside a backup; stored, fetched (it opens), replaced by a higher version", async () => {
    const a = await person(t.url, "ts-happy");
    expectError(await trust("GET", { token: a.token }), 404, "NotFound");
    // No backup yet: nothing to keep it beside.
    const refused = await trust("PUT", { token: a.token, body: { blob: await seal(a, 1) } });
    expectError(refused, 404, "NotFound");
    expect(refused.body.message).toContain("key backup");
    expect(await storedVersion(a)).toBeNull();

    await withBackup(a);
    const first = await seal(a, 1, { v: 1, version: 1, note: "first" });
    const put = await trust("PUT", { token: a.token, body: { blob: first } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, version: 1, updatedAt: clock.now() });
    expect(put.headers.get("cache-control")).toBe("no-store");
    const got = await trust("GET", { token: a.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ blob: first, updatedAt: clock.now() });
    expect(got.headers.get("cache-control")).toBe("no-store");
    const opened = await openTrustState({ did: a.session.did, identity: a.identity, blob: got.body.blob });
    expect(opened).toEqual({ version: 1, state: { v: 1, version: 1, note: "first" } });

    clock.advance(5_000);
    const next = await seal(a, 7);
    expect((await trust("PUT", { token: a.token, body: { blob: next } })).body).toEqual({
      success: true,
      version: 7,
      updatedAt: clock.now(),
    });
    expect((await trust("GET", { token: a.token })).body.blob).toEqual(next);
  });

  test("the version only goes up: an equal or lower one is 409 VersionConflict and changes nothing", async () => {
    const a = await person(t.url, "ts-mono");
    await withBackup(a);
    const five = await seal(a, 5);
    expect((await trust("PUT", { token: a.token, body: { blob: five } })).status).toBe(200);
    for (const version of [5, 4, 0]) {
      const r = await trust("PUT", { token: a.token, body: { blob: await seal(a, version) } });
      expectError(r, 409, "VersionConflict");
    }
    expect((await trust("GET", { token: a.token })).body.blob).toEqual(five);
    // The server cannot pass the old blob off as newer: relabelled, it is stored (the server cannot
    // tell), but it no longer opens, so a client treats it as no trust state at all.
    const relabelled = { ...five, version: 6 };
    expect((await trust("PUT", { token: a.token, body: { blob: relabelled } })).status).toBe(200);
    const back = (await trust("GET", { token: a.token })).body.blob;
    await expect(openTrustState({ did: a.session.did, identity: a.identity, blob: back })).rejects.toThrow(
      /trust state/,
    );
    expect(await storedVersion(a)).toBe(6);
  });

  test("no token, or a bad one: 401, nothing stored", async () => {
    const a = await person(t.url, "ts-noauth");
    await withBackup(a);
    const blob = await seal(a, 1);
    for (const token of [undefined, "not-a-jwt"]) {
      expectError(await trust("PUT", { token, body: { blob } }), 401, "Unauthorized");
      expectError(await trust("GET", { token }), 401, "Unauthorized");
    }
    expect(await storedVersion(a)).toBeNull();
  });

  test("always the caller's own: another user neither reads nor overwrites it", async () => {
    const [a, b] = await Promise.all([person(t.url, "ts-owner"), person(t.url, "ts-other")]);
    await withBackup(a);
    const blob = await seal(a, 3);
    expect((await trust("PUT", { token: a.token, body: { blob } })).status).toBe(200);
    expectError(await trust("GET", { token: b.token }), 404, "NotFound");
    // B's PUT goes to B's own account, which has no backup.
    expectError(await trust("PUT", { token: b.token, body: { blob: await seal(a, 9) } }), 404, "NotFound");
    await withBackup(b);
    // A's blob stored under B (it would never open for B), A's untouched.
    expect((await trust("PUT", { token: b.token, body: { blob: await seal(a, 9) } })).status).toBe(200);
    expect((await trust("GET", { token: a.token })).body.blob).toEqual(blob);
    expect(await storedVersion(a)).toBe(3);
  });

  test("malformed blobs: 422 InvalidRequest naming blob; nothing stored", async () => {
    const a = await person(t.url, "ts-malformed");
    await withBackup(a);
    const good = await seal(a, 2);
    const cases: [string, unknown][] = [
      ["null", null],
      ["a string", "blob"],
      ["an array", [good]],
      ["{v: 1} alone", { v: 1 }],
      ["an extra field", { ...good, did: a.session.did }],
      ["v 2", { ...good, v: 2 }],
      ["a negative version", { ...good, version: -1 }],
      ["a fractional version", { ...good, version: 2.5 }],
      ["a version past 2^53", { ...good, version: 2 ** 60 }],
      ["an iv of 8 bytes", { ...good, iv: "AAAAAAAAAAA=" }],
      ["a ciphertext not base64", { ...good, ciphertext: "!!!!" }],
      ["a ciphertext of 4n+1 characters", { ...good, ciphertext: "AAAAA" }],
      ["no blob field", undefined],
    ];
    for (const [why, value] of cases) {
      const r = await trust("PUT", { token: a.token, body: value === undefined ? {} : { blob: value } });
      expect({
        why,
        status: r.status,
        error: r.body.error,
        named: r.body.message?.startsWith("blob"),
      }).toEqual({
        why,
        status: 422,
        error: "InvalidRequest",
        named: true,
      });
    }
    const extra = await trust("PUT", { token: a.token, body: { blob: good, version: 2 } });
    expectError(extra, 422, "InvalidRequest");
    expect(extra.body.message).toStartWith("version");
    expectError(await trust("PUT", { token: a.token, raw: "{not json" }), 400, "BadRequest");
    expect(t.logs.filter((l) => l.startsWith("internal error"))).toEqual([]);
    expect(await storedVersion(a)).toBeNull();
  });

  test("size: a blob of 1 MiB of JSON is stored; a few bytes more, or a longer body, is 413 TooLarge", async () => {
    const a = await person(t.url, "ts-large");
    await withBackup(a);
    const max = TrustStateLimits.blobMaxBytes;
    expect(max).toBe(1024 * 1024);
    const blob = await seal(a, 1);
    // Padding the ciphertext (still canonical base64) brings the blob's JSON to an exact size.
    const sized = (bytes: number) => {
      const base = JSON.stringify({ ...blob, ciphertext: "" });
      const room = bytes - Buffer.byteLength(base);
      return { ...blob, ciphertext: "A".repeat(room - (room % 4)) };
    };
    const exact = sized(max);
    expect(Buffer.byteLength(JSON.stringify(exact))).toBeLessThanOrEqual(max);
    expect(Buffer.byteLength(JSON.stringify(exact))).toBeGreaterThan(max - 4);
    expect((await trust("PUT", { token: a.token, body: { blob: exact } })).status).toBe(200);
    // Over the blob's limit but under the route's body limit: the service refuses it.
    const over = { ...exact, version: 2, ciphertext: `${exact.ciphertext}AAAA` };
    expect(Buffer.byteLength(JSON.stringify({ blob: over }))).toBeLessThan(max + 1024);
    const r = await trust("PUT", { token: a.token, body: { blob: over } });
    expectError(r, 413, "TooLarge");
    expect(r.body.message).toStartWith("blob");
    // A body past the route's limit is refused before it is read whole.
    const huge = JSON.stringify({ blob: { ...blob, version: 3, ciphertext: "A".repeat(max + 2048) } });
    expectError(await trust("PUT", { token: a.token, raw: huge }), 413, "TooLarge");
    expect(await storedVersion(a)).toBe(1);
  });

  test("deleting the key backup deletes the trust state; a new backup starts without one", async () => {
    const a = await person(t.url, "ts-delete");
    await withBackup(a);
    expect((await trust("PUT", { token: a.token, body: { blob: await seal(a, 12) } })).status).toBe(200);
    expect((await request(BACKUP, "DELETE", { token: a.token })).body).toEqual({ success: true });
    expectError(await trust("GET", { token: a.token }), 404, "NotFound");
    expect(await storedVersion(a)).toBeNull();
    expectError(await trust("PUT", { token: a.token, body: { blob: await seal(a, 13) } }), 404, "NotFound");
    await withBackup(a);
    expect((await trust("PUT", { token: a.token, body: { blob: await seal(a, 1) } })).status).toBe(200);
  });

  test("replacing the account's key deletes the trust state with the backup", async () => {
    const a = await person(t.url, "ts-replace");
    await withBackup(a);
    expect((await trust("PUT", { token: a.token, body: { blob: await seal(a, 4) } })).status).toBe(200);
    const next = await generateIdentity();
    await ok(t.url, "savePublicKey", { publicKey: next.publicKey, replace: true }, a.token);
    expectError(await trust("GET", { token: a.token }), 404, "NotFound");
    expect(await storedVersion(a)).toBeNull();
  });

  test("rate limit: PUTs share a per-user bucket (429 with Retry-After past the burst); GETs are reads", async () => {
    expect(DEFAULT_RATES.trust).toEqual({ burst: 20, perMinute: 12 });
    const [a, b] = await Promise.all([person(t.url, "ts-rate"), person(t.url, "ts-rate-other")]);
    await withBackup(a);
    await withBackup(b);
    const statuses: number[] = [];
    // Refused ones count too (a 409 here).
    for (let v = 1; v <= 20; v++) {
      const blob = await seal(a, v === 10 ? 1 : v);
      statuses.push((await trust("PUT", { token: a.token, body: { blob } })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(statuses[9]).toBe(409);
    const over = await trust("PUT", { token: a.token, body: { blob: await seal(a, 21) } });
    expectError(over, 429, "RateLimited");
    const retry = Number(over.headers.get("retry-after"));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 5).toBe(true);
    expect(await storedVersion(a)).toBe(20);
    for (let i = 0; i < 3; i++) expect((await trust("GET", { token: a.token })).status).toBe(200);
    // Another user has a bucket of their own.
    expect((await trust("PUT", { token: b.token, body: { blob: await seal(b, 1) } })).status).toBe(200);
    // 5 s refill one.
    clock.advance(5_000);
    expect((await trust("PUT", { token: a.token, body: { blob: await seal(a, 22) } })).status).toBe(200);
    expectError(
      await trust("PUT", { token: a.token, body: { blob: await seal(a, 23) } }),
      429,
      "RateLimited",
    );
  });

  test("the server's log never holds a blob's ciphertext or iv", async () => {
    expect(sealed.length).toBeGreaterThan(10);
    const logged = t.logs.join("\n");
    for (const b of sealed) {
      expect(logged.includes(b.ciphertext.slice(0, 24))).toBe(false);
      expect(logged.includes(b.iv)).toBe(false);
    }
  });
});
