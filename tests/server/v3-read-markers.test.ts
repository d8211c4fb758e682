/**
 * Protocol v3 (§8) read markers: mark-read takes `{channelUri, marker, signature}` with the marker
 * signed by the caller's current key and naming the channel of channelUri (422 otherwise, nothing
 * stored); the stored marker and its signature go to the user's own sockets and come back from
 * get-read-markers, so their other devices can check them. Raised only, capped, as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { verifyReadMarker } from "../../core/crypto/index.ts";
import { type ReadMarkerObject, WsEvent } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, person } from "./people.ts";
import { markBody, replaceKey } from "./v3-people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

async function room() {
  const [owner, member] = [await person(t.url, "owner"), await person(t.url, "member")];
  const { channel } = await createChannel(t.url, owner, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, member.token);
  return { owner, member, channel };
}

test("a marker signed by the caller is stored with its signature and reaches their other sockets", async () => {
  const { member, channel } = await room();
  const ws = await TestSocket.connect(t.wsUrl, member.token);
  const body = await markBody(member, channel, 1);
  const answer = await ok(t.url, "markRead", body, member.token);
  expect(answer).toEqual({ channelId: channel.id, seq: 1, marker: body.marker, signature: body.signature });
  const frame = await ws.waitFor((f) => f.type === WsEvent.readMarker);
  expect(frame.data).toEqual(answer);
  // What another device checks: its own key's signature over the marker.
  expect(
    await verifyReadMarker(
      frame.data.marker as ReadMarkerObject,
      frame.data.signature as string,
      member.publicKey,
    ),
  ).toBe(true);
  expect((await ok(t.url, "getReadMarkers", {}, member.token)).markers).toEqual([answer]);
  ws.close();
});

test("a marker signed by another key, by the caller's replaced key, or for another channel is 422; nothing stored", async () => {
  const { owner, member, channel } = await room();
  const other = await createChannel(t.url, owner, "public", "other");
  await ok(t.url, "joinChannel", { channelUri: other.channel.uri }, member.token);
  const cases: [string, Record<string, unknown>][] = [
    ["signature", await markBody(member, channel, 1, {}, owner.identity)],
    ["marker.channelId", await markBody(member, channel, 1, { channelId: other.channel.id })],
    ["marker", { channelUri: channel.uri, seq: 1 }],
    ["signature", { ...(await markBody(member, channel, 1)), signature: "A".repeat(88) }],
  ];
  for (const [field, body] of cases) {
    const r = await call(t.url, "markRead", body, member.token);
    expect({ field, status: r.status }).toEqual({ field, status: 422 });
    expect(r.body.error).toBe("InvalidRequest");
    expect(r.body.message).toStartWith(field);
  }
  const old = await replaceKey(t.url, member);
  const stale = await call(
    t.url,
    "markRead",
    await markBody(member, channel, 1, {}, old.identity),
    member.token,
  );
  expect(stale.status).toBe(422);
  expect((await ok(t.url, "getReadMarkers", {}, member.token)).markers).toEqual([]);
  // Under the new key it is taken.
  expect((await call(t.url, "markRead", await markBody(member, channel, 1), member.token)).status).toBe(200);
});

test("a non-member's signed marker is 403 (membership is checked first) and stores nothing", async () => {
  const { channel } = await room();
  const outsider = await person(t.url, "outsider");
  const r = await call(t.url, "markRead", await markBody(outsider, channel, 1), outsider.token);
  expect(r.status).toBe(403);
  expect((await ok(t.url, "getReadMarkers", {}, outsider.token)).markers).toEqual([]);
});
