/**
 * Protocol v3 (§8) invites: a v3 invite into a secret channel must carry `sealedLink` and one into any
 * other channel must not (422 otherwise, nothing stored). A v2 invite (no sealed link) is refused
 * into a secret channel that has a v3 epoch, and one stored before no longer admits there; elsewhere
 * v2 invites work as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signObject } from "../../core/crypto/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, inviteBody, type Person, person } from "./people.ts";
import { createChannel3, fakeSealedLink, invite3Body, rotate3 } from "./v3-people.ts";

let t: TestServer;
let alice: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
});
afterAll(() => t.stop());

const invites = async (who: Person) => (await ok(t.url, "getInvites", {}, who.token)).invites;
const member = async (channel: Channel, did: string) =>
  (await ok(t.url, "getMembers", { channelUri: channel.uri }, alice.token)).members.find(
    (m) => m.did === did,
  );

test("secret channel: a v3 invite without sealedLink is 422 and stores nothing; with it, the invitee joins on it", async () => {
  const bob = await person(t.url, "bob");
  const { channel } = await createChannel3(t.url, alice, "secret");
  const without = await call(t.url, "invite", await invite3Body(alice, channel, bob.session), alice.token);
  expect(without.status).toBe(422);
  expect(without.body.error).toBe("InvalidRequest");
  expect(without.body.message).toStartWith("invite.sealedLink: ");
  expect(await invites(bob)).toEqual([]);

  const body = await invite3Body(alice, channel, bob.session, fakeSealedLink());
  expect((await call(t.url, "invite", body, alice.token)).status).toBe(200);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect((await member(channel, bob.session.did))?.admission).toEqual({
    kind: "invite",
    invite: body.invite,
    signature: body.signature,
  });
  expect((await rotate3(t.url, bob, channel, { reason: "join" })).res.status).toBe(200);
});

test("invite and public channels: a v3 invite with sealedLink is 422; without it, accepted", async () => {
  for (const type of ["invite", "public"] as const) {
    const bob = await person(t.url, "bob");
    const { channel } = await createChannel3(t.url, alice, type);
    const sealed = await call(
      t.url,
      "invite",
      await invite3Body(alice, channel, bob.session, fakeSealedLink()),
      alice.token,
    );
    expect({ type, status: sealed.status }).toEqual({ type, status: 422 });
    expect(sealed.body.message).toStartWith("invite.sealedLink: ");
    expect(await invites(bob)).toEqual([]);
    expect(
      (await call(t.url, "invite", await invite3Body(alice, channel, bob.session), alice.token)).status,
    ).toBe(200);
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  }
});

test("a v2 invite into a secret channel with a v3 epoch is 422; before its first v3 epoch it still works", async () => {
  const [bob, carol] = [await person(t.url, "bob"), await person(t.url, "carol")];
  const v2 = await createChannel(t.url, alice, "secret");
  expect(
    (await call(t.url, "invite", await inviteBody(alice, v2.channel, bob.session), alice.token)).status,
  ).toBe(200);

  const v3 = await createChannel3(t.url, alice, "secret");
  const refused = await call(
    t.url,
    "invite",
    await inviteBody(alice, v3.channel, carol.session),
    alice.token,
  );
  expect(refused.status).toBe(422);
  expect(refused.body.message).toStartWith("invite.v: must be 3");
  expect(await invites(carol)).toEqual([]);
  // Invite channels have no link to seal: a v2 invite there still works after v3.
  const inv = await createChannel3(t.url, alice, "invite");
  expect(
    (await call(t.url, "invite", await inviteBody(alice, inv.channel, carol.session), alice.token)).status,
  ).toBe(200);
});

test("a v2 invite stored before the secret channel's first v3 epoch no longer admits (403 InviteRequired)", async () => {
  const bob = await person(t.url, "bob");
  const { channel } = await createChannel(t.url, alice, "secret");
  await ok(t.url, "invite", await inviteBody(alice, channel, bob.session), alice.token);
  expect((await rotate3(t.url, alice, channel)).res.status).toBe(200);
  const join = await call(t.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  expect(join.status).toBe(403);
  expect(join.body.error).toBe("InviteRequired");
  expect(await member(channel, bob.session.did)).toBeUndefined();
  // A new (v3, sealed) invite admits.
  await ok(t.url, "invite", await invite3Body(alice, channel, bob.session, fakeSealedLink()), alice.token);
  expect((await call(t.url, "joinChannel", { channelUri: channel.uri }, bob.token)).status).toBe(200);
});

test("a v3 invite signed by someone else, or with a malformed sealedLink, is 422", async () => {
  const [bob, mallory] = [await person(t.url, "bob"), await person(t.url, "mallory")];
  const { channel } = await createChannel3(t.url, alice, "secret");
  const body = await invite3Body(alice, channel, bob.session, fakeSealedLink());
  const forged = { ...body, signature: await signObject(mallory.identity, body.invite) };
  const r = await call(t.url, "invite", forged, alice.token);
  expect(r.status).toBe(422);
  expect(r.body.message).toStartWith("signature: ");
  const bad = { ...body, invite: { ...body.invite, sealedLink: { ...fakeSealedLink(), iv: 7 } } };
  const malformed = await call(t.url, "invite", bad, alice.token);
  expect(malformed.status).toBe(422);
  expect(malformed.body.message).toStartWith("invite.sealedLink.iv: ");
  expect(await invites(bob)).toEqual([]);
});
