/** WebSocket flows with several sockets on a real server (protocol §4). */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { WsClose } from "../../core/protocol/index.ts";
import { channelTopic, Hub, userTopic } from "../../server/realtime/hub.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, invite, person, rotate, seal } from "./people.ts";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.stop());

test("joining announces the member and a notification to subscribers; the joiner gets channel:joined", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "public");
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  expect((await sa.request("channel:join", { channelUri: channel.uri })).type).toBe("ack");
  const sb = await TestSocket.connect(t.wsUrl, b.token);
  const ack = await sb.request("channel:join", { channelUri: channel.uri });
  expect(ack.type).toBe("ack");
  const joined = await sb.waitFor((f) => f.type === "channel:joined");
  const data = joined.data as { members: { did: string }[]; epochInfo: { rotationRequired: boolean } };
  expect(data.members.map((m) => m.did).sort()).toEqual([a.session.did, b.session.did].sort());
  // The member set changed, so nobody may send until a member's client makes the next epoch.
  expect(data.epochInfo.rotationRequired).toBe(true);
  const mj = await sa.waitFor((f) => f.type === "channel:member:joined");
  expect((mj.data as { member: { did: string } }).member.did).toBe(b.session.did);
  const nj = await sa.waitFor((f) => f.type === "channel:notify:joined");
  expect(
    (nj.data as { record: { value: { action: string; subject: { did: string } } } }).record.value,
  ).toMatchObject({
    action: "joined",
    subject: { did: b.session.did },
  });
  sa.close();
  sb.close();
});

test("presence: connecting and disconnecting are announced, and get-members reports them", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, b.token);
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  await sa.request("channel:join", { channelUri: channel.uri });
  let members = (await ok(t.url, "getMembers", { channelUri: channel.uri }, a.token)).members;
  expect(members.find((m) => m.did === b.session.did)?.online).toBe(false);
  expect(members.find((m) => m.did === a.session.did)?.online).toBe(true);

  const sb = await TestSocket.connect(t.wsUrl, b.token);
  const on = await sa.waitFor((f) => f.type === "channel:presence" && f.data.did === b.session.did);
  expect(on.data.online).toBe(true);
  members = (await ok(t.url, "getMembers", { channelUri: channel.uri }, a.token)).members;
  expect(members.find((m) => m.did === b.session.did)?.online).toBe(true);

  // A second socket of the same user does not flap presence when one of them closes.
  const sb2 = await TestSocket.connect(t.wsUrl, b.token);
  sb.close();
  await sb.waitClose();
  await Bun.sleep(50);
  expect(sa.frames.filter((f) => f.type === "channel:presence" && f.data.online === false)).toHaveLength(0);
  sb2.close();
  const off = await sa.waitFor((f) => f.type === "channel:presence" && f.data.online === false);
  expect(off.data.did).toBe(b.session.did);
  sa.close();
});

test("a message reaches every subscriber, the sender included, once, after it is committed", async () => {
  const people = await Promise.all(["a", "b", "c"].map((n) => person(t.url, n)));
  const [a, b, c] = people as [Awaited<ReturnType<typeof person>>, (typeof people)[0], (typeof people)[0]];
  const { channel } = await createChannel(t.url, a, "public");
  for (const p of [b, c]) await ok(t.url, "joinChannel", { channelUri: channel.uri }, p.token);
  const r = await rotate(t.url, c, channel);
  expect(r.res.status).toBe(200);
  const sockets = await Promise.all(people.map((p) => TestSocket.connect(t.wsUrl, p.token)));
  for (const s of sockets) await s.request("channel:join", { channelUri: channel.uri });
  const msg = await seal(a, channel, r, "fan-out");
  const ack = await (sockets[0] as TestSocket).request("channel:message", msg);
  expect(ack.type).toBe("ack");
  const record = (ack.data as { record: { uri: string; seq: number } }).record;
  for (const s of sockets) {
    const got = await s.waitFor((f) => f.type === "channel:message");
    expect((got.data as { record: { uri: string } }).record.uri).toBe(record.uri);
  }
  await Bun.sleep(50);
  for (const s of sockets) expect(s.frames.filter((f) => f.type === "channel:message")).toHaveLength(1);
  // Sending the same clientMsgId again is idempotent: same record, no second broadcast.
  const again = await (sockets[0] as TestSocket).request("channel:message", msg);
  expect((again.data as { record: { uri: string } }).record.uri).toBe(record.uri);
  await Bun.sleep(50);
  for (const s of sockets) expect(s.frames.filter((f) => f.type === "channel:message")).toHaveLength(1);
  const page = await ok(t.url, "getMessages", { channelUri: channel.uri }, b.token);
  expect(page.records.filter((x) => x.uri === record.uri)).toHaveLength(1);
  for (const s of sockets) s.close();
});

