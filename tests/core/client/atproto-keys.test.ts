/**
 * The client's keys for an account signed in with ATProto (issue 33), against a real test server: the
 * first sign-in makes keys on the device (unconfirmed, as after a registration), a key this device
 * kept from another account's ended session is never published for it, and the key proof is asked of
 * the server once the key is ready (here the server holds no OAuth session for the account, so it
 * answers AtprotoSessionRequired and the client says the proof failed, without touching the sign-in).
 */
import { afterEach, expect, test } from "bun:test";
import { MemoryStore, StoreKeys, WsyncClient } from "../../../core/client/index.ts";
import { AtprotoProofPaths } from "../../../core/protocol/atproto-proof.ts";
import type { Session } from "../../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer } from "../../server/harness.ts";
import { until } from "./engine-harness.ts";

let t: TestServer | null = null;
const clients: WsyncClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t?.stop();
  t = null;
});

function makeClient(url: string, store: MemoryStore, answers: { path: string; status: number }[] = []) {
  const client = new WsyncClient({
    baseUrl: url,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      answers.push({ path: new URL(input).pathname, status: res.status });
      return res;
    },
    WebSocket: WebSocket as never,
    store,
  });
  clients.push(client);
  return client;
}

const handle = (name: string) => `${name}${Math.random().toString(36).slice(2, 7)}`;

/**
 * An account linked to an ATProto DID as the sign-in's callback links it, whose PDS is not reachable
 * from here (so the server holds no OAuth grant for it): its session.
 */
async function atprotoAccount(server: TestServer, prefix: string): Promise<Session> {
  const name = handle(prefix);
  const registered = await call(server.url, "register", {
    handle: name,
    email: `${name}@example.com`,
    password: "correct horse battery",
  });
  const session = registered.body as Session;
  await server.storage.atproto.link({
    did: session.did,
    handle: session.handle,
    pdsUrl: "https://pds.example",
    linkedAt: Date.now(),
  });
  return session;
}

test("an ATProto account's first sign-in makes keys here, never publishes a key left by another account, then asks for the proof", async () => {
  t = await startTestServer();
  // The record names the host the client talks to: the public URL says the same.
  t.config.publicUrl = t.url;
  const { url } = t;
  const store = new MemoryStore();

  // A local account used this device before; its session ended, its key stayed (as on a session
  // that ended elsewhere: the stored sign-in goes, the keys stay).
  const first = makeClient(url, store);
  const local = handle("loc");
  const leftover = await first.register({
    handle: local,
    email: `${local}@example.com`,
    password: "correct horse battery",
  });
  await first.completeRegistration();
  first.disconnect();
  store.data.delete(StoreKeys.auth);
  store.data.delete(StoreKeys.token);

  // An ATProto account (linked as the callback links it) signs in on this device with no key anywhere.
  const session = await atprotoAccount(t, "at");
  store.data.set(StoreKeys.auth, JSON.stringify(session));
  store.data.set(StoreKeys.token, session.accessJwt);

  const answers: { path: string; status: number }[] = [];
  const client = makeClient(url, store, answers);
  expect(await client.restore()).toBe(true);
  expect(client.state.auth.user?.atproto).toBe(true);
  // New keys, shown until saved; the other account's key was not sent as this account's.
  expect(client.state.auth.keyState).toBe("unconfirmed");
  const keys = client.unconfirmedKeys;
  expect(keys?.publicKey).toBeDefined();
  expect(keys?.publicKey).not.toBe(leftover.publicKey);
  expect((await ok(url, "session", undefined, session.accessJwt)).publicKey).toBeNull();

  // "I've Saved My Keys": the new key is the account's, and the proof is asked for.
  await client.completeRegistration();
  expect(client.state.auth.keyState).toBe("ready");
  expect((await ok(url, "session", undefined, session.accessJwt)).publicKey).toBe(keys?.publicKey ?? "");
  // What a CLI process waits for before it exits: the proof has been tried once it settles.
  await client.settleBackground();
  expect(client.state.auth.proof).toBe("failed");
  // The server checked the record and then found no OAuth session to write it with.
  expect(answers.filter((a) => a.path === AtprotoProofPaths.keyProof)).toEqual([
    { path: AtprotoProofPaths.keyProof, status: 403 },
  ]);
  expect(client.state.auth.proof).toBe("failed");
  expect(client.state.auth.isAuthenticated).toBe(true);
});

test("a local account with no key anywhere is still told its keys are lost (nothing is made for it)", async () => {
  t = await startTestServer();
  const name = handle("nokey");
  const registered = await call(t.url, "register", {
    handle: name,
    email: `${name}@example.com`,
    password: "correct horse battery",
  });
  const store = new MemoryStore();
  store.data.set(StoreKeys.auth, JSON.stringify(registered.body));
  store.data.set(StoreKeys.token, (registered.body as Session).accessJwt);
  const client = makeClient(t.url, store);
  expect(await client.restore()).toBe(true);
  expect(client.state.auth.keyState).toBe("lost");
  expect(client.unconfirmedKeys).toBeNull();
});

test("a proof the server could not publish for a passing reason is tried again; a missing grant is not", async () => {
  t = await startTestServer();
  t.config.publicUrl = t.url;
  const { url } = t;
  const session = await atprotoAccount(t, "retry");
  const store = new MemoryStore();
  store.data.set(StoreKeys.auth, JSON.stringify(session));
  store.data.set(StoreKeys.token, session.accessJwt);
  // The first publication meets a PDS that is away (503 Unavailable); the next reaches the server,
  // which has no OAuth grant for this account (403 AtprotoSessionRequired).
  const attempts: number[] = [];
  let away = true;
  const client = new WsyncClient({
    baseUrl: url,
    fetch: async (input, init) => {
      if (new URL(input).pathname === AtprotoProofPaths.keyProof && init?.method === "PUT") {
        if (away) {
          away = false;
          attempts.push(503);
          return Response.json(
            { error: "Unavailable", message: "Your PDS could not be reached" },
            { status: 503 },
          );
        }
        const res = await fetch(input, init);
        attempts.push(res.status);
        return res;
      }
      return fetch(input, init);
    },
    WebSocket: WebSocket as never,
    store,
    proofRetryMs: [20, 20, 20],
  });
  clients.push(client);
  expect(await client.restore()).toBe(true);
  await client.completeRegistration();
  await until(() => attempts.length >= 2, 10_000, "the proof tried again");
  expect(attempts.slice(0, 2)).toEqual([503, 403]);
  expect(client.state.auth.proof).toBe("failed");
  // A missing grant needs the person: no third attempt (its retry would be due 20 ms later).
  await Bun.sleep(300);
  expect(attempts).toEqual([503, 403]);
});
