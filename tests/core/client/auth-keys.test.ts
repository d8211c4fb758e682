/**
 * WsyncClient authentication and key states (spec §4.1–4.3, §5) against a real test server:
 * register / completeRegistration / restore / login, the key states ready | validate | lost, private
 * key validation, new keys, logout, revoked sessions and transparent token refresh.
 */
import { afterEach, expect, test } from "bun:test";
import { type KeyState, MemoryStore, StoreKeys, WsyncClient } from "../../../core/client/index.ts";
import {
  CryptoText,
  fingerprint,
  generateIdentity,
  PrivateKeyCheckText,
} from "../../../core/crypto/index.ts";
import { ApiError, type Session } from "../../../core/protocol/index.ts";
import { call, ManualClock, ok, startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, until } from "./engine-harness.ts";

const PASSWORD = "correct horse battery";
const MINUTE = 60_000;

let t: TestServer | null = null;
const clients: WsyncClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t?.stop();
  t = null;
});

async function server(clock?: ManualClock): Promise<TestServer> {
  t = await startTestServer(clock ? { clock } : {});
  return t;
}

let n = 0;
function newHandle(name: string): string {
  return `${name}-${++n}-${Math.random().toString(36).slice(2, 6)}`;
}

/** A client with its own (or a given) store; records request paths and session-ended events. */
function makeClient(
  url: string,
  opts: { store?: MemoryStore; now?: () => number; beforeAnswer?: (path: string) => Promise<void> } = {},
) {
  const store = opts.store ?? new MemoryStore();
  const paths: string[] = [];
  let ended = 0;
  const client = new WsyncClient({
    baseUrl: url,
    fetch: async (input, init) => {
      const path = new URL(input).pathname;
      paths.push(path);
      const res = await fetch(input, init);
      // Lets a test hold one answer back, to order concurrent calls deterministically.
      await opts.beforeAnswer?.(path);
      return res;
    },
    WebSocket: WebSocket as never,
    store,
    ...(opts.now ? { now: opts.now } : {}),
  });
  client.events.on("session-ended", () => {
    ended++;
  });
  clients.push(client);
  return {
    client,
    store,
    paths,
    ended: () => ended,
    refreshes: () => paths.filter((p) => p.endsWith("/auth/refresh")).length,
  };
}

async function register(client: WsyncClient, name = "user") {
  const handle = newHandle(name);
  const keys = await client.register({ handle, email: `${handle}@example.com`, password: PASSWORD });
  return { handle, keys };
}

function storedSession(store: MemoryStore): Session {
  return JSON.parse(store.data.get(StoreKeys.auth) ?? "null") as Session;
}

function keyState(client: WsyncClient): KeyState {
  return client.state.auth.keyState;
}

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

/** The text "Copy Keys" and "Download Keys" give (wsync-keys.txt). */
const keysFile = (k: { publicKey: string; privateKey: string }) =>
  `Public Key:\n${k.publicKey}\n\nPrivate Key:\n${k.privateKey}\n`;
const urlSafe = (b64: string) => b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const lines = (text: string, width: number) => text.match(new RegExp(`.{1,${width}}`, "g"))?.join("\n") ?? "";

// ---- registration and restore -------------------------------------------------------------------

