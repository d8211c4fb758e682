/**
 * The owned-channel quota (issue "Server hardening" 2): one user owns at most 100 channels; the next
 * create is 403 Forbidden (saying why), and giving one up makes room again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_MAX_OWNED_CHANNELS } from "../../server/services/rate-limit.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";

let t: TestServer;
beforeAll(async () => {
  // The rate limits are off here so the quota alone is tested.
  t = await startTestServer({ env: { WSYNC_RATE_LIMIT_SCALE: "0" } });
});
afterAll(() => t.stop());

test("a user owns at most 100 channels; leaving one makes room", async () => {
  expect(DEFAULT_MAX_OWNED_CHANNELS).toBe(100);
  const p = await person(t.url, "hoarder");
  const uris: string[] = [];
  for (let i = 0; i < DEFAULT_MAX_OWNED_CHANNELS; i++) {
    const { channel } = await ok(t.url, "createChannel", { name: `c${i}`, type: "public" }, p.token);
    uris.push(channel.uri);
  }
  const over = await call(t.url, "createChannel", { name: "one more", type: "public" }, p.token);
  expect(over.status).toBe(403);
  expect(over.body.error).toBe("Forbidden");
  expect(over.body.message).toContain("100");
  // Someone else is not affected.
  const q = await person(t.url, "other");
  expect((await call(t.url, "createChannel", { name: "q", type: "public" }, q.token)).status).toBe(200);
  await ok(t.url, "leaveChannel", { channelUri: uris[0] as string }, p.token);
  expect((await call(t.url, "createChannel", { name: "again", type: "public" }, p.token)).status).toBe(200);
});
