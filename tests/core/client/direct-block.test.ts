/**
 * Issue 30: in a group conversation the server lets a blocked person's messages through (it refuses
 * them only one to one), so the blocker's client hides them: not shown, not counted, not an `item`
 * event; the others still read them, and nothing shows as withheld for the blocker.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { WsyncClient } from "../../../core/client/index.ts";
import { hiddenByBlock } from "../../../core/client/view/blocked.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
const clients: WsyncClient[] = [];
beforeEach(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t.stop();
});

async function user(name: string) {
  const u = await signedUp(t.url, name);
  clients.push(u.client);
  return u;
}

test("hiddenByBlock: only a blocked author, only in a direct conversation", () => {
  const direct = { value: { type: "direct" } };
  const channel = { value: { type: "invite" } };
  const state = { blocked: [{ did: "did:plc:mallory", handle: "mallory" }] };
  expect(hiddenByBlock(state, direct, "did:plc:mallory")).toBe(true);
  expect(hiddenByBlock(state, direct, "did:plc:bob")).toBe(false);
  expect(hiddenByBlock(state, channel, "did:plc:mallory")).toBe(false);
  expect(hiddenByBlock({}, direct, "did:plc:mallory")).toBe(false);
});

test("a group conversation: the blocker's client hides the blocked member's messages, the others read them", async () => {
  const [alice, bob, mallory] = [await user("alice"), await user("bob"), await user("mallory")];
  const { conversation } = await alice.client.direct.open([bob.handle, mallory.handle], { name: "trip" });
  const id = conversation.channel.id;
  await alice.client.send(id, "where do we go");
  for (const u of [bob, mallory]) {
    await u.client.refreshChannels();
    await u.client.open(id);
  }
  await mallory.client.send(id, "before the block");
  await until(() => texts(alice.client, id).includes("before the block"), 5000, "alice reads mallory");

  await alice.client.direct.block(mallory.did);
  // (What mallory said before stays in the open view: the web's Block takes it out, web/state/direct.ts.)
  const events: string[] = [];
  alice.client.events.on("item", ({ item }) => void events.push(item.text ?? ""));

  // The server still takes mallory's message in the group (one to one it would refuse it).
  await mallory.client.send(id, "buy my stuff");
  await bob.client.send(id, "the lake");
  await until(() => texts(alice.client, id).includes("the lake"), 5000, "alice reads bob");
  await until(() => texts(bob.client, id).includes("buy my stuff"), 5000, "bob reads mallory");
  expect(texts(alice.client, id)).toEqual(["where do we go", "before the block", "the lake"]);
  expect(events).toEqual(["the lake"]);
  // Mallory's skipped chain number is no "withheld" row and no warning for alice.
  const view = alice.client.view(id);
  expect(view?.items.some((i) => i.withheld)).toBe(false);
  expect(view?.warnings.filter((w) => w.check === "withheld")).toEqual([]);

  // Loaded again from history (as on the next start), none of mallory's shows.
  delete alice.client.state.open[id];
  await alice.client.open(id);
  await until(() => texts(alice.client, id).includes("the lake"), 5000, "alice's history");
  expect(texts(alice.client, id)).toEqual(["where do we go", "the lake"]);
});
