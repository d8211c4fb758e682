/**
 * Read markers and typing indicators (docs/protocol-extensions.md): member-only, rate-limited, bad
 * input refused with the protocol's codes and changing nothing; a marker never goes back and reaches
 * the user's own other sockets only; typing reaches the channel's members and is stored nowhere.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signObject } from "../../core/crypto/index.ts";
import { type Channel, WsEvent } from "../../core/protocol/index.ts";
import { newChannelId } from "../../server/util/ids.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, type Person, person, seal } from "./people.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

interface Frame {
  type: string;
  id?: string;
  data?: Record<string, unknown>;
}

/** An authenticated socket that keeps every frame it receives. */
async function socket(who: Person) {
  const ws = new WebSocket(t.wsUrl);
  const frames: Frame[] = [];
  ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data)) as Frame));
  await new Promise((r) => ws.addEventListener("open", r, { once: true }));
  ws.send(JSON.stringify({ type: "auth", data: { token: who.token } }));
  const until = async (pred: () => boolean, what: string, ms = 5000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`no ${what}; frames: ${JSON.stringify(frames)}`);
      await Bun.sleep(5);
    }
  };
  await until(() => frames.some((f) => f.type === "ready"), "ready");
  let n = 0;
  const request = async (type: string, data: Record<string, unknown>) => {
    const id = `r${++n}`;
    ws.send(JSON.stringify({ type, id, data }));
    await until(() => frames.some((f) => f.id === id), `answer to ${type}`);
    return frames.find((f) => f.id === id) as Frame;
  };
  return { ws, frames, until, request, close: () => ws.close() };
}

/** A public channel with `messages` from its owner, then a second member (and an outsider). */
async function room(name: string, messages = 0) {
  const owner = await person(t.url, "owner");
  const member = await person(t.url, "member");
  const outsider = await person(t.url, "outsider");
  const made = await createChannel(t.url, owner, "public", name);
  const epoch = { epochId: made.epochId as string, epochNumber: 1, epochKey: made.epochKey as Uint8Array };
  const seqs: number[] = [];
  for (let n = 1; n <= messages; n++)
    seqs.push(
      (await ok(t.url, "send", await seal(owner, made.channel, epoch, `m${n}`), owner.token)).record.seq,
    );
  await ok(t.url, "joinChannel", { channelUri: made.channel.uri }, member.token);
  return { owner, member, outsider, channel: made.channel, seqs };
}

/** A mark-read body with the marker signed by `who` (protocol §8). */
async function mark(who: Person, channel: Pick<Channel, "id" | "uri">, seq: number) {
  const marker = { v: 3 as const, channelId: channel.id, seq, createdAt: Date.now() };
  return { channelUri: channel.uri, marker, signature: await signObject(who.identity, marker) };
}

