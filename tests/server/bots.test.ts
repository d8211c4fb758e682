/**
 * Bot accounts (issue 29, docs/decisions/bot-tokens.md): a token an owner makes for a bot account of
 * its own, limited to the channels it was given, refused on every account call, revocable, and
 * stopped everywhere (HTTP and socket) by a revocation or by the end of its session.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateIdentity } from "../../core/crypto/index.ts";
import { BotLimits, WsEvent } from "../../core/protocol/index.ts";
import { call, NO_WRITE_LIMITS, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, type Person, person } from "./people.ts";

let t: TestServer;
let owner: Person;
let stranger: Person;
let g: Awaited<ReturnType<typeof createChannel>>;
let h: Awaited<ReturnType<typeof createChannel>>;
let n = 0;

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  owner = await person(t.url, "owner");
  stranger = await person(t.url, "stranger");
  g = await createChannel(t.url, owner, "public", "g");
  h = await createChannel(t.url, owner, "public", "h");
});

afterAll(async () => {
  await t?.stop();
});

async function makeBot(channels: string[], by: Person = owner) {
  const keys = await generateIdentity();
  const handle = `t${++n}${Math.random().toString(36).slice(2, 6)}bot`;
  const r = await ok(t.url, "botCreate", { handle, publicKey: keys.publicKey, channels }, by.token);
  return { ...r, handle: r.bot.handle, keys };
}

describe("making bots", () => {
  test("the owner gets a token once, in the documented shape; the list shows the bot without it", async () => {
    const bot = await makeBot([g.channel.uri]);
    expect(bot.token).toMatch(new RegExp(BotLimits.tokenPattern));
    expect(bot.bot).toMatchObject({ channels: [g.channel.uri], revokedAt: null });
    const { bots } = await ok(t.url, "botList", {}, owner.token);
    const listed = bots.find((b) => b.did === bot.bot.did);
    expect(listed).toEqual(bot.bot);
    expect(JSON.stringify(bots)).not.toContain(bot.token.slice(21));
    // The server keeps only the hash of the secret.
    const row = await t.storage.bots.byDid(bot.bot.did);
    expect(row?.tokenHash).not.toContain(bot.token.slice(21));
    expect(JSON.stringify(row)).not.toContain(bot.token.slice(21));
  });

  test("refused: a name not ending in bot, a taken handle, a channel the owner is not in, a bot making a bot", async () => {
    const keys = await generateIdentity();
    const bad = await call(
      t.url,
      "botCreate",
      { handle: "helper", publicKey: keys.publicKey, channels: [g.channel.uri] },
      owner.token,
    );
    expect(bad.status).toBe(422);
    const taken = await call(
      t.url,
      "botCreate",
      { handle: owner.name, publicKey: keys.publicKey, channels: [g.channel.uri] },
      owner.token,
    );
    expect(taken.status).toBe(422); // the owner's own handle does not end in "bot"
    const first = await makeBot([g.channel.uri]);
    const again = await call(
      t.url,
      "botCreate",
      { handle: first.handle, publicKey: keys.publicKey, channels: [g.channel.uri] },
      owner.token,
    );
    expect(again.status).toBe(409);
    const notIn = await call(
      t.url,
      "botCreate",
      { handle: "strangebot", publicKey: keys.publicKey, channels: [g.channel.uri] },
      stranger.token,
    );
    expect(notIn.status).toBe(403);
    const byBot = await call(
      t.url,
      "botCreate",
      { handle: "childbot", publicKey: keys.publicKey, channels: [g.channel.uri] },
      first.token,
    );
    expect(byBot.status).toBe(403);
  });

  test("nobody signs in to a bot account with a password", async () => {
    const bot = await makeBot([g.channel.uri]);
    const r = await call(t.url, "login", { identifier: bot.handle, password: "correct horse battery" });
    expect(r.status).toBe(401);
  });
});

describe("what a bot token reaches", () => {
  test("its own channels only, over HTTP", async () => {
    const bot = await makeBot([g.channel.uri]);
    const me = await ok(t.url, "session", {}, bot.token);
    expect(me.did).toBe(bot.bot.did);
    expect(await ok(t.url, "botSelf", {}, bot.token)).toMatchObject({
      did: bot.bot.did,
      owner: { did: owner.session.did },
      channels: [g.channel.uri],
    });
    expect((await call(t.url, "joinChannel", { channelUri: g.channel.uri }, bot.token)).status).toBe(200);
    // h exists, is public, and anyone else could join it: not this token.
    for (const [name, body] of [
      ["joinChannel", { channelUri: h.channel.uri }],
      ["getMessages", { channelUri: h.channel.uri }],
      ["getMembers", { channelUri: h.channel.uri }],
      ["getEpochKeys", { channelUri: h.channel.uri }],
      ["getEpochInfo", { channelUri: h.channel.uri }],
    ] as const) {
      const r = await call(t.url, name, body, bot.token);
      expect({ name, status: r.status, error: r.body.error }).toEqual({
        name,
        status: 403,
        error: "Forbidden",
      });
    }
    const listed = await ok(t.url, "getChannels", {}, bot.token);
    expect(listed.channels.map((c) => c.id)).toEqual([g.channel.id]);
    expect((await call(t.url, "getMessages", { channelUri: g.channel.uri }, bot.token)).status).toBe(200);
  });

  test("no account calls: keys, backups, trust state, device links, invites, kicks, channels, bots", async () => {
    const bot = await makeBot([g.channel.uri]);
    const keys = await generateIdentity();
    for (const [name, body] of [
      ["savePublicKey", { publicKey: keys.publicKey, replace: true }],
      ["keyBackupGet", undefined],
      ["keyBackupDelete", undefined],
      ["trustStateGet", undefined],
      ["deviceLinkOpen", { code: "botlink-0001", ephemeralPublicKey: keys.publicKey }],
      ["createChannel", { name: "botroom", type: "public" }],
      ["kick", { channelUri: g.channel.uri, did: owner.session.did }],
      ["botList", {}],
      ["botRevoke", { handle: bot.handle }],
    ] as const) {
      const r = await call(t.url, name, body, bot.token);
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
    }
    // A bot token is not a refresh token and cannot be traded for a session.
    expect((await call(t.url, "refresh", {}, bot.token)).status).toBe(401);
    expect((await call(t.url, "authorize", { did: bot.bot.did, accessJwt: bot.token })).status).toBe(401);
  });

  test("its own channels only, over the socket", async () => {
    const bot = await makeBot([g.channel.uri]);
    const s = await TestSocket.connect(t.wsUrl, bot.token);
    try {
      const refused = await s.request(WsEvent.channelJoin, { channelUri: h.channel.uri });
      expect(refused).toMatchObject({ type: "error", data: { error: "Forbidden" } });
      const joined = await s.request(WsEvent.channelJoin, { channelUri: g.channel.uri });
      expect(joined.type).toBe("ack");
    } finally {
      s.close();
    }
  });

  test("a wrong secret, an unknown id or a cut token is the same 401", async () => {
    const bot = await makeBot([g.channel.uri]);
    const last = bot.token.at(-1) === "a" ? "b" : "a";
    const wrongSecret = bot.token.slice(0, -1) + last;
    const unknownId = `wsb_${"a".repeat(16)}${bot.token.slice(20)}`;
    for (const token of [wrongSecret, unknownId, bot.token.slice(0, -1), `${bot.token}x`]) {
      const r = await call(t.url, "session", {}, token);
      expect(r.status).toBe(401);
      expect(r.body.message).toBe("Session is no longer valid");
    }
  });
});

describe("revoking", () => {
  test("only the owner revokes; the token stops over HTTP and the socket closes; the bot leaves its channels", async () => {
    const bot = await makeBot([g.channel.uri]);
    await ok(t.url, "joinChannel", { channelUri: g.channel.uri }, bot.token);
    const s = await TestSocket.connect(t.wsUrl, bot.token);
    expect((await s.request(WsEvent.channelJoin, { channelUri: g.channel.uri })).type).toBe("ack");
    // Someone else's bot is "not found", exactly like a bot that does not exist.
    const foreign = await call(t.url, "botRevoke", { handle: bot.handle }, stranger.token);
    expect(foreign.status).toBe(404);
    expect((await call(t.url, "session", {}, bot.token)).status).toBe(200);

    await ok(t.url, "botRevoke", { handle: bot.handle }, owner.token);
    expect(await s.waitClose(10_000)).toBeGreaterThanOrEqual(4000);
    const after = await call(t.url, "session", {}, bot.token);
    expect(after.status).toBe(401);
    expect((await call(t.url, "getMessages", { channelUri: g.channel.uri }, bot.token)).status).toBe(401);
    const { members } = await ok(t.url, "getMembers", { channelUri: g.channel.uri }, owner.token);
    expect(members.map((m) => m.did)).not.toContain(bot.bot.did);
    const { bots } = await ok(t.url, "botList", {}, owner.token);
    expect(bots.find((b) => b.did === bot.bot.did)?.revokedAt).toEqual(expect.any(String));
    // Revoking again is not an error; a new socket is refused.
    await ok(t.url, "botRevoke", { handle: bot.handle }, owner.token);
    const again = await TestSocket.open(t.wsUrl);
    again.sendRaw(JSON.stringify({ type: "auth", data: { token: bot.token } }));
    expect(await again.waitClose(10_000)).toBeGreaterThanOrEqual(4000);
  });

  test("a bot token whose session was ended (by any means) stops too", async () => {
    const bot = await makeBot([g.channel.uri]);
    const row = await t.storage.bots.byDid(bot.bot.did);
    if (!row) throw new Error("no bot row");
    await t.storage.sessions.revoke(row.sessionId, Date.now());
    expect((await call(t.url, "session", {}, bot.token)).status).toBe(401);
  });
});
