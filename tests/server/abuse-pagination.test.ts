/**
 * get-channels is capped (issue "Server hardening" 2): at most 500 channels a page, with an additive
 * `cursor`/`limit` in the request and `cursor` in the answer (null on the last page).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Limits } from "../../core/protocol/index.ts";
import { call, NO_WRITE_LIMITS, ok, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
});
afterAll(() => t.stop());

test("pages of get-channels cover every channel once, in order; the default page is capped", async () => {
  const p = await person(t.url, "pager");
  const made: string[] = [];
  for (let i = 0; i < 7; i++)
    made.push((await ok(t.url, "createChannel", { name: `c${i}`, type: "public" }, p.token)).channel.id);
  // An existing client sends {} and gets everything that fits in the first page, cursor null.
  const all = await ok(t.url, "getChannels", {}, p.token);
  // Creation order; channels made in the same millisecond are ordered by id (the cursor's key).
  const order = all.channels.map((c) => c.id);
  expect([...order].sort()).toEqual([...made].sort());
  const key = (c: { value: { createdAt: string }; id: string }) => `${Date.parse(c.value.createdAt)}.${c.id}`;
  const keys = all.channels.map(key);
  expect(keys).toEqual(
    [...keys].sort((a, b) => Number(a.split(".")[0]) - Number(b.split(".")[0]) || (a < b ? -1 : 1)),
  );
  expect(all.cursor).toBeNull();
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await ok(t.url, "getChannels", { limit: 3, ...(cursor ? { cursor } : {}) }, p.token);
    expect(page.channels.length).toBeLessThanOrEqual(3);
    seen.push(...page.channels.map((c) => c.id));
    if (!page.cursor) break;
    cursor = page.cursor;
  }
  expect(seen).toEqual(order);
  expect((await call(t.url, "getChannels", { limit: Limits.channelsPageMax + 1 }, p.token)).status).toBe(422);
  expect((await call(t.url, "getChannels", { cursor: "not a cursor" }, p.token)).status).toBe(422);
});
