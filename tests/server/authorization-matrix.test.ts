/**
 * The authorization matrix: who may do what in which kind of channel, as a table. Each cell runs
 * against a fresh channel on a real server, so one cell's effects (a join, a kick) never leak into
 * another. 404 means the caller may not even learn that the channel (or message) exists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Channel } from "../../core/protocol/index.ts";
import { call, NO_WRITE_LIMITS, ok, startTestServer, type TestServer } from "./harness.ts";
import {
  createChannel,
  deletionBody,
  invite,
  inviteBody,
  linkJoinBody,
  type Person,
  person,
  rotate,
  seal,
} from "./people.ts";

type Role = "anonymous" | "non-member" | "invited" | "member" | "owner";
type Kind = "public" | "invite" | "secret";
type Action = "list" | "join" | "read" | "send" | "epoch-keys" | "invite" | "kick" | "delete";

// For `list`, 200 means the channel appears in get-channels and "hidden" that it does not.
const MATRIX: Record<Role, Record<Kind, Record<Action, number | "hidden">>> = {
  anonymous: {
    public: {
      list: 401,
      join: 401,
      read: 401,
      send: 401,
      "epoch-keys": 401,
      invite: 401,
      kick: 401,
      delete: 401,
    },
    invite: {
      list: 401,
      join: 401,
      read: 401,
      send: 401,
      "epoch-keys": 401,
      invite: 401,
      kick: 401,
      delete: 401,
    },
    secret: {
      list: 401,
      join: 401,
      read: 401,
      send: 401,
      "epoch-keys": 401,
      invite: 401,
      kick: 401,
      delete: 401,
    },
  },
  "non-member": {
    public: {
      list: 200,
      join: 200,
      read: 403,
      send: 403,
      "epoch-keys": 403,
      invite: 403,
      kick: 403,
      delete: 404,
    },
    invite: {
      list: 200,
      join: 403,
      read: 403,
      send: 403,
      "epoch-keys": 403,
      invite: 403,
      kick: 403,
      delete: 404,
    },
    secret: {
      list: "hidden",
      join: 404,
      read: 404,
      send: 404,
      "epoch-keys": 404,
      invite: 404,
      kick: 404,
      delete: 404,
    },
  },
  invited: {
    public: {
      list: 200,
      join: 200,
      read: 403,
      send: 403,
      "epoch-keys": 403,
      invite: 403,
      kick: 403,
      delete: 404,
    },
    invite: {
      list: 200,
      join: 200,
      read: 403,
      send: 403,
      "epoch-keys": 403,
      invite: 403,
      kick: 403,
      delete: 404,
    },
    secret: {
      list: "hidden",
      join: 200,
      read: 403,
      send: 403,
      "epoch-keys": 403,
      invite: 403,
      kick: 403,
      delete: 404,
    },
  },
  member: {
    public: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 403,
      delete: 403,
    },
    invite: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 403,
      delete: 403,
    },
    secret: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 403,
      delete: 403,
    },
  },
  owner: {
    public: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 200,
      delete: 200,
    },
    invite: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 200,
      delete: 200,
    },
    secret: {
      list: 200,
      join: 200,
      read: 200,
      send: 200,
      "epoch-keys": 200,
      invite: 200,
      kick: 200,
      delete: 200,
    },
  },
};

let t: TestServer;
let owner: Person;
let member: Person;
let victim: Person;
let invited: Person;
let outsider: Person;
let guest: Person;

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  owner = await person(t.url, "owner");
  member = await person(t.url, "member");
  victim = await person(t.url, "victim");
  invited = await person(t.url, "invited");
  outsider = await person(t.url, "outsider");
  guest = await person(t.url, "guest");
});
afterAll(() => t.stop());

interface Fixture {
  channel: Channel;
  epoch: { epochId: string; epochNumber: number; epochKey: Uint8Array };
  victimMessageUri: string;
}

/** A channel with an owner, two members (one of them the "victim" of kicks and deletes) and an invitee. */
async function fixture(kind: Kind): Promise<Fixture> {
  const { channel, link } = await createChannel(t.url, owner, kind);
  for (const p of [member, victim]) {
    if (kind !== "public") await invite(t.url, owner, channel, p);
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, p.token);
  }
  expect(kind === "secret" ? typeof link : "none").toBe(kind === "secret" ? "string" : "none");
  await invite(t.url, owner, channel, invited);
  const r = await rotate(t.url, owner, channel);
  expect(r.res.status).toBe(200);
  const epoch = { epochId: r.epochId, epochNumber: r.epochNumber, epochKey: r.epochKey };
  const sent = await ok(t.url, "send", await seal(victim, channel, epoch, "victim's message"), victim.token);
  return { channel, epoch, victimMessageUri: sent.record.uri };
}

