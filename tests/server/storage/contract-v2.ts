import { describe, expect, test } from "bun:test";
import type { Admission } from "../../../core/protocol/index.ts";
import { randomHex, signedInvite, type World } from "./fixtures.ts";

/** Protocol v2 storage behaviour: admission evidence, signed invites, secret links, epoch records. */
export function v2Contract(w: () => World): void {
  describe("protocol v2", () => {
    test("a secret channel created without a join token needs a link; public and invite channels never do", async () => {
      const { s } = w();
      const owner = await w().user();
      const row = w().channelRow(owner, "secret", { joinTokenHash: null });
      await s.channels.create(row, { did: owner.did, at: row.createdAt });
      expect(await s.channels.get(row.id)).toEqual(row);
      expect((await s.epochs.state(row.id)).linkRotationRequired).toBe(true);
      const withToken = await w().channel(owner, "secret");
      expect((await s.epochs.state(withToken.id)).linkRotationRequired).toBe(false);
      for (const type of ["public", "invite"] as const) {
        const ch = await w().channel(owner, type);
        expect((await s.epochs.state(ch.id)).linkRotationRequired).toBe(false);
      }
    });

    test("an epoch insert with joinTokenHash sets the link and clears the void in the same step", async () => {
      const { s } = w();
      const owner = await w().user();
      const row = w().channelRow(owner, "secret", { joinTokenHash: null });
      await s.channels.create(row, { did: owner.did, at: row.createdAt });
      const hash = randomHex(32);
      const e = await w().nextEpoch(row.id, owner.did);
      // A refused insert leaves the link as it was.
      expect(await s.epochs.insert({ ...e.row, epochNumber: 2 }, e.keys, { joinTokenHash: hash })).toBe(
        "conflict",
      );
      expect((await s.channels.get(row.id))?.joinTokenHash).toBeNull();
      expect(await s.epochs.insert(e.row, e.keys, { joinTokenHash: hash })).toBe("ok");
      expect(await s.channels.get(row.id)).toMatchObject({ joinTokenHash: hash, linkVoided: false });
      expect((await s.epochs.state(row.id)).linkRotationRequired).toBe(false);
      // Without one, the link stays.
      await w().epoch(row, owner);
      expect((await s.channels.get(row.id))?.joinTokenHash).toBe(hash);
    });

    test("removeMember with voidLink voids the join token with the removal; without it, or for a non-member, nothing is voided", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room("secret");
      const carol = await w().user();
      await w().join(channel, carol);
      const hash = channel.joinTokenHash;
      expect(await s.channels.removeMember(channel.id, carol.did)).toBe(true);
      expect(await s.channels.get(channel.id)).toMatchObject({ joinTokenHash: hash, linkVoided: false });
      expect(await s.channels.removeMember(channel.id, carol.did, { voidLink: true })).toBe(false);
      expect((await s.channels.get(channel.id))?.joinTokenHash).toBe(hash);

      expect(await s.channels.removeMember(channel.id, other.did, { voidLink: true })).toBe(true);
      expect(await s.channels.get(channel.id)).toMatchObject({ joinTokenHash: null, linkVoided: true });
      expect(await s.epochs.state(channel.id)).toMatchObject({
        rotationRequired: true,
        linkRotationRequired: true,
      });
      const next = await w().nextEpoch(channel.id, owner.did);
      const fresh = randomHex(32);
      expect(await s.epochs.insert(next.row, next.keys, { joinTokenHash: fresh })).toBe("ok");
      expect(await s.channels.get(channel.id)).toMatchObject({ joinTokenHash: fresh, linkVoided: false });
      expect(await s.epochs.state(channel.id)).toMatchObject({
        rotationRequired: false,
        linkRotationRequired: false,
      });
    });

    test("addMember with a link gate joins only while that join token is live", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room("secret");
      const hash = channel.joinTokenHash as string;
      const carol = await w().user();
      const dave = await w().user();
      expect(
        (
          await s.channels.addMember(channel.id, carol.did, w().now(), 5000, null, {
            joinTokenHash: randomHex(32),
          })
        ).kind,
      ).toBe("link-gone");
      expect(
        (await s.channels.addMember(channel.id, carol.did, w().now(), 5000, null, { joinTokenHash: hash }))
          .kind,
      ).toBe("joined");
      await s.channels.removeMember(channel.id, other.did, { voidLink: true });
      const version = (await s.channels.get(channel.id))?.memberVersion;
      expect(
        (await s.channels.addMember(channel.id, dave.did, w().now(), 5000, null, { joinTokenHash: hash }))
          .kind,
      ).toBe("link-gone");
      expect((await s.channels.get(channel.id))?.memberVersion).toBe(version);
      expect((await s.channels.members(channel.id)).map((m) => m.did).sort()).toEqual(
        [owner.did, carol.did].sort(),
      );
    });

    test("members keep the admission they joined with; a rejoin replaces it", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner, "invite");
      const signed = signedInvite(ch.id, owner.did, bob.did, w().now());
      const admission: Admission = { kind: "invite", ...signed };
      const change = await s.channels.addMember(ch.id, bob.did, w().now(), 5000, admission);
      expect(change.kind === "joined" && change.member.admission).toEqual(admission);
      expect((await s.channels.member(ch.id, bob.did))?.admission).toEqual(admission);
      expect((await s.channels.member(ch.id, owner.did))?.admission).toBeNull();
      // Already a member: the stored evidence does not change.
      await s.channels.addMember(ch.id, bob.did, w().now(), 5000, { kind: "public" });
      expect((await s.channels.members(ch.id)).map((m) => m.admission)).toEqual([null, admission]);
      await s.channels.removeMember(ch.id, bob.did);
      const again = await s.channels.addMember(ch.id, bob.did, w().now(), 5000);
      expect(again.kind === "joined" && again.member.admission).toBeNull();
    });

    test("invites keep the signed invite; a later invite replaces it, signed or not", async () => {
      const { s } = w();
      const owner = await w().user();
      const helper = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner, "invite");
      await w().join(ch, helper);
      const signed = signedInvite(ch.id, owner.did, bob.did, w().now());
      await s.channels.addInvite({
        channelId: ch.id,
        inviteeDid: bob.did,
        fromDid: owner.did,
        createdAt: 1,
        signed,
      });
      expect((await s.channels.invite(ch.id, bob.did))?.signed).toEqual(signed);
      expect((await s.channels.invitesFor(bob.did))[0]?.signed).toEqual(signed);
      const second = signedInvite(ch.id, helper.did, bob.did, w().now());
      await s.channels.addInvite({
        channelId: ch.id,
        inviteeDid: bob.did,
        fromDid: helper.did,
        createdAt: 2,
        signed: second,
      });
      expect(await s.channels.invite(ch.id, bob.did)).toMatchObject({ fromDid: helper.did, signed: second });
      await s.channels.addInvite({ channelId: ch.id, inviteeDid: bob.did, fromDid: owner.did, createdAt: 3 });
      expect(await s.channels.invite(ch.id, bob.did)).toMatchObject({ fromDid: owner.did, signed: null });
    });

    test("epochs keep their admissions; byNumbers returns the asked ones, oldest first", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner, "invite");
      const e1 = await w().epoch(ch, owner);
      const admission: Admission = { kind: "invite", ...signedInvite(ch.id, owner.did, bob.did, w().now()) };
      await s.channels.addMember(ch.id, bob.did, w().now(), 5000, admission);
      const e2 = await w().nextEpoch(ch.id, owner.did, { [bob.did]: admission });
      expect(await s.epochs.insert(e2.row, e2.keys)).toBe("ok");
      const e3 = await w().epoch(ch, bob);
      expect((await s.epochs.state(ch.id)).current?.admissions).toEqual({});
      expect(await s.epochs.byNumbers(ch.id, [3, 1, 2, 9])).toEqual([e1.row, e2.row, e3.row]);
      expect((await s.epochs.byNumbers(ch.id, [2]))[0]?.admissions).toEqual({ [bob.did]: admission });
      expect(await s.epochs.byNumbers(ch.id, [])).toEqual([]);
      const elsewhere = await w().channel(owner);
      expect(await s.epochs.byNumbers(elsewhere.id, [1, 2])).toEqual([]);
    });
  });
}
