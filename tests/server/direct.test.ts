/**
 * Issue 30, server: direct conversations. Run on SQLite, and on PostgreSQL when
 * WSYNC_TEST_DATABASE_URL is set (the unique key on a pair is each backend's own SQL).
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Channel } from "../../core/protocol/index.ts";
import { type Backend, openConversation, signedInvite, startOn } from "./direct-harness.ts";
import { call, NO_WRITE_LIMITS, ok, type TestServer } from "./harness.ts";
import { createChannel, invite, type Person, person } from "./people.ts";
import { dropAll, PG_URL } from "./pg-harness.ts";
import { device, rotate3, seal3 } from "./v3-people.ts";

const backends: Backend[] = PG_URL ? ["sqlite", "postgres"] : ["sqlite"];
if (!PG_URL) {
  test("direct conversations on PostgreSQL: not run (set WSYNC_TEST_DATABASE_URL)", () => {
    console.log("direct conversations on PostgreSQL not run: set WSYNC_TEST_DATABASE_URL");
  });
}
afterAll(() => dropAll());

const uriOf = (c: { channel: Channel }) => c.channel.uri;

for (const backend of backends) {
  describe(`direct conversations (${backend})`, () => {
    let t: TestServer;
    const started = async (env: Record<string, string> = NO_WRITE_LIMITS) => {
      t = await startOn(backend, env);
      return t;
    };
    const stop = () => t?.stop();

    test("opens from both sides at once land on one conversation per pair", async () => {
      await started();
      try {
        for (let round = 0; round < 4; round++) {
          const a = await person(t.url, "alice");
          const b = await person(t.url, "bob");
          const [fromA, fromB, againA] = await Promise.all([
            ok(t.url, "dmOpen", { handles: [b.session.handle] }, a.token),
            ok(t.url, "dmOpen", { handles: [a.session.handle] }, b.token),
            ok(t.url, "dmOpen", { handles: [`@${b.session.handle}`] }, a.token),
          ]);
          expect(fromB.conversation.channel.id).toBe(fromA.conversation.channel.id);
          expect(againA.conversation.channel.id).toBe(fromA.conversation.channel.id);
          expect([fromA.created, fromB.created, againA.created].filter(Boolean)).toHaveLength(1);
          expect(fromA.conversation.kind).toBe("pair");
          expect(fromA.conversation.channel.value.type).toBe("direct");
          expect(fromA.members.map((m) => m.did).sort()).toEqual([a.session.did, b.session.did].sort());
          const listA = await ok(t.url, "dmList", {}, a.token);
          expect(listA.conversations.map((c) => c.channel.id)).toEqual([fromA.conversation.channel.id]);
        }
      } finally {
        await stop();
      }
    });

    test("never in browse; invisible (404) to a third user; no owner powers, no joining", async () => {
      await started();
      try {
        const [a, b, c] = [
          await person(t.url, "alice"),
          await person(t.url, "bob"),
          await person(t.url, "carol"),
        ];
        const { conversation } = await openConversation(t.url, a, [b]);
        const uri = uriOf(conversation);
        for (const who of [a, b, c]) {
          const { channels } = await ok(t.url, "getChannels", {}, who.token);
          expect(channels.some((ch) => ch.id === conversation.channel.id)).toBe(false);
        }
        for (const [name, body] of [
          ["getMembers", { channelUri: uri }],
          ["getEpochInfo", { channelUri: uri }],
          ["getEpochKeys", { channelUri: uri }],
          ["getMessages", { channelUri: uri }],
          ["joinChannel", { channelUri: uri }],
          ["leaveChannel", { channelUri: uri }],
          ["dmAccept", { channelUri: uri }],
        ] as const) {
          const r = await call(t.url, name, body, c.token);
          expect({ name, status: r.status, error: r.body.error }).toEqual({
            name,
            status: 404,
            error: "NotFound",
          });
        }
        // Nobody owns it: no kicking, and no third person in a one-to-one conversation.
        expect(conversation.channel.owner).toBeNull();
        const kick = await call(t.url, "kick", { channelUri: uri, did: b.session.did }, a.token);
        expect(kick.status).toBe(403);
        const grow = await call(
          t.url,
          "invite",
          {
            channelUri: uri,
            handle: c.session.handle,
            ...(await signedInvite(a, conversation.channel.id, c.session)),
          },
          a.token,
        );
        expect(grow.status).toBe(403);
        expect((await ok(t.url, "getMembers", { channelUri: uri }, a.token)).members).toHaveLength(2);
        // /channel/create never makes one.
        const made = await call(t.url, "createChannel", { name: "x", type: "direct" }, a.token);
        expect(made.status).toBe(422);
      } finally {
        await stop();
      }
    });

    test("epoch 1 is wrapped to both; bob (never online for it) reads; only the opener makes it", async () => {
      await started();
      try {
        const [a, b] = [await person(t.url, "alice"), await person(t.url, "bob")];
        const res = await ok(t.url, "dmOpen", { handles: [b.session.handle] }, a.token);
        const ch = res.conversation.channel;
        // Bob cannot make the first epoch: the admission evidence is the opener's to sign.
        const byBob = await rotate3(t.url, b, ch, { reason: "create" });
        expect(byBob.res.status).toBe(422);
        // Without bob's signed invite, the opener's epoch 1 is refused too.
        const early = await rotate3(t.url, a, ch, { reason: "create" });
        expect(early.res.status).toBe(422);
        expect(String(early.res.body.message)).toContain(b.session.did);
        await ok(
          t.url,
          "invite",
          { channelUri: ch.uri, handle: b.session.handle, ...(await signedInvite(a, ch.id, b.session)) },
          a.token,
        );
        const made = await rotate3(t.url, a, ch, { reason: "create" });
        expect(made.res.status).toBe(200);
        const { epochKeys } = await ok(t.url, "getEpochKeys", { channelUri: ch.uri }, b.token);
        expect(epochKeys.map((k) => k.epochNumber)).toEqual([1]);
        const info = await ok(t.url, "getEpochInfo", { channelUri: ch.uri }, b.token);
        expect(info.epochInfo.admissions[b.session.did]?.kind).toBe("invite");
      } finally {
        await stop();
      }
    });

    test("message requests: a stranger's conversation is a request; someone who shares a channel is not", async () => {
      await started();
      try {
        const [a, b, c] = [
          await person(t.url, "alice"),
          await person(t.url, "bob"),
          await person(t.url, "carol"),
        ];
        const ch = (await createChannel(t.url, c, "invite")).channel;
        await invite(t.url, c, ch, b);
        await ok(t.url, "joinChannel", { channelUri: ch.uri }, b.token);
        const fromStranger = (await openConversation(t.url, a, [b])).conversation;
        const fromCarol = (await openConversation(t.url, c, [b])).conversation;
        let list = await ok(t.url, "dmList", {}, b.token);
        const flags = Object.fromEntries(list.conversations.map((x) => [x.channel.id, x.request]));
        expect(flags).toEqual({ [fromStranger.channel.id]: true, [fromCarol.channel.id]: false });
        // The opener's own view is never a request.
        expect((await ok(t.url, "dmList", {}, a.token)).conversations[0]?.request).toBe(false);
        await ok(t.url, "dmAccept", { channelUri: fromStranger.channel.uri }, b.token);
        list = await ok(t.url, "dmList", {}, b.token);
        expect(list.conversations.find((x) => x.channel.id === fromStranger.channel.id)?.request).toBe(false);
        // Once bob took alice in, her next conversation with him is no request either.
        const group = (await openConversation(t.url, a, [b, c])).conversation;
        list = await ok(t.url, "dmList", {}, b.token);
        expect(list.conversations.find((x) => x.channel.id === group.channel.id)?.request).toBe(false);
      } finally {
        await stop();
      }
    });

    test("blocks: the blocked person's sends are refused and their new conversations not shown", async () => {
      await started();
      try {
        const [a, b, c] = [
          await person(t.url, "alice"),
          await person(t.url, "bob"),
          await person(t.url, "carol"),
        ];
        const { conversation, epoch } = await openConversation(t.url, a, [b]);
        if (!epoch) throw new Error("no epoch");
        const dev = device();
        await ok(t.url, "send", await seal3(a, conversation.channel, epoch, "hello", dev.next()), a.token);
        await ok(t.url, "dmBlock", { did: a.session.did }, b.token);
        expect((await ok(t.url, "dmList", {}, b.token)).blocked.map((x) => x.did)).toEqual([a.session.did]);
        // Alice's request is gone from bob's list; her sends are refused.
        expect((await ok(t.url, "dmList", {}, b.token)).conversations).toHaveLength(0);
        const refused = await call(
          t.url,
          "send",
          await seal3(a, conversation.channel, epoch, "still there?", dev.next()),
          a.token,
        );
        expect(refused.status).toBe(403);
        // A new conversation she opens with bob (and carol) is not shown to him.
        const group = (await openConversation(t.url, a, [b, c])).conversation;
        const bobs = await ok(t.url, "dmList", {}, b.token);
        expect(bobs.conversations.some((x) => x.channel.id === group.channel.id)).toBe(false);
        expect((await ok(t.url, "dmList", {}, c.token)).conversations.map((x) => x.channel.id)).toEqual([
          group.channel.id,
        ]);
        // Bob can still write to her; once unblocked, so can she.
        await ok(t.url, "send", await seal3(b, conversation.channel, epoch, "no", device().next()), b.token);
        await ok(t.url, "dmUnblock", { did: a.session.did }, b.token);
        await ok(t.url, "send", await seal3(a, conversation.channel, epoch, "sorry", dev.next()), a.token);
        expect((await call(t.url, "dmBlock", { did: b.session.did }, b.token)).status).toBe(422);
      } finally {
        await stop();
      }
    });

    test("groups of up to 9; adding rotates; notes to self are unique; deleting a pair hides it", async () => {
      await started();
      try {
        const people: Person[] = [];
        for (let i = 0; i < 10; i++) people.push(await person(t.url, `p${i}`));
        const [a, ...rest] = people as [Person, ...Person[]];
        const tooMany = await call(t.url, "dmOpen", { handles: rest.map((p) => p.session.handle) }, a.token);
        expect(tooMany.status).toBe(422);
        const { conversation: g } = await openConversation(t.url, a, rest.slice(0, 7), "planning");
        expect(g.kind).toBe("group");
        expect(g.channel.value.name).toBe("planning");
        // A member adds the 9th person: an invite they sign, then the next epoch (rotation).
        const ninth = rest[7] as Person;
        await ok(
          t.url,
          "invite",
          {
            channelUri: g.channel.uri,
            handle: ninth.session.handle,
            ...(await signedInvite(a, g.channel.id, ninth.session)),
          },
          a.token,
        );
        const info = await ok(t.url, "getEpochInfo", { channelUri: g.channel.uri }, a.token);
        expect(info.epochInfo.rotationRequired).toBe(true);
        expect((await rotate3(t.url, a, g.channel, { reason: "join" })).res.status).toBe(200);
        const tenth = rest[8] as Person;
        const full = await call(
          t.url,
          "invite",
          {
            channelUri: g.channel.uri,
            handle: tenth.session.handle,
            ...(await signedInvite(a, g.channel.id, tenth.session)),
          },
          a.token,
        );
        expect(full.status).toBe(403);
        // Notes to self: one per user, whatever the route is given.
        const self1 = await ok(t.url, "dmOpen", { handles: [] }, a.token);
        const self2 = await ok(t.url, "dmOpen", { handles: [a.session.handle] }, a.token);
        expect(self1.conversation.kind).toBe("self");
        expect(self2.conversation.channel.id).toBe(self1.conversation.channel.id);
        expect(self2.created).toBe(false);
        // Deleting a one-to-one conversation hides it; it stays the pair's one conversation.
        const b = rest[0] as Person;
        const { conversation: pair } = await openConversation(t.url, a, [b]);
        await ok(t.url, "leaveChannel", { channelUri: pair.channel.uri }, b.token);
        expect(
          (await ok(t.url, "dmList", {}, b.token)).conversations.some(
            (x) => x.channel.id === pair.channel.id,
          ),
        ).toBe(false);
        expect(
          (await ok(t.url, "getMembers", { channelUri: pair.channel.uri }, b.token)).members,
        ).toHaveLength(2);
        const again = await ok(t.url, "dmOpen", { handles: [a.session.handle] }, b.token);
        expect(again.conversation.channel.id).toBe(pair.channel.id);
        expect(
          (await ok(t.url, "dmList", {}, b.token)).conversations.some(
            (x) => x.channel.id === pair.channel.id,
          ),
        ).toBe(true);
      } finally {
        await stop();
      }
    });

    test("opening conversations is rate-limited per user", async () => {
      await started({});
      try {
        const [a, b] = [await person(t.url, "alice"), await person(t.url, "bob")];
        let limited = null;
        for (let i = 0; i < 40 && !limited; i++) {
          const r = await call(t.url, "dmOpen", { handles: [] }, a.token);
          if (r.status === 429) limited = r;
          else expect(r.status).toBe(200);
        }
        expect(limited?.body.error).toBe("RateLimited");
        expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
        // Another user's bucket is their own.
        expect((await call(t.url, "dmOpen", { handles: [] }, b.token)).status).toBe(200);
      } finally {
        await stop();
      }
    });
  });
}