function actor(role: Role): Person | null {
  return { anonymous: null, "non-member": outsider, invited, member, owner }[role];
}

async function perform(role: Role, action: Action, f: Fixture): Promise<number | "hidden"> {
  const who = actor(role);
  const token = who?.token;
  const channelUri = f.channel.uri;
  switch (action) {
    case "list": {
      const r = await call(t.url, "getChannels", {}, token);
      if (r.status !== 200) return r.status;
      return r.body.channels.some((c) => c.id === f.channel.id) ? 200 : "hidden";
    }
    case "join":
      return (await call(t.url, "joinChannel", { channelUri }, token)).status;
    case "read":
      return (await call(t.url, "getMessages", { channelUri }, token)).status;
    case "send": {
      const body = who
        ? await seal(who, f.channel, f.epoch, "hello")
        : await seal(owner, f.channel, f.epoch, "anonymous");
      return (await call(t.url, "send", body, token)).status;
    }
    case "epoch-keys":
      return (await call(t.url, "getEpochKeys", { channelUri }, token)).status;
    case "invite":
      return (await call(t.url, "invite", await inviteBody(who ?? owner, f.channel, guest.session), token))
        .status;
    case "kick":
      return (await call(t.url, "kick", { channelUri, did: victim.session.did }, token)).status;
    case "delete":
      return (
        await call(
          t.url,
          "deleteMessage",
          await deletionBody(who ?? owner, f.channel, f.victimMessageUri),
          token,
        )
      ).status;
  }
}

/** What must (not) have happened after the action, so a 200 is never just a status. */
async function effect(role: Role, action: Action, f: Fixture, status: number | "hidden"): Promise<void> {
  const channelUri = f.channel.uri;
  if (action === "kick") {
    const { members } = await ok(t.url, "getMembers", { channelUri }, owner.token);
    expect(members.some((m) => m.did === victim.session.did)).toBe(status !== 200);
  }
  if (action === "delete") {
    // A deleted message stays as a tombstone (protocol §7): content wiped, signed deletion kept.
    const { records } = await ok(t.url, "getMessages", { channelUri }, owner.token);
    const record = records.find((r) => r.uri === f.victimMessageUri);
    const value = record?.value as { content?: string; deletion?: unknown } | undefined;
    expect(value?.content === "").toBe(status === 200);
    expect(value?.deletion !== undefined).toBe(status === 200);
  }
  if (action === "join" && role !== "anonymous") {
    const { members } = await ok(t.url, "getMembers", { channelUri }, owner.token);
    expect(members.some((m) => m.did === actor(role)?.session.did)).toBe(status === 200);
  }
}

for (const role of Object.keys(MATRIX) as Role[]) {
  describe(`${role}`, () => {
    for (const kind of ["public", "invite", "secret"] as Kind[]) {
      for (const action of Object.keys(MATRIX[role][kind]) as Action[]) {
        const expected = MATRIX[role][kind][action];
        test(`${kind} channel: ${action} → ${expected}`, async () => {
          const f = await fixture(kind);
          const status = await perform(role, action, f);
          expect(status).toBe(expected);
          await effect(role, action, f, status);
        });
      }
    }
  });
}

test("an author may delete their own message; another member may not", async () => {
  const f = await fixture("public");
  const by = (p: Person) => deletionBody(p, f.channel, f.victimMessageUri);
  expect((await call(t.url, "deleteMessage", await by(member), member.token)).status).toBe(403);
  expect((await call(t.url, "deleteMessage", await by(victim), victim.token)).status).toBe(200);
  expect((await call(t.url, "deleteMessage", await by(victim), victim.token)).status).toBe(404);
});

test("a secret channel's join token is required and checked", async () => {
  const { channel, link } = await createChannel(t.url, owner, "secret");
  const linkSecret = (link as string).split("#")[1] as string;
  const body = await linkJoinBody(outsider, channel, linkSecret);
  const token = body.joinToken as string;
  const wrong = `${token.slice(0, -2)}AA`;
  expect((await call(t.url, "joinChannel", { ...body, joinToken: wrong }, outsider.token)).status).toBe(404);
  // The link secret itself is not the token: the server only ever sees the derived joinToken.
  expect((await call(t.url, "joinChannel", { ...body, joinToken: linkSecret }, outsider.token)).status).toBe(
    404,
  );
  // The link as pasted, or `{id}#{secret}`: the client splits it; the server takes uri + token.
  expect((await call(t.url, "joinChannel", { ...body, channelUri: channel.id }, outsider.token)).status).toBe(
    200,
  );
});