test("register: signed out with keyState none until completeRegistration, then ready; the store holds the spec's keys", async () => {
  const { url } = await server();
  const { client, store } = makeClient(url);
  const { handle, keys } = await register(client, "reg");

  expect(client.state.auth.isAuthenticated).toBe(false);
  expect(keyState(client)).toBe("none");
  expect(client.state.auth.loading).toBe(false);
  expect(client.state.auth.user?.handle).toBe(`${handle}.test`);
  expect(client.state.auth.user?.publicKey).toBeNull();
  // Spec §3 storage keys: token, auth, privateKey, publicKey.
  const auth = storedSession(store);
  expect(auth.did).toMatch(/^did:plc:[a-z2-7]{24}$/);
  expect(typeof auth.accessJwt).toBe("string");
  expect(store.data.get(StoreKeys.token)).toBe(auth.accessJwt);
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);
  expect(store.data.get(StoreKeys.publicKey)).toBe(keys.publicKey);
  expect(keys.privateKey.length).toBeGreaterThan(50);
  // The server does not know the key yet.
  expect((await ok(url, "session", undefined, auth.accessJwt)).publicKey).toBeNull();

  await client.completeRegistration();
  expect(client.state.auth.isAuthenticated).toBe(true);
  expect(keyState(client)).toBe("ready");
  expect(client.state.auth.user?.publicKey).toBe(keys.publicKey);
  expect((await ok(url, "session", undefined, auth.accessJwt)).publicKey).toBe(keys.publicKey);
  expect(storedSession(store).publicKey).toBe(keys.publicKey);
  // A second completeRegistration has nothing to send.
  await expect(client.completeRegistration()).rejects.toThrow("Missing keys or user token");

  // A fresh client on the same store (a page reload) comes back ready.
  const again = makeClient(url, { store });
  expect(await again.client.restore()).toBe(true);
  expect(again.client.state.auth.isAuthenticated).toBe(true);
  expect(keyState(again.client)).toBe("ready");
  expect(again.client.did).toBe(auth.did);

  // An empty store has nothing to restore, and asks the server nothing.
  const empty = makeClient(url);
  expect(await empty.client.restore()).toBe(false);
  expect(empty.paths).toEqual([]);
  expect(empty.client.state.auth.isAuthenticated).toBe(false);
});

test("register refused: the error is kept, nothing is stored", async () => {
  const { url } = await server();
  const first = makeClient(url);
  const { handle } = await register(first.client, "dup");
  const { client, store } = makeClient(url);
  const err = await errorOf(
    client.register({ handle, email: `other-${handle}@example.com`, password: PASSWORD }),
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("HandleTaken");
  expect(client.state.auth.error).toBe("Handle is already taken");
  expect(client.state.auth.isAuthenticated).toBe(false);
  expect(store.data.size).toBe(0);
});

// ---- login and the key states -------------------------------------------------------------------

test("login on a fresh device is 'validate'; validatePrivateKey checks format, ownership, then is ready", async () => {
  const { url } = await server();
  const owner = makeClient(url);
  const { handle, keys } = await register(owner.client, "val");
  await owner.client.completeRegistration();

  const wrong = makeClient(url);
  await expect(wrong.client.login(handle, "not the password at all")).rejects.toThrow("Invalid credentials");
  expect(wrong.client.state.auth.error).toBe("Invalid credentials");
  expect(wrong.client.state.auth.isAuthenticated).toBe(false);

  const { client, store } = makeClient(url);
  await client.login(`${handle}.test`, PASSWORD);
  expect(client.state.auth.isAuthenticated).toBe(true);
  expect(keyState(client)).toBe("validate");
  expect(client.state.auth.user?.publicKey).toBe(keys.publicKey);
  expect(store.data.has(StoreKeys.privateKey)).toBe(false);

  // Spec §5 texts: empty, then the format text naming the check that failed (base64, P-256 key).
  for (const [input, message] of [
    ["", CryptoText.privateKeyEmpty],
    ["   \n", CryptoText.privateKeyEmpty],
    ["Private Key:\n", CryptoText.privateKeyEmpty],
    ["short", CryptoText.privateKeyInvalidFormat],
    ["A".repeat(50), CryptoText.privateKeyInvalidFormat],
    [`${"A".repeat(60)}!`, PrivateKeyCheckText.notBase64],
    [keys.privateKey.replace(/.$/, "-").replace(/^./, "#"), PrivateKeyCheckText.notBase64],
    // Long enough and the right alphabet, but not a PKCS8 key at all.
    ["QUJD".repeat(30), PrivateKeyCheckText.notP256],
    // Whitespace and URL-safe characters now pass the format rule; the key checks still refuse these.
    [`${"A".repeat(30)} ${"A".repeat(30)}`, PrivateKeyCheckText.notP256],
    [`${"A".repeat(60)}-_`, PrivateKeyCheckText.notBase64],
    [keys.publicKey, PrivateKeyCheckText.notP256],
  ] as const) {
    const text = (await errorOf(client.validatePrivateKey(input))).message;
    expect({ input, text }).toEqual({ input, text: message });
    if (message !== CryptoText.privateKeyEmpty)
      expect(text.startsWith(CryptoText.privateKeyInvalidFormat)).toBe(true);
    expect(keyState(client)).toBe("validate");
  }
  expect(CryptoText.privateKeyEmpty).toBe("Please enter Private Key");
  expect(CryptoText.privateKeyInvalidFormat).toBe("Invalid Private Key format");

  // A real private key, but someone else's (also as a keys file, URL-safe and line-broken).
  const stranger = await generateIdentity();
  for (const input of [stranger.privateKey, keysFile(stranger), lines(urlSafe(stranger.privateKey), 40)]) {
    const refused = await errorOf(client.validatePrivateKey(input));
    expect(refused.message).toBe(PrivateKeyCheckText.notThisAccount);
    expect(refused.message).toStartWith("This private key does not belong to your account");
  }
  expect(keyState(client)).toBe("validate");
  expect(store.data.has(StoreKeys.privateKey)).toBe(false);

  // The right key, as the whole downloaded keys file with the key URL-safe and broken over lines:
  // stored in its standard form.
  await client.validatePrivateKey(
    `\n  ${keysFile({ ...keys, privateKey: lines(urlSafe(keys.privateKey), 40) })}  \n`,
  );
  expect(keyState(client)).toBe("ready");
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);
  expect(store.data.get(StoreKeys.publicKey)).toBe(keys.publicKey);
  // Usable: this device can now make a channel (the creator's client signs epoch 1).
  const { channel } = await client.createChannel({ name: "after-validate", type: "public" });
  expect((await client.api.call("getEpochInfo", { channelUri: channel.id })).epochInfo.epochNumber).toBe(1);
});

