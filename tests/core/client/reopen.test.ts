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

test("a message that arrives after the reopened page was read, but before it is placed, stays on screen", async () => {
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  const { channel } = await alice.client.createChannel({ name: "late", type: "public" });
  await bob.client.open(channel.id);
  await alice.client.send(channel.id, "before");
  await until(() => texts(bob.client, channel.id).includes("before"), 5000, "bob's row");

  // The server answers bob's new page before alice sends; the live record reaches bob's list while
  // that answer is still on its way to the engine. The page cannot hold it; the list must keep it.
  const api = bob.client.api;
  const call = api.call.bind(api);
  let held = false;
  api.call = (async (name: string, body: unknown) => {
    const answer = await call(name as never, body as never);
    if (name === "getMessages" && !held) {
      held = true;
      await alice.client.send(channel.id, "while the page travels");
      await until(
        () => texts(bob.client, channel.id).includes("while the page travels"),
        5000,
        "the live row",
      );
    }
    return answer;
  }) as typeof api.call;
  try {
    await bob.client.open(channel.id);
  } finally {
    api.call = call;
  }
  expect(held).toBe(true);
  expect(texts(bob.client, channel.id)).toEqual(["before", "while the page travels"]);
});

test("the user's own message still on its way stays on screen through a reopen, and shows once when stored", async () => {
  const alice = await signedUp(t.url, "alice");
  const { channel } = await alice.client.createChannel({ name: "own", type: "public" });
  await alice.client.send(channel.id, "stored");

  // alice's next message leaves for the server only once the channel has opened again.
  const realtime = (
    alice.client as unknown as { realtime: { request: (e: string, b: unknown) => Promise<unknown> } }
  ).realtime;
  const request = realtime.request.bind(realtime);
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  realtime.request = async (event, body) => {
    if (event === "channel:message") await gate;
    return request(event, body);
  };
  const sending = alice.client.send(channel.id, "on its way");
  await until(() => texts(alice.client, channel.id).includes("on its way"), 5000, "the pending row");
  try {
    await alice.client.open(channel.id);
    expect(texts(alice.client, channel.id)).toEqual(["stored", "on its way"]);
  } finally {
    release();
    realtime.request = request;
  }
  await sending;
  expect(texts(alice.client, channel.id)).toEqual(["stored", "on its way"]);
  expect(alice.client.view(channel.id)?.items.filter((i) => i.sending)).toEqual([]);
});
