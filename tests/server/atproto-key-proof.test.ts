/**
 * PUT/DELETE /api/atproto/key-proof without a PDS (docs/protocol-extensions.md "ATProto key proofs"):
 * signed-in callers only, only accounts signed in with ATProto, a body that is not a record refused
 * with the protocol's errors (never a 500), and the per-user `proof` limit. What happens with a real
 * PDS is in tests/atproto-web.test.ts.
 */
import { afterEach, expect, test } from "bun:test";
import { AtprotoProofPaths } from "../../core/protocol/atproto-proof.ts";
import type { Session } from "../../core/protocol/index.ts";
import { call, startTestServer, type TestServer } from "./harness.ts";

let t: TestServer | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

const proof = (url: string, method: "PUT" | "DELETE", token: string | null, body?: string) =>
  fetch(`${url}${AtprotoProofPaths.keyProof}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body }),
  });

async function account(url: string): Promise<Session> {
  const name = `kp${Math.random().toString(36).slice(2, 8)}`;
  const res = await call(url, "register", {
    handle: name,
    email: `${name}@example.com`,
    password: "correct horse battery",
  });
  return res.body as Session;
}

test("key-proof: signed in only, ATProto accounts only, bad bodies are 422, and the per-user limit holds", async () => {
  t = await startTestServer();
  const { url } = t;
  expect((await proof(url, "PUT", null, "{}")).status).toBe(401);
  expect((await proof(url, "DELETE", "not-a-token")).status).toBe(401);

  // A local account: refused, with the protocol's error body.
  const local = await account(url);
  const refused = await proof(url, "PUT", local.accessJwt, JSON.stringify({ record: {} }));
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { error: string }).error).toBe("Forbidden");

  // An ATProto account: a body that is no record is 422 (the record is checked before any PDS call).
  const at = await account(url);
  await t.storage.atproto.link({
    did: at.did,
    handle: at.handle,
    pdsUrl: "https://pds.example",
    linkedAt: Date.now(),
  });
  for (const body of [
    "{}",
    JSON.stringify({ record: "x" }),
    JSON.stringify({ record: { $type: "chat.wsync.chatKey" } }),
  ]) {
    const res = await proof(url, "PUT", at.accessJwt, body);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: string; message: string }).message).toStartWith("record: ");
  }

  // Not JSON at all: the protocol's error, never a 500.
  const broken = await proof(url, "PUT", at.accessJwt, "{not json");
  expect([400, 422]).toContain(broken.status);

  // Every attempt counts against the caller's `proof` bucket (burst 10): the 11th is 429 with Retry-After.
  const statuses: number[] = [];
  let last: Response | null = null;
  for (let i = 0; i < 12; i++) {
    last = await proof(url, "PUT", local.accessJwt, "{}");
    statuses.push(last.status);
  }
  expect(statuses.slice(0, 9)).toEqual(Array(9).fill(403));
  expect(statuses.slice(9)).toEqual([429, 429, 429]);
  expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
  // Another user's bucket is their own.
  expect((await proof(url, "PUT", at.accessJwt, "{}")).status).toBe(422);
});
