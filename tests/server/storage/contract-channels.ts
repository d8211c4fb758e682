import { describe, expect, test } from "bun:test";
import type { MemberRow } from "../../../server/storage/types.ts";
import { newChannelId, newDid, sortStrings, type World } from "./fixtures.ts";

export function channelsContract(w: () => World): void {
  describe("channels", () => {
    test("read markers: raised, never lowered, capped at the last seq, listed only for member channels", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      // Nothing written yet: any seq is capped at 0.
      expect((await s.channels.setReadMarker(other.did, channel.id, 7, 1)).seq).toBe(0);
      for (let n = 0; n < 3; n++) await w().message(channel, owner, epochId);
      expect((await s.channels.setReadMarker(other.did, channel.id, 2, 2)).seq).toBe(2);
      // Never back.
      expect((await s.channels.setReadMarker(other.did, channel.id, 1, 3)).seq).toBe(2);
      // Never past the channel's last seq.
      const last = (await s.timeline.page(channel.id, 1, null))[0]?.seq ?? 0;
      expect((await s.channels.setReadMarker(other.did, channel.id, last + 100, 4)).seq).toBe(last);
      expect(await s.channels.readMarkers(other.did)).toEqual([
        { channelId: channel.id, seq: last, signed: null },
      ]);
      expect(await s.channels.readMarkers(owner.did)).toEqual([]);
      // Out of the channel: its marker is no longer listed.
      await s.channels.removeMember(channel.id, other.did);
      expect(await s.channels.readMarkers(other.did)).toEqual([]);
    });

    test("create stores the channel with its creator as the only member, owner, at member version 1", async () => {
      const { s } = w();
      const owner = await w().user();
      const row = w().channelRow(owner, "secret");
      await s.channels.create(row, { did: owner.did, at: row.createdAt });
      expect(await s.channels.get(row.id)).toEqual(row);
      expect(await s.channels.members(row.id)).toEqual([
        {
          channelId: row.id,
          did: owner.did,
          handle: owner.handle,
          role: "owner",
          joinedAt: row.createdAt,
          publicKey: owner.publicKey,
          fingerprint: owner.fingerprint,
          admission: null,
          atproto: false,
        },
      ]);
      const st = await s.epochs.state(row.id);
      expect(st.current).toBeNull();
      expect(st.memberVersion).toBe(1);
    });

    test("create makes the owner argument the owner and starts at member version 1, whatever the row says", async () => {
      const { s } = w();
      const owner = await w().user();
      const row = w().channelRow(owner, "public", { ownerDid: newDid(), memberVersion: 7 });
      await s.channels.create(row, { did: owner.did, at: row.createdAt });
      const got = await s.channels.get(row.id);
      expect(got?.ownerDid).toBe(owner.did);
      expect(got?.memberVersion).toBe(1);
      expect((await s.channels.member(row.id, owner.did))?.role).toBe("owner");
    });

    test("unknown channels answer null or empty", async () => {
      const { s } = w();
      const u = await w().user();
      const id = newChannelId();
      expect(await s.channels.get(id)).toBeNull();
      expect(await s.channels.summary(id, u.did)).toBeNull();
      expect(await s.channels.members(id)).toEqual([]);
      expect(await s.channels.member(id, u.did)).toBeNull();
      expect(await s.channels.channelIdsOf(u.did)).toEqual([]);
    });

    test("summary: owner handle, member count, role of the viewer", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room("invite");
      const outsider = await w().user();
      const asOwner = await s.channels.summary(channel.id, owner.did);
      expect(asOwner).toMatchObject({
        ...channel,
        memberVersion: 2,
        ownerHandle: owner.handle,
        memberCount: 2,
        role: "owner",
      });
      expect((await s.channels.summary(channel.id, other.did))?.role).toBe("member");
      expect((await s.channels.summary(channel.id, outsider.did))?.role).toBeNull();
    });

    test("summary: messageCount counts live messages only; lastActivity follows the timeline", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const fresh = await w().channel(owner);
      const empty = await s.channels.summary(fresh.id, owner.did);
      expect(empty?.messageCount).toBe(0);
      expect(empty?.lastActivity).toBeNull();

      await w().message(channel, owner, epochId);
      const doomed = await w().message(channel, other, epochId);
      await w().notify(channel, other, "joined");
      const last = await w().message(channel, owner, epochId);
      expect(await s.timeline.deleteMessage(doomed.rkey)).toBe(true);

      const sum = await s.channels.summary(channel.id, owner.did);
      expect(sum?.messageCount).toBe(2);
      expect(sum?.lastActivity).toBe(last.createdAt);
      expect(sum?.memberCount).toBe(2);
      const listed = (await s.channels.listVisible(other.did)).find((c) => c.id === channel.id);
      expect(listed?.messageCount).toBe(2);
      expect(listed?.lastActivity).toBe(last.createdAt);
    });

    test("listVisible: public and invite channels for everyone, secret ones only for their members", async () => {
      const { s } = w();
      const alice = await w().user();
      const bob = await w().user();
      const carol = await w().user();
      const pub = await w().channel(alice, "public");
      const inv = await w().channel(alice, "invite");
      const sec = await w().channel(alice, "secret");
      const bobsSecret = await w().channel(bob, "secret");
      await w().join(bobsSecret, carol);

      const ids = async (did: string) => sortStrings((await s.channels.listVisible(did)).map((c) => c.id));
      expect(await ids(alice.did)).toEqual(sortStrings([pub.id, inv.id, sec.id]));
      expect(await ids(bob.did)).toEqual(sortStrings([pub.id, inv.id, bobsSecret.id]));
      expect(await ids(carol.did)).toEqual(sortStrings([pub.id, inv.id, bobsSecret.id]));
      expect(await ids(newDid())).toEqual(sortStrings([pub.id, inv.id]));

      const forCarol = await s.channels.listVisible(carol.did);
      expect(forCarol.find((c) => c.id === bobsSecret.id)).toMatchObject({
        role: "member",
        memberCount: 2,
        ownerDid: bob.did,
        ownerHandle: bob.handle,
        type: "secret",
      });
      expect(forCarol.find((c) => c.id === pub.id)?.role).toBeNull();
      expect((await s.channels.listVisible(alice.did)).find((c) => c.id === sec.id)?.role).toBe("owner");
    });

    test("members: one join time is ordered by did byte-wise; an ATProto-linked account is marked", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const at = Date.now() + 60_000;
      const joiners = [await w().user(), await w().user(), await w().user()];
      // Added in reverse did order, all at one instant: the list still comes in did order.
      const byDid = [...joiners].sort((a, b) => (a.did < b.did ? -1 : 1));
      for (const u of [...byDid].reverse()) await s.channels.addMember(ch.id, u.did, at, 100);
      const linked = byDid[1] as (typeof byDid)[number];
      await s.atproto.link({
        did: linked.did,
        handle: linked.handle,
        pdsUrl: "https://pds.example",
        linkedAt: 1,
      });
      const members = await s.channels.members(ch.id);
      expect(members.map((m) => m.did)).toEqual([owner.did, ...byDid.map((u) => u.did)]);
      expect(members.map((m) => m.atproto)).toEqual([false, false, true, false]);
    });

    test("members come oldest first with their current account data; member() finds one", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const joiners = [];
      for (let i = 0; i < 4; i++) {
        const u = await w().user();
        await w().join(ch, u);
        joiners.push(u);
      }
      const members = await s.channels.members(ch.id);
      expect(members.map((m) => m.did)).toEqual([owner.did, ...joiners.map((u) => u.did)]);
      expect(members.map((m) => m.role)).toEqual(["owner", "member", "member", "member", "member"]);
      for (let i = 1; i < members.length; i++) {
        expect((members[i]?.joinedAt as number) > (members[i - 1]?.joinedAt as number)).toBe(true);
      }
      const second = joiners[1];
      if (!second) throw new Error("no joiner");
      const { atproto: _listed, ...row } = members[2] ?? { atproto: false };
      expect(await s.channels.member(ch.id, second.did)).toEqual(row as MemberRow);
      expect(await s.channels.member(ch.id, second.did)).toMatchObject({
        channelId: ch.id,
        handle: second.handle,
        publicKey: second.publicKey,
        fingerprint: second.fingerprint,
      });
      expect(await s.channels.member(ch.id, newDid())).toBeNull();
    });

    test("channelIdsOf lists exactly the channels a user belongs to", async () => {
      const { s } = w();
      const alice = await w().user();
      const bob = await w().user();
      const a1 = await w().channel(alice);
      const b1 = await w().channel(bob);
      const b2 = await w().channel(bob, "secret");
      await w().join(b2, alice);
      expect(sortStrings(await s.channels.channelIdsOf(alice.did))).toEqual(sortStrings([a1.id, b2.id]));
      expect(sortStrings(await s.channels.channelIdsOf(bob.did))).toEqual(sortStrings([b1.id, b2.id]));
      await s.channels.removeMember(b2.id, alice.did);
      expect(await s.channels.channelIdsOf(alice.did)).toEqual([a1.id]);
    });

    test("addMember: joined, with the member row, and a bumped member version", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner);
      const at = w().now();
      const change = await s.channels.addMember(ch.id, bob.did, at, 5000, { kind: "public" });
      const member: MemberRow = {
        channelId: ch.id,
        did: bob.did,
        handle: bob.handle,
        role: "member",
        joinedAt: at,
        publicKey: bob.publicKey,
        fingerprint: bob.fingerprint,
        admission: { kind: "public" },
      };
      expect(change).toEqual({ kind: "joined", member });
      expect(await s.channels.member(ch.id, bob.did)).toEqual(member);
      expect((await s.channels.get(ch.id))?.memberVersion).toBe(2);
      expect((await s.channels.summary(ch.id, bob.did))?.memberCount).toBe(2);
    });

    test("addMember of a member: already-member, nothing changes", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner);
      const joined = await w().join(ch, bob);
      const again = await s.channels.addMember(ch.id, bob.did, w().now(), 5000);
      expect(again).toEqual({
        kind: "already-member",
        member: joined,
      });
      const ownerAgain = await s.channels.addMember(ch.id, owner.did, w().now(), 5000);
      expect(ownerAgain.kind).toBe("already-member");
      if (ownerAgain.kind === "already-member") expect(ownerAgain.member.role).toBe("owner");
      expect((await s.channels.get(ch.id))?.memberVersion).toBe(2);
      expect(await s.channels.members(ch.id)).toHaveLength(2);
    });

    test("addMember at the limit: channel-full, nobody added, version unchanged", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const b = await w().user();
      const c = await w().user();
      expect((await s.channels.addMember(ch.id, b.did, w().now(), 2)).kind).toBe("joined");
      expect(await s.channels.addMember(ch.id, c.did, w().now(), 2)).toEqual({ kind: "channel-full" });
      expect(await s.channels.member(ch.id, c.did)).toBeNull();
      expect((await s.channels.get(ch.id))?.memberVersion).toBe(2);
      // A member is still a member at the limit.
      expect((await s.channels.addMember(ch.id, b.did, w().now(), 2)).kind).toBe("already-member");
    });

    test("addMember removes the joiner's pending invite to that channel only", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner, "invite");
      const other = await w().channel(owner, "invite");
      await s.channels.addInvite({
        channelId: ch.id,
        inviteeDid: bob.did,
        fromDid: owner.did,
        createdAt: w().now(),
      });
      await s.channels.addInvite({
        channelId: other.id,
        inviteeDid: bob.did,
        fromDid: owner.did,
        createdAt: w().now(),
      });
      await w().join(ch, bob);
      expect(await s.channels.invite(ch.id, bob.did)).toBeNull();
      expect(await s.channels.invite(other.id, bob.did)).not.toBeNull();
      expect((await s.channels.invitesFor(bob.did)).map((i) => i.channelId)).toEqual([other.id]);
    });

    test("removeMember bumps the member version; a non-member answers false and changes nothing", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room();
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(false);
      expect(await s.channels.removeMember(channel.id, other.did)).toBe(true);
      expect((await s.channels.get(channel.id))?.memberVersion).toBe(3);
      expect(await s.channels.member(channel.id, other.did)).toBeNull();
      expect((await s.channels.get(channel.id))?.ownerDid).toBe(owner.did);
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(true);
      expect(await s.channels.removeMember(channel.id, other.did)).toBe(false);
      expect(await s.channels.removeMember(channel.id, newDid())).toBe(false);
      expect((await s.channels.get(channel.id))?.memberVersion).toBe(3);
    });

    test("an owner who leaves passes ownership to the longest-standing member", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const first = await w().user();
      const second = await w().user();
      const third = await w().user();
      await w().join(ch, first);
      await w().join(ch, second);
      await w().join(ch, third);
      // Not the order of dids, not the last to join: the one who has been there longest.
      expect(await s.channels.removeMember(ch.id, owner.did)).toBe(true);
      const after = await s.channels.get(ch.id);
      expect(after?.ownerDid).toBe(first.did);
      expect(after?.creatorDid).toBe(owner.did);
      expect((await s.channels.member(ch.id, first.did))?.role).toBe("owner");
      expect((await s.channels.member(ch.id, second.did))?.role).toBe("member");
      expect((await s.channels.summary(ch.id, first.did))?.ownerHandle).toBe(first.handle);
      expect((await s.channels.members(ch.id)).filter((m) => m.role === "owner")).toHaveLength(1);
      // A member leaving does not move ownership.
      await s.channels.removeMember(ch.id, third.did);
      expect((await s.channels.get(ch.id))?.ownerDid).toBe(first.did);
    });

    test("the last member leaving leaves the channel ownerless; the first to join again owns it", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      expect(await s.channels.removeMember(ch.id, owner.did)).toBe(true);
      const empty = await s.channels.get(ch.id);
      expect(empty?.ownerDid).toBeNull();
      expect(empty?.memberVersion).toBe(2);
      expect(await s.channels.members(ch.id)).toEqual([]);
      const sum = await s.channels.summary(ch.id, owner.did);
      expect(sum?.ownerHandle).toBeNull();
      expect(sum?.memberCount).toBe(0);

      const comer = await w().user();
      const change = await s.channels.addMember(ch.id, comer.did, w().now(), 5000);
      expect(change.kind).toBe("joined");
      if (change.kind === "joined") expect(change.member.role).toBe("owner");
      expect((await s.channels.get(ch.id))?.ownerDid).toBe(comer.did);
      const next = await w().user();
      const second = await s.channels.addMember(ch.id, next.did, w().now(), 5000);
      if (second.kind === "joined") expect(second.member.role).toBe("member");
      expect((await s.channels.get(ch.id))?.ownerDid).toBe(comer.did);
    });

    test("invites: upsert per (channel, invitee), lookup, and the invitee's list", async () => {
      const { s } = w();
      const owner = await w().user();
      const helper = await w().user();
      const bob = await w().user();
      const ch1 = await w().channel(owner, "invite");
      const ch2 = await w().channel(helper, "secret");
      await w().join(ch1, helper);
      expect(await s.channels.invite(ch1.id, bob.did)).toBeNull();
      expect(await s.channels.invitesFor(bob.did)).toEqual([]);

      const t1 = w().now();
      await s.channels.addInvite({
        channelId: ch1.id,
        inviteeDid: bob.did,
        fromDid: owner.did,
        createdAt: t1,
      });
      expect(await s.channels.invite(ch1.id, bob.did)).toEqual({
        channelId: ch1.id,
        inviteeDid: bob.did,
        fromDid: owner.did,
        fromHandle: owner.handle,
        createdAt: t1,
        signed: null,
      });
      // Inviting again replaces the invite rather than adding a second one.
      const t2 = w().now();
      await s.channels.addInvite({
        channelId: ch1.id,
        inviteeDid: bob.did,
        fromDid: helper.did,
        createdAt: t2,
      });
      expect(await s.channels.invite(ch1.id, bob.did)).toEqual({
        channelId: ch1.id,
        inviteeDid: bob.did,
        fromDid: helper.did,
        fromHandle: helper.handle,
        createdAt: t2,
        signed: null,
      });
      const t3 = w().now();
      await s.channels.addInvite({
        channelId: ch2.id,
        inviteeDid: bob.did,
        fromDid: helper.did,
        createdAt: t3,
      });
      const list = await s.channels.invitesFor(bob.did);
      expect(list).toHaveLength(2);
      expect(sortStrings(list.map((i) => i.channelId))).toEqual(sortStrings([ch1.id, ch2.id]));
      expect(list.find((i) => i.channelId === ch2.id)).toEqual({
        channelId: ch2.id,
        inviteeDid: bob.did,
        fromDid: helper.did,
        fromHandle: helper.handle,
        createdAt: t3,
        signed: null,
      });
      expect(await s.channels.invitesFor(helper.did)).toEqual([]);
      expect(await s.channels.invite(ch2.id, owner.did)).toBeNull();
    });
  });
}
