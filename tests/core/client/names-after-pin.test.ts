/**
 * Protocol §8 "Names come from signed data": a message that arrives before the commit naming its
 * author (right after a join by link, for instance) is drawn as "did… (unverified name)". When a
 * verified commit pins the name, the rows already drawn take it (issue 28 defect 9's walk found them
 * staying unverified).
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { WsyncClient } from "../../../core/client/index.ts";
import { SecurityText } from "../../../core/client/view/security-text.ts";
import { setItems } from "../../../core/client/view/state.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, until } from "./engine-harness.ts";

let t: TestServer;
const clients: WsyncClient[] = [];
beforeEach(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t.stop();
});

test("rows drawn with an unverified name take the name a verified commit pins", async () => {
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  clients.push(alice.client, bob.client);
  const { channel } = await alice.client.createChannel({ name: "names", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  await bob.client.open(channel.id);
  await bob.client.send(channel.id, "hello, just joined");
  const view = () => alice.client.state.open[channel.id];
  const row = () => view()?.items.find((i) => i.text === "hello, just joined");
  await until(() => !!row());
  // The state a message is in when it came before the commit that names its author.
  const placeholder = SecurityText.unverifiedName(bob.did);
  const v = view();
  if (!v) throw new Error("no view");
  setItems(
    v,
    v.items.map((i) =>
      i.author.did === bob.did ? { ...i, author: { did: bob.did, handle: placeholder } } : i,
    ),
  );
  expect(row()?.author.handle).toBe(placeholder);
  // The next verified commit that lists bob (carol's join rotates the key) pins his name; the drawn
  // rows follow.
  const carol = await signedUp(t.url, "carol");
  clients.push(carol.client);
  await carol.client.join(channel.id);
  await carol.client.open(channel.id);
  await until(() => row()?.author.handle === bob.handle, 10_000);
  expect(view()?.items.some((i) => i.author.handle === placeholder)).toBe(false);
});

test("a message from someone who joined while this client was offline is read back on reconnecting under the pinned name", async () => {
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  clients.push(alice.client, bob.client);
  const { channel } = await alice.client.createChannel({ name: "offline", type: "public" });
  await alice.client.open(channel.id);
  // What a listener (`wsync listen --json`, the terminal's log) is told about each new row.
  const announced: string[] = [];
  const off = alice.client.events.on("item", ({ item }) => {
    if (item.text === "hello, while you were away") announced.push(item.author.handle);
  });
  alice.drop();
  await until(() => alice.client.state.connection !== "connected", 5000, "alice offline");
  await bob.client.join(channel.id);
  await bob.client.open(channel.id);
  await bob.client.send(channel.id, "hello, while you were away");
  // On reconnecting, alice reads bob's join commit and his message back. The message's sender name
  // is read before the commit that pins it is checked, and the row is placed after that pin's pass.
  const row = () =>
    alice.client.state.open[channel.id]?.items.find((i) => i.text === "hello, while you were away");
  await until(() => !!row(), 15_000, "the message read back");
  expect(row()?.author.handle).toBe(bob.handle);
  expect(row()?.verified).toBe(true);
  expect(announced).toEqual([bob.handle]);
  off();
});
