/**
 * Protocol v2 (§7) invites: the server stores an invite only when it is the caller's own signed
 * statement naming this channel and the resolved invitee, and only such an invite admits. Plus the
 * /users/resolve route a client uses to learn the invitee's did before signing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signObject } from "../../core/crypto/index.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, inviteBody, type Person, person } from "./people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;
let mallory: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  bob = await person(t.url, "bob");
  mallory = await person(t.url, "mallory");
});
afterAll(() => t.stop());

const DAY = 24 * 60 * 60 * 1000;

test("forged or misdirected invites are refused with 422 naming the field, and nothing is stored", async () => {
  const { channel } = await createChannel(t.url, alice, "invite");
  const other = await createChannel(t.url, alice, "invite");
  const good = await inviteBody(alice, channel, bob.session);
  const cases: [string, unknown][] = [
    // Signed by someone else (mallory's key), claiming to be alice's.
    ["signature", { ...good, signature: await signObject(mallory.identity, good.invite) }],
    // Tampered after signing.
    ["signature", { ...good, invite: { ...good.invite, createdAt: good.invite.createdAt + 1 } }],
    // Naming another invitee than the handle resolves to.
    ["invite.inviteeDid", await inviteBody(alice, channel, bob.session, { inviteeDid: mallory.session.did })],
    // Made for another channel.
    [
      "invite.channelId",
      { ...(await inviteBody(alice, other.channel, bob.session)), channelUri: channel.uri },
    ],
    // Naming another inviter.
    ["invite.inviterDid", await inviteBody(alice, channel, bob.session, { inviterDid: mallory.session.did })],
    // Too old, or from the future.
    [
      "invite.createdAt",
      await inviteBody(alice, channel, bob.session, { createdAt: Date.now() - DAY - 60_000 }),
    ],
    [
      "invite.createdAt",
      await inviteBody(alice, channel, bob.session, { createdAt: Date.now() + DAY + 60_000 }),
    ],
  ];
  for (const [field, body] of cases) {
    const r = await call(t.url, "invite", body as Record<string, unknown>, alice.token);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("InvalidRequest");
    expect(r.body.message).toStartWith(`${field}: `);
  }
  expect((await ok(t.url, "getInvites", {}, bob.token)).invites).toEqual([]);
  expect(await t.storage.channels.invite(channel.id, bob.session.did)).toBeNull();
  const join = await call(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect(join.status).toBe(403);
  expect(join.body.error).toBe("InviteRequired");
});

test("a non-member cannot invite, even with a validly signed invite of their own", async () => {
  const { channel } = await createChannel(t.url, alice, "invite");
  const r = await call(t.url, "invite", await inviteBody(mallory, channel, bob.session), mallory.token);
  expect(r.status).toBe(403);
  expect(await t.storage.channels.invite(channel.id, bob.session.did)).toBeNull();
});

test("a valid invite is stored, replaces an earlier one, and becomes the joiner's admission", async () => {
  const { channel } = await createChannel(t.url, alice, "invite");
  await ok(t.url, "invite", await inviteBody(alice, channel, bob.session), alice.token);
  // The handle is normalised as for login: without its suffix, in capitals.
  const name = bob.session.handle.split(".")[0] as string;
  const second = await inviteBody(alice, channel, { did: bob.session.did, handle: name.toUpperCase() });
  await ok(t.url, "invite", second, alice.token);
  const stored = await t.storage.channels.invite(channel.id, bob.session.did);
  expect(stored?.signed).toEqual({ invite: second.invite, signature: second.signature });
  const joined = await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect(joined.members.find((m) => m.did === bob.session.did)?.admission).toEqual({
    kind: "invite",
    invite: second.invite,
    signature: second.signature,
  });
});

test("an invite stored before v2 (unsigned) no longer admits: ask for a new invite", async () => {
  for (const type of ["invite", "secret"] as const) {
    const { channel } = await createChannel(t.url, alice, type);
    await t.storage.channels.addInvite({
      channelId: channel.id,
      inviteeDid: bob.session.did,
      fromDid: alice.session.did,
      createdAt: Date.now(),
    });
    const r = await call(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("InviteRequired");
    expect(r.body.message).toContain("new invite");
    const { members } = await ok(t.url, "getMembers", { channelUri: channel.uri }, alice.token);
    expect(members.map((m) => m.did)).toEqual([alice.session.did]);
  }
});

test("a signed invite admits to a secret channel without its link", async () => {
  const { channel } = await createChannel(t.url, alice, "secret");
  await ok(t.url, "invite", await inviteBody(alice, channel, bob.session), alice.token);
  const joined = await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect(joined.members.find((m) => m.did === bob.session.did)?.admission?.kind).toBe("invite");
});

test("resolve: a handle's did and key; unknown 404; no token 401", async () => {
  const found = await ok(t.url, "resolveUser", { handle: bob.session.handle }, alice.token);
  expect(found).toEqual({
    did: bob.session.did,
    handle: bob.session.handle,
    publicKey: bob.publicKey,
    fingerprint: bob.fp,
  });
  const short = bob.session.handle.split(".")[0] as string;
  expect(await ok(t.url, "resolveUser", { handle: ` ${short.toUpperCase()} ` }, alice.token)).toEqual(found);
  for (const handle of ["no-such-user", "-x-", "a"]) {
    const r = await call(t.url, "resolveUser", { handle }, alice.token);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("NotFound");
  }
  const anon = await call(t.url, "resolveUser", { handle: bob.session.handle });
  expect(anon.status).toBe(401);
  expect(anon.body).not.toHaveProperty("did");
});
