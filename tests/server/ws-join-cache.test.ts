/**
 * `channel:joined` carries the channel's epoch info from a cache kept per channel (EpochService.infoJson,
 * issue 35): it must always equal what GET epoch info answers at that moment, through every change
 * that moves it (a member joins, an epoch is made, a member leaves, a member changes key).
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Frame } from "../../core/protocol/index.ts";
import { ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, linkJoinBody, type Person, person, rotate } from "./people.ts";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.stop());

/** Joins over the socket and returns the `channel:joined` frame that answers this join. */
async function joinedFrame(s: TestSocket, channelUri: string): Promise<Frame> {
  const before = s.frames.length;
  expect((await s.request("channel:join", { channelUri })).type).toBe("ack");
  return s.waitFor((f) => f.type === "channel:joined" && s.frames.indexOf(f) >= before);
}

async function expectFresh(s: TestSocket, who: Person, channelUri: string) {
  const joined = (await joinedFrame(s, channelUri)).data as { epochInfo: unknown };
  const { epochInfo } = await ok(t.url, "getEpochInfo", { channelUri }, who.token);
  expect(joined.epochInfo).toEqual(epochInfo);
  return epochInfo;
}

test("the epoch info in channel:joined follows every change, join after join", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "public");
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  const first = await expectFresh(sa, a, channel.uri);
  expect(first.epochNumber).toBe(1);
  expect(first.rotationRequired).toBe(false);
  // The same again: served from the cache, still equal.
  await expectFresh(sa, a, channel.uri);

  // A member joins: rotation required, seen by the next join at once.
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, b.token);
  expect((await expectFresh(sa, a, channel.uri)).rotationRequired).toBe(true);

  // The next epoch: number 2, rotation no longer required.
  expect((await rotate(t.url, a, channel)).res.status).toBe(200);
  const second = await expectFresh(sa, a, channel.uri);
  expect(second.epochNumber).toBe(2);
  expect(second.rotationRequired).toBe(false);

  // A member leaves: rotation required again.
  await ok(t.url, "leaveChannel", { channelUri: channel.uri }, b.token);
  expect((await expectFresh(sa, a, channel.uri)).rotationRequired).toBe(true);
});

test("a secret channel's link state in channel:joined follows a kick (the link is voided)", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel, linkSecret } = await createChannel(t.url, a, "secret");
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  expect((await expectFresh(sa, a, channel.uri)).linkRotationRequired).toBe(false);
  await ok(t.url, "joinChannel", await linkJoinBody(b, channel, linkSecret as string), b.token);
  await expectFresh(sa, a, channel.uri);
  await ok(t.url, "kick", { channelUri: channel.uri, did: b.session.did }, a.token);
  const after = await expectFresh(sa, a, channel.uri);
  expect(after.linkRotationRequired).toBe(true);
  expect(after.rotationRequired).toBe(true);
});
