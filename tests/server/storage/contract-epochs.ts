import { describe, expect, test } from "bun:test";
import { newDid, type World, wrappedKey } from "./fixtures.ts";

export function epochsContract(w: () => World): void {
  describe("epochs", () => {
    test("a new channel has no epoch and needs one", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      expect(await s.epochs.state(ch.id)).toEqual({
        current: null,
        memberVersion: 1,
        rotationRequired: true,
        linkRotationRequired: false,
      });
      expect(await s.epochs.keysFor(ch.id, owner.did)).toEqual([]);
    });

    test("insert of epoch 1 for the current member version: ok; it becomes current, rotation no longer required", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const e = await w().nextEpoch(ch.id, owner.did);
      expect(e.row.epochNumber).toBe(1);
      expect(await s.epochs.insert(e.row, e.keys)).toBe("ok");
      expect(await s.epochs.state(ch.id)).toEqual({
        current: e.row,
        memberVersion: 1,
        rotationRequired: false,
        linkRotationRequired: false,
      });
    });

    test("insert with a number other than current + 1: conflict, nothing stored", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const skip = await w().nextEpoch(ch.id, owner.did);
      const two = { ...skip.row, epochNumber: 2 };
      expect(await s.epochs.insert(two, skip.keys)).toBe("conflict");
      expect((await s.epochs.state(ch.id)).current).toBeNull();
      expect(await s.epochs.keysFor(ch.id, owner.did)).toEqual([]);

      const first = await w().epoch(ch, owner);
      // Another member's epoch 1, made from the same state, lost the race.
      const late = { ...skip.row, epochNumber: 1 };
      expect(await s.epochs.insert(late, skip.keys)).toBe("conflict");
      expect(await s.epochs.insert({ ...skip.row, epochNumber: 3 }, skip.keys)).toBe("conflict");
      expect((await s.epochs.state(ch.id)).current).toEqual(first.row);
      expect(await s.epochs.keysFor(ch.id, owner.did)).toEqual(first.keys);
    });

    test("insert made for a stale member version: members-changed, nothing stored", async () => {
      const { s } = w();
      const owner = await w().user();
      const bob = await w().user();
      const ch = await w().channel(owner);
      const first = await w().epoch(ch, owner);
      const stale = await w().nextEpoch(ch.id, owner.did);
      await w().join(ch, bob);
      expect(await s.epochs.insert(stale.row, stale.keys)).toBe("members-changed");
      const st = await s.epochs.state(ch.id);
      expect(st.current).toEqual(first.row);
      expect(st.rotationRequired).toBe(true);
      expect(await s.epochs.keysFor(ch.id, owner.did)).toEqual(first.keys);
      // Made again for the current member set, it is accepted.
      const fresh = await w().nextEpoch(ch.id, owner.did);
      expect(fresh.row.memberVersion).toBe(2);
      expect(await s.epochs.insert(fresh.row, fresh.keys)).toBe("ok");
    });

    test("rotation is required after every membership change, until the next epoch", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room();
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(false);
      const carol = await w().user();
      await w().join(channel, carol);
      expect(await s.epochs.state(channel.id)).toMatchObject({ memberVersion: 3, rotationRequired: true });
      await w().epoch(channel, carol);
      expect(await s.epochs.state(channel.id)).toMatchObject({ memberVersion: 3, rotationRequired: false });
      await s.channels.removeMember(channel.id, other.did);
      expect(await s.epochs.state(channel.id)).toMatchObject({ memberVersion: 4, rotationRequired: true });
      await w().epoch(channel, owner);
      expect((await s.epochs.state(channel.id)).current?.epochNumber).toBe(3);
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(false);
      // Re-joining attempts and channel-full refusals are not membership changes.
      await s.channels.addMember(channel.id, carol.did, w().now(), 5000);
      await s.channels.addMember(channel.id, (await w().user()).did, w().now(), 2);
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(false);
    });

    test("keysFor returns only that recipient's keys in that channel, oldest epoch first", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room();
      const e1Keys = await s.epochs.keysFor(channel.id, other.did);
      expect(e1Keys).toHaveLength(1);
      const e2 = await w().epoch(channel, other);
      const e3 = await w().epoch(channel, owner);
      const elsewhere = await w().channel(other);
      await w().join(elsewhere, owner);
      await w().epoch(elsewhere, other);

      const keys = await s.epochs.keysFor(channel.id, other.did);
      expect(keys.map((k) => k.epochNumber)).toEqual([1, 2, 3]);
      expect(keys.every((k) => k.recipientDid === other.did)).toBe(true);
      expect(keys[1]).toEqual(e2.keys.find((k) => k.recipientDid === other.did));
      expect(keys[2]).toEqual(e3.keys.find((k) => k.recipientDid === other.did));
      expect(await s.epochs.keysFor(channel.id, newDid())).toEqual([]);
    });

    test("a leaver keeps the keys of epochs they were in and gets none of later ones", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room();
      await s.channels.removeMember(channel.id, other.did);
      const e2 = await w().epoch(channel, owner);
      expect(e2.keys.map((k) => k.recipientDid)).toEqual([owner.did]);
      expect((await s.epochs.keysFor(channel.id, other.did)).map((k) => k.epochNumber)).toEqual([1]);
      expect((await s.epochs.keysFor(channel.id, owner.did)).map((k) => k.epochNumber)).toEqual([1, 2]);
    });

    test("epochs of two channels are independent", async () => {
      const { s } = w();
      const a = await w().room();
      const b = await w().room();
      await w().epoch(a.channel, a.owner);
      expect((await s.epochs.state(a.channel.id)).current?.epochNumber).toBe(2);
      expect((await s.epochs.state(b.channel.id)).current?.epochNumber).toBe(1);
      const e = await w().nextEpoch(b.channel.id, b.owner.did);
      expect(e.row.epochNumber).toBe(2);
      expect(await s.epochs.insert(e.row, [wrappedKey(e.row.epochId, 2, b.owner.did, e.row.createdAt)])).toBe(
        "ok",
      );
    });
  });
}