test("a socket's pipelined messages are acked in the order sent, each after its commit, one ack each", async () => {
  // Acks follow the group commit from outside Bun's socket callbacks: they wait in the outbox for
  // the end of the turn and go out corked (server/ws/socket.ts). Nothing may be lost or reordered.
  const a = await person(t.url, "a");
  const first = await createChannel(t.url, a, "public");
  const s = await TestSocket.connect(t.wsUrl, a.token);
  await s.request("channel:join", { channelUri: first.channel.uri });
  const sealed = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      seal(a, first.channel, { ...first, epochNumber: 1 }, `pipelined ${i}`),
    ),
  );
  // Sent back to back without waiting, so several commit in one batch and their acks share a turn.
  const ids = sealed.map((_, i) => `p${i}`);
  for (const [i, msg] of sealed.entries())
    s.sendRaw(JSON.stringify({ type: "channel:message", id: ids[i], data: msg }));
  for (const id of ids) await s.waitFor((f) => f.id === id);
  const acks = s.frames.filter((f) => f.id?.startsWith("p"));
  expect(acks.map((f) => f.type)).toEqual(ids.map(() => "ack"));
  expect(acks.map((f) => f.id)).toEqual(ids);
  const seqs = acks.map((f) => (f.data as { record: { seq: number } }).record.seq);
  expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  expect(new Set(seqs).size).toBe(ids.length);
  s.close();
});

test("channel:message is refused with RotationRequired until a member makes the next epoch", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const first = await createChannel(t.url, a, "public");
  const { channel } = first;
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  await sa.request("channel:join", { channelUri: channel.uri });
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, b.token);
  const epoch1 = { epochId: first.epochId, epochNumber: 1, epochKey: first.epochKey };
  const refused = await sa.request("channel:message", await seal(a, channel, epoch1, "too early"));
  expect(refused.type).toBe("error");
  expect(refused.data.error).toBe("RotationRequired");
  // Over HTTP too.
  const http = await call(t.url, "send", await seal(a, channel, epoch1, "too early"), a.token);
  expect(http.status).toBe(409);
  expect(http.body.error).toBe("RotationRequired");

  const r = await rotate(t.url, b, channel);
  expect(r.res.status).toBe(200);
  const created = await sa.waitFor((f) => f.type === "epoch:created");
  expect(created.data).toMatchObject({ channelId: channel.id, epochNumber: 2, epochId: r.epochId });
  // The old epoch is no longer accepted; the new one is.
  const stale = await sa.request("channel:message", await seal(a, channel, epoch1, "stale"));
  expect(stale.data.error).toBe("EpochConflict");
  const good = await sa.request("channel:message", await seal(a, channel, r, "now"));
  expect(good.type).toBe("ack");
  // A racing second rotation for the same number loses with EpochConflict.
  const lost = await call(
    t.url,
    "createEpoch",
    { channelUri: channel.uri, commit: r.commit, signature: r.signature, wrappedKeys: r.wrappedKeys },
    b.token,
  );
  expect(lost.status).toBe(409);
  expect(lost.body.error).toBe("EpochConflict");
  sa.close();
});

test("after a reconnect, since-paging fills the gap with no gaps and no duplicates", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "public");
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, b.token);
  const epoch = await rotate(t.url, a, channel);
  const sa = await TestSocket.connect(t.wsUrl, a.token);
  await sa.request("channel:join", { channelUri: channel.uri });
  let sb = await TestSocket.connect(t.wsUrl, b.token);
  await sb.request("channel:join", { channelUri: channel.uri });
  const seen = new Map<number, string>();
  const collect = (s: TestSocket) => {
    for (const f of s.frames) {
      if (f.type !== "channel:message") continue;
      const rec = (f.data as { record: { seq: number; uri: string } }).record;
      seen.set(rec.seq, rec.uri);
    }
  };
  for (let i = 0; i < 5; i++)
    await sa.request("channel:message", await seal(a, channel, epoch, `before ${i}`));
  await sb.waitFor(
    (f) =>
      f.type === "channel:message" &&
      (f.data as { record: { value: { content: string } } }).record !== undefined &&
      sb.frames.filter((x) => x.type === "channel:message").length === 5,
  );
  collect(sb);
  const lastSeen = Math.max(...seen.keys());
  sb.close();
  await sb.waitClose();
  for (let i = 0; i < 37; i++)
    await sa.request("channel:message", await seal(a, channel, epoch, `while away ${i}`));
  sb = await TestSocket.connect(t.wsUrl, b.token);
  await sb.request("channel:join", { channelUri: channel.uri });
  for (let i = 0; i < 3; i++)
    await sa.request("channel:message", await seal(a, channel, epoch, `after ${i}`));
  // Fill from the last seq seen, 10 at a time, oldest first, while live frames also arrive.
  let since = lastSeen;
  for (;;) {
    const page = await ok(t.url, "getMessages", { channelUri: channel.uri, since, limit: 10 }, b.token);
    for (const r of page.records) {
      expect(r.seq).toBeGreaterThan(since);
      if (r.value.$type === "chat.wsync.message") {
        expect(seen.has(r.seq) ? seen.get(r.seq) : r.uri).toBe(r.uri);
        seen.set(r.seq, r.uri);
      }
      since = r.seq;
    }
    if (!page.hasMore) break;
  }
  await sb.waitFor(() => sb.frames.filter((x) => x.type === "channel:message").length === 3);
  collect(sb);
  const all = await ok(t.url, "getMessages", { channelUri: channel.uri, limit: 100 }, a.token);
  const messageSeqs = all.records
    .filter((r) => r.value.$type === "chat.wsync.message")
    .map((r) => r.seq)
    .sort((x, y) => x - y);
  expect(messageSeqs).toHaveLength(45);
  expect([...seen.keys()].sort((x, y) => x - y)).toEqual(messageSeqs);
  // Newest-first pages with the cursor give the same set, with no record twice.
  const paged: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(
      t.url,
      "getMessages",
      { channelUri: channel.uri, limit: 7, ...(cursor ? { cursor } : {}) },
      a.token,
    );
    paged.push(...page.records.map((r) => r.seq));
    cursor = page.cursor ?? undefined;
  } while (cursor);
  expect(new Set(paged).size).toBe(paged.length);
  expect(paged).toEqual([...paged].sort((x, y) => y - x));
  expect(paged.length).toBe(all.records.length);
  sa.close();
  sb.close();
});

