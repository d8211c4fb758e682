/**
 * Loading many pages of older history at once (`WsyncClient.loadMore` over the server's 100 a page,
 * as `wsync read --limit 10000` does, the next page asked for while one is placed). An honest
 * server's history comes out whole, in order, each record once; a server that answers every
 * older page with the same page cannot keep the client loading; a record whose content is not a JSON
 * object shows as a failed row and does not stop the rest of its page.
 */
import { expect, test } from "bun:test";
import type { TimelineItem } from "../../../../core/client/index.ts";
import { CryptoText } from "../../../../core/crypto/index.ts";
import { messages, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();
const user = (name: string): Promise<User> => suite.user(name);

/** bob sends `count` numbered messages in a public channel of alice's; alice has it open. */
async function channelWith(count: number) {
  const alice = await user("alice");
  const bob = await user("bob");
  const { channel } = await alice.client.createChannel({ name: "pages", type: "public" });
  await bob.client.join(channel.id);
  await bob.client.open(channel.id);
  for (let i = 1; i <= count; i++) await bob.client.send(channel.id, `m${i}`);
  await alice.client.open(channel.id);
  return { alice, bob, channelId: channel.id };
}

const texts = (u: User, channelId: string) => messages(u, channelId).map((i) => i.text);
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `m${i + 1}`);

test("several pages loaded at once: every message once, in order, verified", async () => {
  const { alice, channelId } = await channelWith(250);
  // The open loaded the newest 50; the rest comes in pages of 100, 100 and 0-100.
  await alice.client.loadMore(channelId, 1000);
  const view = alice.client.view(channelId);
  expect(view?.hasMore).toBe(false);
  expect(texts(alice, channelId)).toEqual(numbered(250));
  expect(messages(alice, channelId).every((i) => i.state === "success" && i.verified)).toBe(true);
  const seqs = (view?.items ?? []).map((i) => i.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set((view?.items ?? []).map((i) => i.uri)).size).toBe(view?.items.length ?? -1);
});

test("a limit between pages stops the load once the view holds that many more rows", async () => {
  const { alice, channelId } = await channelWith(250);
  const before = alice.client.view(channelId)?.items.length ?? 0;
  await alice.client.loadMore(channelId, 130);
  const view = alice.client.view(channelId);
  expect(view?.items.length ?? 0).toBe(before + 130);
  expect(view?.hasMore).toBe(true);
  // The newest rows, with nothing skipped between the pages.
  expect(texts(alice, channelId)).toEqual(numbered(250).slice(-texts(alice, channelId).length));
});

test("a server that answers every older page with the same records cannot keep the client loading", async () => {
  const { alice, bob, channelId } = await channelWith(160);
  const page = await bob.client.api.call("getMessages", { channelUri: channelId, limit: 100 });
  let older = 0;
  alice.tamper.response("getMessages", (body, request) => {
    if (!request.cursor) return body;
    older++;
    // The same newest page again, with a cursor that asks for more.
    return { records: page.records, cursor: request.cursor, hasMore: true };
  });
  const before = alice.client.view(channelId)?.items.length ?? 0;
  await alice.client.loadMore(channelId, 10_000);
  // The first repeated page adds its 50 records the open had not loaded; the next adds nothing and
  // ends the load (a third may have been asked for meanwhile).
  expect(older).toBeLessThanOrEqual(3);
  const items = alice.client.view(channelId)?.items ?? [];
  expect(items.length).toBe(before + 50);
  expect(new Set(items.map((i) => i.uri)).size).toBe(items.length);
});

test("a record whose content is JSON but not an object is a failed row; its page still loads", async () => {
  const { alice, channelId } = await channelWith(120);
  const all = await alice.client.api.call("getMessages", { channelUri: channelId, limit: 100 });
  const target = all.records.at(-1) as (typeof all.records)[number];
  alice.tamper.response("getMessages", (body) => {
    for (const r of body.records)
      if (r.uri === target.uri && r.value.$type === "chat.wsync.message") r.value.content = "null";
    return body;
  });
  await alice.client.open(channelId);
  await alice.client.loadMore(channelId, 1000);
  const rows = messages(alice, channelId);
  const bad = rows.find((i) => i.uri === target.uri) as TimelineItem;
  expect(bad.state).toBe("failed");
  expect(bad.text).toBeNull();
  expect(bad.error).toBe(CryptoText.decryptMessageFailed("not an encrypted message"));
  expect(rows.filter((i) => i.uri !== target.uri).every((i) => i.state === "success" && i.verified)).toBe(
    true,
  );
  expect(rows).toHaveLength(120);
});