// Spec §5: text of 50 characters or fewer gives exactly "Invalid Private Key format"; past the length
// rule the message names the check that failed.
test("'short' gives exactly the spec's 'Invalid Private Key format'", async () => {
  const { client } = makeClient("http://127.0.0.1:9");
  expect((await errorOf(client.validatePrivateKey("short"))).message).toBe(
    CryptoText.privateKeyInvalidFormat,
  );
});

test("a local key that is not the account's key (e.g. an old one) also needs validation", async () => {
  const { url } = await server();
  const owner = makeClient(url);
  const { handle, keys } = await register(owner.client, "old");
  await owner.client.completeRegistration();
  const store = new MemoryStore();
  const old = await generateIdentity();
  await store.set(StoreKeys.privateKey, old.privateKey);
  await store.set(StoreKeys.publicKey, old.publicKey);
  const { client } = makeClient(url, { store });
  await client.login(handle, PASSWORD);
  expect(keyState(client)).toBe("validate");
  await client.validatePrivateKey(keys.privateKey);
  expect(keyState(client)).toBe("ready");
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);
});

test("no key on the server and none on this device: 'lost'", async () => {
  const { url } = await server();
  const handle = newHandle("lost");
  // An account whose key was never saved (registration abandoned on another device).
  await ok(url, "register", { handle, email: `${handle}@example.com`, password: PASSWORD });
  const { client, store } = makeClient(url);
  await client.login(`${handle}@example.com`, PASSWORD);
  expect(client.state.auth.isAuthenticated).toBe(true);
  expect(keyState(client)).toBe("lost");
  expect(client.state.auth.user?.publicKey).toBeNull();
  expect(store.data.has(StoreKeys.privateKey)).toBe(false);
  // Channels need keys.
  await expect(client.createChannel({ name: "x", type: "public" })).rejects.toThrow(CryptoText.noKeys);
  // No key of anyone can be "validated" for an account without a key.
  const someKey = await generateIdentity();
  await expect(client.validatePrivateKey(someKey.privateKey)).rejects.toThrow("does not belong");
  // The engine's way out: a new key pair becomes the account's first key.
  const fresh = await client.createNewKeys();
  expect(keyState(client)).toBe("ready");
  expect((await client.api.call("session")).publicKey).toBe(fresh.publicKey);
});

