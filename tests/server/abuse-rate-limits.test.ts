/**
 * Per-user write limits (issue "Server hardening" 2): every write kind — channels, invites, messages,
 * epochs, key changes — has a bucket per user, shared by HTTP (429 RateLimited with Retry-After) and
 * the WebSocket (an error frame with RateLimited and retryAfter). The limits here are scaled to a
 * tenth (WSYNC_RATE_LIMIT_SCALE=0.1) so a test reaches them in a few calls.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_RATES, type WriteKind } from "../../server/services/rate-limit.ts";
import { call, ManualClock, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, inviteBody, type Person, person, rotate, seal } from "./people.ts";

const SCALE = 0.1;
const burst = (k: WriteKind) => Math.max(1, Math.round(DEFAULT_RATES[k].burst * SCALE));

let t: TestServer;
const clock = new ManualClock();
beforeAll(async () => {
  t = await startTestServer({ clock, env: { WSYNC_RATE_LIMIT_SCALE: String(SCALE) } });
});
afterAll(() => t.stop());

function expect429(r: { status: number; headers: Headers; body: { error?: string } }) {
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 429, error: "RateLimited" });
  const retry = Number(r.headers.get("retry-after"));
  expect(Number.isInteger(retry) && retry >= 1).toBe(true);
  return retry;
}

test("channel writes (create, join, leave, kick): the write past the burst is 429 with Retry-After, then refills", async () => {
  const p = await person(t.url, "chan");
  const { channel } = await ok(t.url, "createChannel", { name: "first", type: "public" }, p.token);
  // Joins count even when they change nothing (the limit bounds work, not only storage).
  for (let i = 1; i < burst("channel"); i++)
    expect((await call(t.url, "joinChannel", { channelUri: channel.uri }, p.token)).status).toBe(200);
  const retry = expect429(await call(t.url, "createChannel", { name: "over", type: "public" }, p.token));
  expect429(await call(t.url, "leaveChannel", { channelUri: channel.uri }, p.token));
  expect429(await call(t.url, "kick", { channelUri: channel.uri, did: p.session.did }, p.token));
  // Another user is not affected.
  const q = await person(t.url, "other");
  expect((await call(t.url, "createChannel", { name: "q", type: "public" }, q.token)).status).toBe(200);
  clock.advance(retry * 1000);
  expect((await call(t.url, "createChannel", { name: "again", type: "public" }, p.token)).status).toBe(200);
});

test("invites: 429 with Retry-After past the burst", async () => {
  const [a, b] = await Promise.all([person(t.url, "inviter"), person(t.url, "invitee")]);
  const { channel } = await createChannel(t.url, a, "invite");
  for (let i = 0; i < burst("invite"); i++)
    await ok(t.url, "invite", await inviteBody(a, channel, b.session), a.token);
  expect429(await call(t.url, "invite", await inviteBody(a, channel, b.session), a.token));
});

test("epochs: 429 with Retry-After past the burst", async () => {
  const a = await person(t.url, "rotator");
  const { channel } = await createChannel(t.url, a, "public"); // epoch 1
  for (let i = 1; i < burst("epoch"); i++) expect((await rotate(t.url, a, channel)).res.status).toBe(200);
  const r = await rotate(t.url, a, channel);
  expect429(r.res as never);
});

test("key changes: 429 with Retry-After past the burst (saving the first key counted)", async () => {
  const a = await person(t.url, "keys");
  // burst("key") is 1 at this scale: person() used it.
  const r = await call(t.url, "savePublicKey", { publicKey: a.publicKey }, a.token);
  expect(expect429(r)).toBeGreaterThanOrEqual(60);
});

async function messaging(name: string) {
  const a: Person = await person(t.url, name);
  const c = await createChannel(t.url, a, "public");
  const epoch = { epochId: c.epochId, epochNumber: 1, epochKey: c.epochKey };
  return { a, channel: c.channel, epoch };
}

test("messages: HTTP and WebSocket share one bucket; WS answers an error frame with retryAfter", async () => {
  const { a, channel, epoch } = await messaging("sender");
  const ws = await TestSocket.connect(t.wsUrl, a.token);
  const half = Math.floor(burst("message") / 2);
  for (let i = 0; i < half; i++) await ok(t.url, "send", await seal(a, channel, epoch, `h${i}`), a.token);
  for (let i = half; i < burst("message"); i++) {
    const f = await ws.request("channel:message", await seal(a, channel, epoch, `w${i}`));
    expect(f.type).toBe("ack");
  }
  const f = await ws.request("channel:message", await seal(a, channel, epoch, "over"));
  expect(f.type).toBe("error");
  expect(f.data.error).toBe("RateLimited");
  expect(Number(f.data.retryAfter)).toBeGreaterThanOrEqual(1);
  expect429(await call(t.url, "send", await seal(a, channel, epoch, "over http"), a.token));
  // Joins over the socket count against the channel bucket, also with retryAfter.
  for (let i = 0; i < burst("channel"); i++) await ws.request("channel:join", { channelUri: channel.uri });
  const j = await ws.request("channel:join", { channelUri: channel.uri });
  expect({ type: j.type, error: j.data.error }).toEqual({ type: "error", error: "RateLimited" });
  expect(Number(j.data.retryAfter)).toBeGreaterThanOrEqual(1);
  ws.close();
});

test("reads are not limited", async () => {
  const { a, channel } = await messaging("reader");
  for (let i = 0; i < 3 * burst("message"); i++)
    expect((await call(t.url, "getMessages", { channelUri: channel.uri }, a.token)).status).toBe(200);
});