test("a kicked member's sockets stop receiving the channel's events", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "public");
  const sb = await TestSocket.connect(t.wsUrl, b.token);
  await sb.request("channel:join", { channelUri: channel.uri });
  await ok(t.url, "kick", { channelUri: channel.uri, did: b.session.did }, a.token);
  const left = await sb.waitFor((f) => f.type === "channel:member:left");
  expect(left.data.did).toBe(b.session.did);
  expect(left.data.reason).toBe("kicked");
  // Who kicked, so the kicked member can be told "removed from #x by y" (an extension field).
  expect(left.data.by).toEqual({ did: a.session.did, handle: a.session.handle });
  const epoch = await rotate(t.url, a, channel);
  expect(epoch.res.status).toBe(200);
  await ok(t.url, "send", await seal(a, channel, epoch, "after the kick"), a.token);
  await Bun.sleep(100);
  expect(sb.frames.some((f) => f.type === "epoch:created" || f.type === "channel:message")).toBe(false);
  // And the channel is no longer theirs to read.
  expect((await call(t.url, "getMessages", { channelUri: channel.uri }, b.token)).status).toBe(403);
  sb.close();
});

test("an invite reaches the invitee's sockets", async () => {
  const [a, b] = await Promise.all([person(t.url, "a"), person(t.url, "b")]);
  const { channel } = await createChannel(t.url, a, "invite");
  const sb = await TestSocket.connect(t.wsUrl, b.token);
  await invite(t.url, a, channel, b);
  const inv = await sb.waitFor((f) => f.type === "channel:invited");
  expect(inv.data).toMatchObject({ channel: { id: channel.id }, from: { did: a.session.did } });
  const { invites } = await ok(t.url, "getInvites", {}, b.token);
  expect(invites.map((i) => i.channel.id)).toEqual([channel.id]);
  sb.close();
});

test("the hub publishes each frame once to its topic, unsubscribes a leaver's sockets and ends only a logged-out session's", () => {
  const published: [string, string][] = [];
  const hub = new Hub((topic, text) => published.push([topic, text]));
  const did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
  const conn = (sessionId: string) => {
    const c = {
      did,
      sessionId,
      topics: new Set<string>(),
      ended: null as number | null,
      subscribe: (t: string) => c.topics.add(t),
      unsubscribe: (t: string) => c.topics.delete(t),
      end: (code: number) => {
        c.ended = code;
      },
    };
    return c;
  };
  const [one, two] = [conn("s1"), conn("s2")];
  expect(hub.add(one)).toBe(true);
  expect(hub.add(two)).toBe(false);
  expect([...one.topics]).toEqual([userTopic(did)]);
  hub.subscribe(one, "c");
  hub.subscribe(two, "c");
  const f = { type: "channel:message", data: { n: 1 } } as never;
  hub.deliver({ kind: "channel", channelId: "c", frame: f });
  hub.deliver({ kind: "channel", channelId: "c", frame: f, text: "pre-serialised" });
  expect(published).toEqual([
    [channelTopic("c"), JSON.stringify(f)],
    [channelTopic("c"), "pre-serialised"],
  ]);
  hub.deliver({ kind: "unsubscribe", channelId: "c", did });
  expect(one.topics.has(channelTopic("c"))).toBe(false);
  expect(two.topics.has(channelTopic("c"))).toBe(false);
  hub.deliver({ kind: "end-session", sessionId: "s2" });
  expect([one.ended, two.ended]).toEqual([null, WsClose.sessionEnded]);
  expect(hub.remove(two)).toBe(false);
  expect(hub.isOnline(did)).toBe(true);
  expect(hub.remove(one)).toBe(true);
  expect(hub.isOnline(did)).toBe(false);
  expect(hub.connectionCount).toBe(0);
});