test("registration interrupted before the keys were confirmed: the same device shows the same keys again, nothing published until confirmed", async () => {
  const { url } = await server();
  const first = makeClient(url);
  const { handle, keys } = await register(first.client, "intr");
  // The keys modal was closed by a reload: completeRegistration never ran.
  const did = storedSession(first.store).did;
  const published = async (token: string) =>
    (await ok(url, "getKeys", { dids: [did] }, token)).keys[0]?.publicKey;
  expect(await published(storedSession(first.store).accessJwt)).toBeNull();

  const { client, store } = makeClient(url, { store: first.store });
  await client.login(handle, PASSWORD);
  // The keys modal comes back with the keys the user has not confirmed; the server still has none.
  expect(keyState(client)).toBe("unconfirmed");
  expect(client.unconfirmedKeys).toEqual(keys);
  expect(await published(storedSession(store).accessJwt)).toBeNull();

  await client.completeRegistration();
  expect(keyState(client)).toBe("ready");
  expect(client.state.auth.user?.publicKey).toBe(keys.publicKey);
  expect(await published(storedSession(store).accessJwt)).toBe(keys.publicKey);
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);

  // Confirmed: a later sign-in on this device is simply ready.
  const again = makeClient(url, { store });
  await again.client.login(handle, PASSWORD);
  expect(keyState(again.client)).toBe("ready");
});

// ---- new keys -----------------------------------------------------------------------------------

test("createNewKeys replaces the key; the server announces key-changed to the user's channels", async () => {
  const { url } = await server();
  const a = await signedUp(url, "alice");
  const b = await signedUp(url, "bob");
  clients.push(a.client, b.client);
  const { channel } = await a.client.createChannel({ name: "keys", type: "public" });
  await a.client.open(channel.id);
  await b.client.join(channel.id);
  await b.client.send(channel.id, "before");
  const keyChanged: string[] = [];
  b.client.events.on("key-changed", (e) => keyChanged.push(e.did));

  const fresh = await a.client.createNewKeys();
  expect(fresh.publicKey).not.toBe(a.keys.publicKey);
  expect(keyState(a.client)).toBe("ready");
  expect(a.client.state.auth.user?.publicKey).toBe(fresh.publicKey);
  expect(a.store.data.get(StoreKeys.privateKey)).toBe(fresh.privateKey);
  expect(a.store.data.get(StoreKeys.publicKey)).toBe(fresh.publicKey);
  const { keys } = await b.client.api.call("getKeys", { dids: [a.did] });
  expect(keys[0]?.publicKey).toBe(fresh.publicKey);

  // The channel got a key-changed notification and needs a new epoch.
  const page = await b.client.api.call("getMessages", { channelUri: channel.id, limit: 10 });
  const notice = page.records.find(
    (r) => r.value.$type === "chat.wsync.notify" && r.value.action === "key-changed",
  );
  expect(notice?.value.$type === "chat.wsync.notify" && notice.value.subject.did).toBe(a.did);
  expect(
    (await b.client.api.call("getEpochInfo", { channelUri: channel.id })).epochInfo.rotationRequired,
  ).toBe(true);

  // Bob's client saw it live and says alice reset her key (protocol §8). It never wraps to a key only
  // the server vouches for: until alice's own key-change commit, bob's epochs go to her old key.
  await until(() => keyChanged.includes(a.did), 5000, "bob's key-changed event");
  expect(b.client.view(channel.id)?.warnings.map((w) => w.did)).toEqual([a.did]);
  expect(b.client.view(channel.id)?.warnings[0]?.text).toContain("reset their key");
  await b.client.send(channel.id, "while alice is away");
  const away = b.client.view(channel.id)?.epoch;
  expect(away?.commit?.members.find((m) => m.did === a.did)?.fp).toBe(await fingerprint(a.keys.publicKey));
  // alice is back: her client makes her own key-change commit under the new key, then sends.
  await a.client.send(channel.id, "back with my new key");
  const back = a.client.view(channel.id)?.epoch;
  expect(back?.commit?.creatorDid).toBe(a.did);
  expect(back?.commit?.v === 3 && back.commit.reason).toBe("key-change");
  await until(
    () =>
      b.client.view(channel.id)?.items.some((i) => i.text === "back with my new key" && i.verified) === true,
    5000,
    "bob reads alice under her new key",
  );
  // alice's device still held the old key when she made new ones: it vouches for the change, so bob's
  // row is neutral and his "reset" notice is settled (protocol §8 key-change statement).
  const row = b.client.view(channel.id)?.items.find((i) => i.kind === "epoch" && i.epoch?.keyChange);
  expect(row?.text).toContain("moved to a new key, signed by the previous one");
  expect(b.client.view(channel.id)?.warnings).toEqual([]);
  await b.client.send(channel.id, "after accepting");
  await until(
    () => a.client.view(channel.id)?.items.some((i) => i.text === "after accepting") === true,
    5000,
    "alice reads bob with her new key",
  );
  const item = a.client.view(channel.id)?.items.find((i) => i.text === "after accepting");
  expect(item?.verified).toBe(true);
  // Without replace, the server would have refused a second key (the engine always sends replace).
  const other = await generateIdentity();
  const r = await call(
    url,
    "savePublicKey",
    { publicKey: other.publicKey },
    storedSession(a.store).accessJwt,
  );
  expect(r.status).toBe(409);
  expect(r.body.error).toBe("KeyExists");
});

