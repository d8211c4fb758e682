/**
 * Opening a channel that is already open (the board's route and a click can both open it; the screen
 * opens a channel again when it switches back) replaces its list with a fresh page, but never shows
 * it blank meanwhile: a row on screen went away and came back (seen as a flaky browser test, the
 * message row found and then gone). What arrives while the new page loads is kept.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

test("a channel opened again keeps its rows on screen until the new page replaces them", async () => {
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  const { channel } = await alice.client.createChannel({ name: "again", type: "public" });
  await bob.client.open(channel.id);
  for (const n of [1, 2, 3]) await alice.client.send(channel.id, `before ${n}`);
  await until(() => texts(bob.client, channel.id).includes("before 3"), 5000, "bob's rows");

  // bob's list at every turn of the event loop while the channel opens again (the board draws the
  // state as it changes: its state is observable), and one message that arrives meanwhile.
  const shown: (string | null)[][] = [];
  const off = bob.client.events.on("change", () => shown.push(texts(bob.client, channel.id)));
  let opened = false;
  const again = bob.client.open(channel.id).finally(() => {
    opened = true;
  });
  const sending = alice.client.send(channel.id, "during the reopen");
  while (!opened) {
    shown.push(texts(bob.client, channel.id));
    await new Promise((r) => setImmediate(r));
  }
  await again;
  await sending;
  await until(() => texts(bob.client, channel.id).includes("during the reopen"), 5000, "the live row");
  off();

  expect(shown.length).toBeGreaterThan(0);
  for (const rows of shown) expect(rows.slice(0, 3)).toEqual(["before 1", "before 2", "before 3"]);
  expect(texts(bob.client, channel.id)).toEqual(["before 1", "before 2", "before 3", "during the reopen"]);
});
