/**
 * Retention on the server (docs/protocol-extensions.md "Retention"): create-epoch keeps the signed
 * setting of the channel's owner only; a member's commit carrying one is refused (422) and changes
 * nothing; the owner's next commit without it clears it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ok, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";
import { createChannel3, rotate3 } from "./v3-people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ env: { WSYNC_RATE_LIMIT_SCALE: "0", WSYNC_RETENTION_MAX_DAYS: "400" } });
});
afterAll(async () => {
  await t.stop();
});

test("only the owner's commit sets the retention; a member's is refused; the owner clears it", async () => {
  const alice = await person(t.url, "alice");
  const bob = await person(t.url, "bob");
  const { channel } = await createChannel3(t.url, alice, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);

  const set = await rotate3(t.url, alice, channel, { retentionDays: 30 });
  expect(set.res.status).toBe(200);
  expect(set.commit.retentionDays).toBe(30);
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);

  const byMember = await rotate3(t.url, bob, channel, { retentionDays: 1 });
  expect(byMember.res.status).toBe(422);
  expect(JSON.stringify(byMember.res.body)).toContain("only the channel's owner sets its retention");
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);

  // A member's commit without one is fine and leaves the owner's setting as it is.
  expect((await rotate3(t.url, bob, channel)).res.status).toBe(200);
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);

  // The owner's commit without one clears it.
  expect((await rotate3(t.url, alice, channel)).res.status).toBe(200);
  expect(await t.storage.retention.channelDays(channel.id)).toBeNull();

  const info = await (await fetch(`${t.url}/api/server/info`)).json();
  expect(info).toEqual({ version: expect.any(String), retentionMaxDays: 400 });
});