test("createNewKeys is not warned about the user's own new key (it races its own key-changed notice)", async () => {
  const { url } = await server();
  let gate: (() => Promise<void>) | null = null;
  const alice = makeClient(url, {
    beforeAnswer: async (path) => {
      if (path.endsWith("/auth/save-public-key") && gate) await gate();
    },
  });
  await register(alice.client, "self");
  await alice.client.completeRegistration();
  alice.client.connect();
  await until(() => alice.client.state.connection === "connected", 5000, "connected");
  const { channel } = await alice.client.createChannel({ name: "self", type: "public" });
  await alice.client.open(channel.id);
  const warned: string[] = [];
  alice.client.events.on("key-changed", (e) => warned.push(e.did));
  // Deliver the save's answer only after this client's socket handled the key-changed notice (which
  // re-fetches the members and compares their keys with the pins) — the order a slow answer gives.
  gate = async () => {
    gate = null;
    const from = alice.paths.lastIndexOf("/api/auth/save-public-key");
    await until(
      () => alice.paths.slice(from).some((p) => p.endsWith("/channel/get-members")),
      5000,
      "the notice's members fetch",
    );
    await Bun.sleep(100);
  };
  await alice.client.createNewKeys();
  await Bun.sleep(100);
  expect(warned).toEqual([]);
  expect(alice.client.view(channel.id)?.warnings).toEqual([]);
});

// ---- logout and revoked sessions ----------------------------------------------------------------

test("logout clears auth, token, keys, pins, epoch stores and the user, and revokes the session", async () => {
  const { url } = await server();
  const a = await signedUp(url, "out");
  clients.push(a.client);
  const { channel } = await a.client.createChannel({ name: "bye", type: "secret" });
  await a.client.open(channel.id);
  await a.client.send(channel.id, "secret words");
  const token = storedSession(a.store).accessJwt;
  expect(a.store.data.has(StoreKeys.epochs(channel.id))).toBe(true);
  expect(a.store.data.has(StoreKeys.pins)).toBe(true);

  await a.client.logout();
  expect([...a.store.data.keys()]).toEqual([]);
  expect(a.client.state.auth).toEqual({
    user: null,
    isAuthenticated: false,
    loading: false,
    error: null,
    keyState: "none",
  });
  expect(a.client.state.open).toEqual({});
  expect(a.client.state.channels).toEqual([]);
  expect(a.client.state.connection).toBe("disconnected");
  expect(a.client.did).toBeNull();
  expect(await a.client.exportPrivateKey()).toBeNull();
  expect((await call(url, "session", undefined, token)).status).toBe(401);
  // Nothing left to restore.
  expect(await makeClient(url, { store: a.store }).client.restore()).toBe(false);
});