describe("read markers", () => {
  test("a member's marker rises, never falls, is capped at the last seq and is listed for them", async () => {
    const { owner, member, channel, seqs } = await room("reads", 3);
    // The join notice came after the messages: the last seq is the channel's newest record.
    const last = (await ok(t.url, "getMessages", { channelUri: channel.uri, limit: 1 }, member.token))
      .records[0]?.seq as number;
    expect(last).toBeGreaterThanOrEqual(Math.max(...seqs));
    const first = await mark(member, channel, last - 1);
    expect(await ok(t.url, "markRead", first, member.token)).toEqual({
      channelId: channel.id,
      seq: last - 1,
      marker: first.marker,
      signature: first.signature,
    });
    // Lower: the stored seq and the signed marker that set it stay.
    const lower = await ok(t.url, "markRead", await mark(member, channel, 1), member.token);
    expect(lower).toMatchObject({ seq: last - 1, marker: first.marker });
    const past = await mark(member, channel, last + 1000);
    expect((await ok(t.url, "markRead", past, member.token)).seq).toBe(last);
    expect((await ok(t.url, "getReadMarkers", {}, member.token)).markers).toEqual([
      { channelId: channel.id, seq: last, marker: past.marker, signature: past.signature },
    ]);
    // The owner has no marker there; the member's is theirs alone.
    expect((await ok(t.url, "getReadMarkers", {}, owner.token)).markers).toEqual([]);
  });

  test("non-members, unknown channels and bad input are refused and change nothing", async () => {
    const { member, outsider, channel } = await room("reads-refused");
    const r = await call(t.url, "markRead", await mark(outsider, channel, 1), outsider.token);
    expect(r.status).toBe(403);
    expect((await ok(t.url, "getReadMarkers", {}, outsider.token)).markers).toEqual([]);
    const unknown = channel.uri.replace(channel.id, newChannelId());
    const good = await mark(member, channel, 1);
    expect((await call(t.url, "markRead", { ...good, channelUri: unknown }, member.token)).status).toBe(404);
    expect(
      (await call(t.url, "markRead", { ...good, channelUri: "at://nope/x/y" }, member.token)).status,
    ).toBe(422);
    const withMarker = (m: Record<string, unknown>) => ({ ...good, marker: { ...good.marker, ...m } });
    for (const bad of [
      withMarker({ seq: -1 }),
      withMarker({ seq: 0 }),
      withMarker({ seq: 1.5 }),
      withMarker({ seq: "3" }),
      withMarker({ v: 2 }),
      { channelUri: channel.uri, seq: 1 },
      { channelUri: channel.uri, marker: good.marker },
      { ...good, extra: true },
    ]) {
      const res = await call(t.url, "markRead", bad, member.token);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe("InvalidRequest");
    }
    expect((await call(t.url, "markRead", good)).status).toBe(401);
    expect((await ok(t.url, "getReadMarkers", {}, member.token)).markers).toEqual([]);
  });

  test("a new marker reaches the user's other sockets, and nobody else's", async () => {
    const { owner, member, channel, seqs } = await room("reads-live", 1);
    const record = { seq: seqs[0] as number };
    const mine = await socket(member);
    const theirs = await socket(owner);
    try {
      const body = await mark(member, channel, record.seq);
      await ok(t.url, "markRead", body, member.token);
      await mine.until(() => mine.frames.some((f) => f.type === WsEvent.readMarker), "read marker frame");
      expect(mine.frames.find((f) => f.type === WsEvent.readMarker)?.data).toEqual({
        channelId: channel.id,
        seq: record.seq,
        marker: body.marker,
        signature: body.signature,
      });
      await Bun.sleep(100);
      expect(theirs.frames.some((f) => f.type === WsEvent.readMarker)).toBe(false);
    } finally {
      mine.close();
      theirs.close();
    }
  });

  test("marking is rate-limited per user", async () => {
    const { member, channel } = await room("reads-limit");
    let limited = false;
    const body = await mark(member, channel, 1);
    for (let n = 0; n < 200 && !limited; n++) {
      const r = await call(t.url, "markRead", body, member.token);
      if (r.status === 429) limited = true;
      else expect(r.status).toBe(200);
    }
    expect(limited).toBe(true);
  });
});

describe("typing", () => {
  test("relayed to the channel's members with the sender's identity from the socket; stored nowhere", async () => {
    const { owner, member, outsider, channel } = await room("typing");
    const a = await socket(member);
    const b = await socket(owner);
    const c = await socket(outsider);
    try {
      await b.request(WsEvent.channelJoin, { channelUri: channel.uri });
      await a.request(WsEvent.channelJoin, { channelUri: channel.uri });
      const before = await ok(t.url, "getMessages", { channelUri: channel.uri, limit: 100 }, owner.token);
      const ack = await a.request(WsEvent.typing, { channelUri: channel.uri });
      expect(ack.type).toBe("ack");
      await b.until(() => b.frames.some((f) => f.type === WsEvent.typing), "typing frame");
      expect(b.frames.find((f) => f.type === WsEvent.typing)?.data).toEqual({
        channelId: channel.id,
        did: member.session.did,
        handle: member.session.handle,
      });
      await Bun.sleep(100);
      expect(c.frames.some((f) => f.type === WsEvent.typing)).toBe(false);
      const after = await ok(t.url, "getMessages", { channelUri: channel.uri, limit: 100 }, owner.token);
      expect(after.records.length).toBe(before.records.length);
      // An outsider cannot type into it; a made-up sender field is refused as bad input.
      const refused = await c.request(WsEvent.typing, { channelUri: channel.uri });
      expect(refused.type).toBe("error");
      expect(refused.data?.error).toBe("Forbidden");
      const forged = await a.request(WsEvent.typing, { channelUri: channel.uri, did: owner.session.did });
      expect(forged.data?.error).toBe("InvalidRequest");
    } finally {
      a.close();
      b.close();
      c.close();
    }
  });

  test("typing is rate-limited per user", async () => {
    const { member, channel } = await room("typing-limit");
    const a = await socket(member);
    try {
      let limited = false;
      for (let n = 0; n < 60 && !limited; n++) {
        const r = await a.request(WsEvent.typing, { channelUri: channel.uri });
        if (r.type === "error") {
          expect(r.data?.error).toBe("RateLimited");
          limited = true;
        }
      }
      expect(limited).toBe(true);
    } finally {
      a.close();
    }
  });
});
