/**
 * Protocol v2 (§7) secret links: the server only ever holds a join token derived from a link secret
 * that members know, a kick voids it at once, the next epoch must bring a new one, and a link join
 * must carry the joiner's own link proof (the server checks what it can; members check the MAC).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeLinkProof, newLinkSecret } from "../../core/crypto/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, linkJoinBody, type Person, person, rotate } from "./people.ts";

let t: TestServer;
let alice: Person;
let bob: Person;
let carol: Person;
let dave: Person;

beforeAll(async () => {
  t = await startTestServer();
  alice = await person(t.url, "alice");
  bob = await person(t.url, "bob");
  carol = await person(t.url, "carol");
  dave = await person(t.url, "dave");
});
afterAll(() => t.stop());

const memberDids = async (channel: Channel) =>
  (await ok(t.url, "getMembers", { channelUri: channel.uri }, alice.token)).members.map((m) => m.did);

test("a kick voids the join token at once; the next epoch must bring a new one, which then admits", async () => {
  const { channel, linkSecret } = await createChannel(t.url, alice, "secret");
  const old = linkSecret as string;
  await ok(t.url, "joinChannel", await linkJoinBody(bob, channel, old), bob.token);
  expect((await rotate(t.url, bob, channel, { reason: "join", linkSecret: old })).res.status).toBe(200);

  await ok(t.url, "kick", { channelUri: channel.uri, did: bob.session.did }, alice.token);
  // Immediately: the old link admits nobody, exactly as if the channel did not exist.
  for (const who of [bob, carol]) {
    const r = await call(t.url, "joinChannel", await linkJoinBody(who, channel, old), who.token);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("NotFound");
  }
  const voided = await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, alice.token);
  expect(voided.epochInfo).toMatchObject({ rotationRequired: true, linkRotationRequired: true });

  // An epoch for the remaining members without a new link is refused, and stores nothing.
  const without = await rotate(t.url, alice, channel, { reason: "kick", linkSecret: old, noJoinToken: true });
  expect(without.res.status).toBe(409);
  expect(without.res.body.error).toBe("RotationRequired");
  expect(
    (await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, alice.token)).epochInfo.epochNumber,
  ).toBe(2);

  const fresh = await rotate(t.url, alice, channel, { reason: "kick", newLink: true });
  expect(fresh.res.status).toBe(200);
  const after = await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, alice.token);
  expect(after.epochInfo).toMatchObject({
    epochNumber: 3,
    rotationRequired: false,
    linkRotationRequired: false,
  });
  // The old link stays dead; the new one admits.
  expect(
    (await call(t.url, "joinChannel", await linkJoinBody(carol, channel, old), carol.token)).status,
  ).toBe(404);
  const joined = await call(
    t.url,
    "joinChannel",
    await linkJoinBody(carol, channel, fresh.linkSecret as string),
    carol.token,
  );
  expect(joined.status).toBe(200);
  expect(await memberDids(channel)).toContain(carol.session.did);
  expect(await memberDids(channel)).not.toContain(bob.session.did);
});

test("leaving does not void the link (only a kick does)", async () => {
  const { channel, linkSecret } = await createChannel(t.url, alice, "secret");
  await ok(t.url, "joinChannel", await linkJoinBody(bob, channel, linkSecret as string), bob.token);
  await ok(t.url, "leaveChannel", { channelUri: channel.uri }, bob.token);
  const info = await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, alice.token);
  expect(info.epochInfo.linkRotationRequired).toBe(false);
  expect(
    (await call(t.url, "joinChannel", await linkJoinBody(carol, channel, linkSecret as string), carol.token))
      .status,
  ).toBe(200);
});

test("any member may set a new link with an epoch; the previous token stops working", async () => {
  const { channel, linkSecret } = await createChannel(t.url, alice, "secret");
  await ok(t.url, "joinChannel", await linkJoinBody(bob, channel, linkSecret as string), bob.token);
  const r = await rotate(t.url, bob, channel, { reason: "manual", newLink: true });
  expect(r.res.status).toBe(200);
  expect(
    (await call(t.url, "joinChannel", await linkJoinBody(carol, channel, linkSecret as string), carol.token))
      .status,
  ).toBe(404);
  expect(
    (
      await call(
        t.url,
        "joinChannel",
        await linkJoinBody(carol, channel, r.linkSecret as string),
        carol.token,
      )
    ).status,
  ).toBe(200);
});

test("a link join needs the joiner's own link proof: missing or misdirected is 422 and joins nobody", async () => {
  const { channel, linkSecret } = await createChannel(t.url, alice, "secret");
  const secret = linkSecret as string;
  const good = await linkJoinBody(carol, channel, secret);
  const proof = good.admission as NonNullable<typeof good.admission>;
  const cases: [string, Record<string, unknown>][] = [
    ["admission", { channelUri: channel.uri, joinToken: good.joinToken }],
    ["admission.did", { ...good, admission: (await linkJoinBody(dave, channel, secret)).admission }],
    ["admission.fp", { ...good, admission: { ...proof, fp: dave.fp } }],
    [
      "admission.channelId",
      {
        ...good,
        admission: await makeLinkProof({
          linkSecret: secret,
          channelId: "aaaaaaaaaaaaaaaa",
          did: carol.session.did,
          fp: carol.fp,
          createdAt: Date.now(),
        }),
      },
    ],
  ];
  for (const [field, body] of cases) {
    const r = await call(t.url, "joinChannel", body, carol.token);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("InvalidRequest");
    expect(r.body.message).toStartWith(`${field}: `);
  }
  // A wrong token is NotFound before anything about the admission is looked at.
  const wrongToken = await linkJoinBody(carol, channel, newLinkSecret());
  const r = await call(t.url, "joinChannel", { ...wrongToken, admission: undefined }, carol.token);
  expect(r.status).toBe(404);
  expect(await memberDids(channel)).toEqual([alice.session.did]);
  const info = await ok(t.url, "getEpochInfo", { channelUri: channel.uri }, alice.token);
  expect(info.epochInfo.rotationRequired).toBe(false);
  // The server cannot check the MAC (members do): a proof made with another secret is stored as given.
  const forgedMac = { ...good, admission: { ...proof, mac: Buffer.alloc(32, 7).toString("base64") } };
  expect((await call(t.url, "joinChannel", forgedMac, carol.token)).status).toBe(200);
});

test("channel:join over the socket takes the same link and proof, and channel:joined shows the evidence", async () => {
  const { channel, linkSecret } = await createChannel(t.url, alice, "secret");
  const ws = await TestSocket.connect(t.wsUrl, dave.token);
  const noProof = await ws.request("channel:join", {
    channelUri: channel.uri,
    joinToken: (await linkJoinBody(dave, channel, linkSecret as string)).joinToken,
  });
  expect(noProof).toMatchObject({ type: "error", data: { error: "InvalidRequest" } });
  const ack = await ws.request("channel:join", await linkJoinBody(dave, channel, linkSecret as string));
  expect(ack.type).toBe("ack");
  const joined = await ws.waitFor((f) => f.type === "channel:joined");
  const members = joined.data.members as { did: string; admission: unknown }[];
  expect(members.find((m) => m.did === dave.session.did)?.admission).toMatchObject({
    kind: "link",
    proof: { channelId: channel.id, did: dave.session.did, fp: dave.fp },
  });
  expect(members.find((m) => m.did === alice.session.did)?.admission).toBeNull();
  expect(joined.data.epochInfo).toMatchObject({
    rotationRequired: true,
    linkRotationRequired: false,
    admissions: {},
  });
  ws.close();
});