test("logout still clears everything locally when the server cannot be reached", async () => {
  const { url } = await server();
  const { client, store } = makeClient(url);
  await register(client, "offline");
  await client.completeRegistration();
  await t?.stop();
  t = null;
  await client.logout();
  expect([...store.data.keys()]).toEqual([]);
  expect(client.state.auth.user).toBeNull();
});

test("logout after a page reload also wipes the epoch keys of channels not opened since the reload", async () => {
  const { url } = await server();
  const a = await signedUp(url, "reload");
  clients.push(a.client);
  const { channel } = await a.client.createChannel({ name: "kept", type: "secret" });
  a.client.disconnect();
  const reloaded = makeClient(url, { store: a.store });
  expect(await reloaded.client.restore()).toBe(true);
  await reloaded.client.logout();
  // Expected: nothing left. Actually left: `wsync-epochs:{channelId}` with the raw epoch key.
  expect([...a.store.data.keys()]).toEqual([]);
  expect(a.store.data.has(StoreKeys.epochs(channel.id))).toBe(false);
});

test("restore with a revoked session removes the stored auth (and keeps this device's key)", async () => {
  const { url } = await server();
  const { client, store } = makeClient(url);
  const { keys } = await register(client, "revoked");
  await client.completeRegistration();
  const s = storedSession(store);
  // Logged out elsewhere (another tab, or the server revoked it).
  await ok(url, "logout", { did: s.did, refreshJwt: s.refreshJwt });

  const again = makeClient(url, { store });
  const err = await errorOf(again.client.restore());
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(401);
  expect(store.data.has(StoreKeys.auth)).toBe(false);
  expect(store.data.has(StoreKeys.token)).toBe(false);
  expect(again.client.state.auth.isAuthenticated).toBe(false);
  expect(again.client.state.auth.error).toBeTruthy();
  // Spec §4.1 removes the stored auth only: the private key stays, so signing in again is "ready".
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);
  await again.client.login(s.handle, PASSWORD);
  expect(keyState(again.client)).toBe("ready");
});

test("restore after the access token expired and the session was revoked keeps this device's private key", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const { client, store } = makeClient(url, { now: () => clock.now() });
  const { keys } = await register(client, "wiped");
  await client.completeRegistration();
  const s = storedSession(store);
  await ok(url, "logout", { did: s.did, refreshJwt: s.refreshJwt });
  clock.advance(16 * MINUTE); // the usual case: the user comes back later
  const again = makeClient(url, { store, now: () => clock.now() });
  await expect(again.client.restore()).rejects.toThrow();
  expect(store.data.has(StoreKeys.auth)).toBe(false);
  // Same revoked session as the test above, only later: the key should survive here too.
  expect(store.data.get(StoreKeys.privateKey)).toBe(keys.privateKey);
});

// ---- token refresh ------------------------------------------------------------------------------

test("an expired access token is refreshed transparently, once for several concurrent calls", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const { client, store, paths, refreshes } = makeClient(url, { now: () => clock.now() });
  const { handle } = await register(client, "refresh");
  await client.completeRegistration();
  const { channel } = await client.createChannel({ name: "r", type: "public" });
  const before = storedSession(store);

  clock.advance(16 * MINUTE);
  expect((await call(url, "session", undefined, before.accessJwt)).body.error).toBe("ExpiredToken");
  paths.length = 0;
  const [s1, s2, channels, members, info] = await Promise.all([
    client.api.call("session"),
    client.api.call("session"),
    client.refreshChannels(),
    client.api.call("getMembers", { channelUri: channel.id }),
    client.api.call("getEpochInfo", { channelUri: channel.id }),
  ]);
  expect(s1.handle).toBe(`${handle}.test`);
  expect(s2.did).toBe(before.did);
  expect(channels.map((c) => c.id)).toEqual([channel.id]);
  expect(members.members).toHaveLength(1);
  expect(info.epochInfo.epochNumber).toBe(1);
  expect(refreshes()).toBe(1);

  const after = storedSession(store);
  expect(after.accessJwt).not.toBe(before.accessJwt);
  expect(after.refreshJwt).not.toBe(before.refreshJwt);
  expect(store.data.get(StoreKeys.token)).toBe(after.accessJwt);
  expect(after.did).toBe(before.did);
  // The next calls use the new token without refreshing again.
  paths.length = 0;
  await client.api.call("session");
  expect(refreshes()).toBe(0);

  // The old refresh token was rotated away: presenting it again, past the server's 30 s grace window
  // for the token just replaced, is treated as a replay.
  clock.advance(31_000);
  const replay = await call(url, "refresh", undefined, before.refreshJwt);
  expect(replay.status).toBe(401);
});

