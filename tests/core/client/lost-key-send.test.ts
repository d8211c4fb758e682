/** A user who lost the key makes new keys on a fresh device and talks again in an existing channel. */
import { afterEach, expect, test } from "bun:test";
import { MemoryStore, WsyncClient } from "../../../core/client/index.ts";
import { startTestServer, type TestServer } from "../../server/harness.ts";

let t: TestServer | null = null;
const clients: WsyncClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t?.stop();
  t = null;
});
const PASSWORD = "correct horse battery staple";

function client(url: string, store = new MemoryStore()) {
  const c = new WsyncClient({
    baseUrl: url,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store,
  });
  clients.push(c);
  return c;
}

test("'I lost my key' on a fresh device: new keys, then sending in an old channel works and the other member reads it", async () => {
  t = await startTestServer();
  const a = client(t.url);
  const handle = `lia-${Math.random().toString(36).slice(2, 6)}`;
  await a.register({ handle, email: `${handle}@example.com`, password: PASSWORD });
  await a.completeRegistration();
  const bStore = new MemoryStore();
  const b = client(t.url, bStore);
  const bh = `ben-${Math.random().toString(36).slice(2, 6)}`;
  await b.register({ handle: bh, email: `${bh}@example.com`, password: PASSWORD });
  await b.completeRegistration();
  const { channel } = await a.createChannel({ name: "lk", type: "public" });
  await a.open(channel.id);
  await b.join(channel.id);
  await a.send(channel.id, "before");

  const fresh = client(t.url);
  await fresh.login(handle, PASSWORD);
  expect(fresh.state.auth.keyState).toBe("validate");
  const newKeys = await fresh.createNewKeys();
  expect(fresh.state.auth.keyState).toBe("ready");
  await fresh.open(channel.id);
  await fresh.send(channel.id, "after the new keys");
  // Bob's client pinned the old key: it warns, and trusts the new one only once he accepts it (after
  // comparing safety numbers); then the new epoch and the message check out.
  await b.open(channel.id);
  const aliceDid = fresh.state.auth.user?.did as string;
  expect(b.view(channel.id)?.warnings.some((w) => w.check === "key-changed" && w.did === aliceDid)).toBe(
    true,
  );
  const numbers = await b.safetyNumbers(aliceDid);
  expect(numbers.theirKey).toBe(newKeys.publicKey);
  await b.acceptKeyChange(aliceDid, numbers.theirKey);
  // Bob's next load (the same device, its pins) reads the message, verified.
  b.disconnect();
  const b2 = client(t.url, bStore);
  await b2.restore();
  await b2.open(channel.id);
  const item = b2.view(channel.id)?.items.find((x) => x.text === "after the new keys");
  expect(item?.state).toBe("success");
  expect(item?.verified).toBe(true);
  expect(b2.view(channel.id)?.warnings.filter((w) => w.did === aliceDid)).toEqual([]);
}, 60_000);

test("'I lost my key' where the newest epoch was signed by the old key: the fresh device checks it under the replaced key and sends", async () => {
  t = await startTestServer();
  const a = client(t.url);
  const handle = `lio-${Math.random().toString(36).slice(2, 6)}`;
  await a.register({ handle, email: `${handle}@example.com`, password: PASSWORD });
  await a.completeRegistration();
  const bStore = new MemoryStore();
  const b = client(t.url, bStore);
  const bh = `bea-${Math.random().toString(36).slice(2, 6)}`;
  await b.register({ handle: bh, email: `${bh}@example.com`, password: PASSWORD });
  await b.completeRegistration();
  const { channel } = await a.createChannel({ name: "lko", type: "public" });
  await a.open(channel.id);
  await b.join(channel.id);
  await b.open(channel.id);
  await b.send(channel.id, "bob before");
  // The newest epoch is Alice's, under the key she is about to lose.
  await a.rotate(channel.id);
  await a.send(channel.id, "alice before");
  const oldHead = a.view(channel.id)?.epoch?.epochNumber as number;
  expect(oldHead).toBeGreaterThanOrEqual(3);

  const fresh = client(t.url);
  await fresh.login(handle, PASSWORD);
  await fresh.createNewKeys();
  await fresh.open(channel.id);
  await fresh.send(channel.id, "after the new keys");
  // A fresh device with no trust state from another device says so (protocol §8), and nothing else.
  expect(fresh.view(channel.id)?.warnings.map((w) => w.check)).toEqual(["fresh-device"]);
  expect(fresh.view(channel.id)?.epoch?.epochNumber).toBe(oldHead + 1);

  // Bob: the key change warns until he accepts it; afterwards Alice's message under her new key
  // checks out, and so does what she signed under the old one (its epoch's commit names that key).
  b.disconnect();
  const b2 = client(t.url, bStore);
  await b2.restore();
  await b2.open(channel.id);
  const aliceDid = fresh.state.auth.user?.did as string;
  await b2.acceptKeyChange(aliceDid, (await b2.safetyNumbers(aliceDid)).theirKey);
  b2.disconnect();
  const b3 = client(t.url, bStore);
  await b3.restore();
  await b3.open(channel.id);
  const items = b3.view(channel.id)?.items ?? [];
  for (const text of ["alice before", "after the new keys"]) {
    const item = items.find((x) => x.text === text);
    expect(item?.state).toBe("success");
    expect(item?.verified).toBe(true);
  }
  expect(b3.view(channel.id)?.warnings.filter((w) => w.did === aliceDid)).toEqual([]);
}, 60_000);