test("a call whose 401 arrives after another call already refreshed does not refresh again", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const store = new MemoryStore();
  let held = false;
  let before = "";
  const { client, refreshes } = makeClient(url, {
    store,
    now: () => clock.now(),
    // The first get-members answer (an ExpiredToken) is delivered only after the refresh is done.
    beforeAnswer: async (path) => {
      if (!path.endsWith("/channel/get-members") || held || !before) return;
      held = true;
      await until(() => storedSession(store).accessJwt !== before, 5000, "the refresh");
      await Bun.sleep(20);
    },
  });
  await register(client, "late401");
  await client.completeRegistration();
  const { channel } = await client.createChannel({ name: "late", type: "public" });
  before = storedSession(store).accessJwt;
  clock.advance(16 * MINUTE);
  const [, members] = await Promise.all([
    client.api.call("session"),
    client.api.call("getMembers", { channelUri: channel.id }),
  ]);
  expect(held).toBe(true);
  expect(members.members).toHaveLength(1);
  expect(refreshes()).toBe(1);
});

test("with the client's clock, a token about to expire is refreshed before use (the socket connects)", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const { client, store, refreshes } = makeClient(url, { now: () => clock.now() });
  await register(client, "proactive");
  await client.completeRegistration();
  const before = storedSession(store).accessJwt;

  clock.advance(10 * MINUTE);
  expect(await client.freshToken()).toBe(before); // 5 minutes left: kept
  expect(refreshes()).toBe(0);
  clock.advance(4.5 * MINUTE); // 30 s left: under the one-minute margin
  const next = await client.freshToken();
  expect(next).not.toBe(before);
  expect(refreshes()).toBe(1);

  // Long after: the socket's auth frame gets a refreshed token rather than an expired one.
  clock.advance(16 * MINUTE);
  client.connect();
  await until(() => client.state.connection === "connected", 5000, "connected");
  expect(refreshes()).toBe(2);
  expect(storedSession(store).accessJwt).not.toBe(next);
});

test("a 401 on refresh ends the session: event session-ended, local data cleared", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const { client, store, ended, refreshes } = makeClient(url, { now: () => clock.now() });
  await register(client, "ended");
  await client.completeRegistration();
  const s = storedSession(store);
  // The session is revoked behind the client's back.
  await ok(url, "logout", { did: s.did, refreshJwt: s.refreshJwt });
  clock.advance(16 * MINUTE);

  const err = await errorOf(client.api.call("session"));
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe("ExpiredToken");
  expect(refreshes()).toBe(1);
  expect(ended()).toBe(1);
  expect(client.state.auth.isAuthenticated).toBe(false);
  expect(client.state.auth.user).toBeNull();
  expect(store.data.has(StoreKeys.auth)).toBe(false);
  expect(store.data.has(StoreKeys.token)).toBe(false);
});

test("a replayed refresh token revokes the session; the rightful client's next refresh ends it", async () => {
  const clock = new ManualClock();
  const { url } = await server(clock);
  const { client, store, ended } = makeClient(url, { now: () => clock.now() });
  await register(client, "replay");
  await client.completeRegistration();
  const stolen = storedSession(store).refreshJwt;
  clock.advance(16 * MINUTE);
  await client.api.call("session"); // refreshes: `stolen` is now rotated away
  clock.advance(31_000); // past the grace window for the token just replaced
  expect((await call(url, "refresh", undefined, stolen)).status).toBe(401);
  clock.advance(16 * MINUTE);
  await expect(client.api.call("session")).rejects.toThrow();
  expect(ended()).toBe(1);
  expect(client.state.auth.isAuthenticated).toBe(false);
});
