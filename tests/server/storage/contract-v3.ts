import { describe, expect, test } from "bun:test";
import type { KeyChange, SignedReadMarker } from "../../../core/protocol/index.ts";
import type { DeviceLinkRow } from "../../../server/storage/types.ts";
import { randomHex, type World } from "./fixtures.ts";

const sig = () => Buffer.from(crypto.getRandomValues(new Uint8Array(64))).toString("base64");
/** A public-key-shaped string (storage keeps it as given). */
const rawKey = () => Buffer.from([4, ...crypto.getRandomValues(new Uint8Array(64))]).toString("base64");
const marker = (channelId: string, seq: number, createdAt: number): SignedReadMarker => ({
  marker: { v: 3, channelId, seq, createdAt },
  signature: sig(),
});

/**
 * Protocol v3 (§8) storage behaviour: signed read markers kept with the seq they set, key-change
 * statements kept with their epoch, and device-link slots (open once per code, bound to an account,
 * filled once, handed out once, gone when expired).
 */
export function v3Contract(w: () => World): void {
  describe("protocol v3", () => {
    test("a signed read marker is stored with the seq it set and replaced only when the seq rises", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      for (let n = 0; n < 5; n++) await w().message(channel, owner, epochId);
      const m3 = marker(channel.id, 3, w().now());
      expect(await s.channels.setReadMarker(other.did, channel.id, 3, w().now(), m3)).toEqual({
        channelId: channel.id,
        seq: 3,
        signed: m3,
      });
      // Lower or equal: the stored seq and its signed marker stay.
      const m2 = marker(channel.id, 2, w().now());
      expect(await s.channels.setReadMarker(other.did, channel.id, 2, w().now(), m2)).toEqual({
        channelId: channel.id,
        seq: 3,
        signed: m3,
      });
      expect(
        (await s.channels.setReadMarker(other.did, channel.id, 3, w().now(), marker(channel.id, 3, 1)))
          .signed,
      ).toEqual(m3);
      // Past the last seq: capped, and the marker that moved it is kept as signed.
      const m9 = marker(channel.id, 9, w().now());
      expect(await s.channels.setReadMarker(other.did, channel.id, 9, w().now(), m9)).toEqual({
        channelId: channel.id,
        seq: 5,
        signed: m9,
      });
      expect(await s.channels.readMarkers(other.did)).toEqual([
        { channelId: channel.id, seq: 5, signed: m9 },
      ]);
    });

    test("a marker stored unsigned (before v3) takes a signature at the same seq", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      await w().message(channel, owner, epochId);
      expect((await s.channels.setReadMarker(other.did, channel.id, 1, w().now())).signed).toBeNull();
      const m1 = marker(channel.id, 1, w().now());
      expect((await s.channels.setReadMarker(other.did, channel.id, 1, w().now(), m1)).signed).toEqual(m1);
      expect(await s.channels.readMarkers(other.did)).toEqual([
        { channelId: channel.id, seq: 1, signed: m1 },
      ]);
    });

    test("an epoch's key-change statement is stored with it and read back by state and byNumbers", async () => {
      const { s } = w();
      const { owner, channel } = await w().room();
      const e = await w().nextEpoch(channel.id, owner.did);
      const keyChange: KeyChange = {
        statement: {
          v: 3,
          did: owner.did,
          oldFp: randomHex(16),
          newFp: randomHex(16),
          channelId: channel.id,
          epochId: e.row.epochId,
          createdAt: e.row.createdAt,
        },
        signature: sig(),
      };
      expect(await s.epochs.insert({ ...e.row, keyChange }, e.keys)).toBe("ok");
      expect((await s.epochs.state(channel.id)).current).toEqual({ ...e.row, keyChange });
      const [first, second] = await s.epochs.byNumbers(channel.id, [1, 2]);
      expect(first?.keyChange).toBeUndefined();
      expect(second).toEqual({ ...e.row, keyChange });
    });

    test("a tombstone keeps what it is given of its message; a deletion without one keeps none", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const [a, b] = [await w().message(channel, owner, epochId), await w().message(channel, owner, epochId)];
      const tombstone = {
        senderDid: owner.did,
        clientMsgId: a.clientMsgId,
        chain: { device: randomHex(16), n: 4 },
        epochNumber: 1,
      };
      expect(await s.timeline.deleteMessage(a.rkey, null, tombstone)).toBe(true);
      expect(await s.timeline.deleteMessage(a.rkey, null, tombstone)).toBe(false);
      expect(await s.timeline.deleteMessage(b.rkey)).toBe(true);
      expect(await s.timeline.byRkey(a.rkey)).toMatchObject({ content: "", tombstone });
      const [first, second] = await s.timeline.since(channel.id, 0, 10);
      expect(first).toMatchObject({ rkey: a.rkey, tombstone });
      expect(second).not.toHaveProperty("tombstone");
      expect((await s.timeline.page(channel.id, 10, null)).find((r) => r.rkey === a.rkey)).toMatchObject({
        tombstone,
      });
    });

    const slot = (did: string, now: number, overrides: Partial<DeviceLinkRow> = {}) => ({
      codeHash: randomHex(32),
      did,
      ephemeralPublicKey: rawKey(),
      createdAt: now,
      expiresAt: now + 600_000,
      ...overrides,
    });

    test("device links: a code opens once (any account) while live; an expired one is replaced", async () => {
      const { s } = w();
      const [alice, bob] = [await w().user(), await w().user()];
      const now = w().now();
      const a = slot(alice.did, now);
      expect(await s.deviceLinks.open(a, now, 5)).toBe("ok");
      expect(await s.deviceLinks.get(a.codeHash, now)).toEqual({ ...a, envelope: null, filledAt: null });
      expect(await s.deviceLinks.open({ ...a, did: bob.did }, now, 5)).toBe("exists");
      expect(await s.deviceLinks.open(a, now, 5)).toBe("exists");
      // After expiry the slot is gone for every read, and the code may be opened again.
      const later = a.expiresAt;
      expect(await s.deviceLinks.get(a.codeHash, later)).toBeNull();
      const again = slot(bob.did, later, { codeHash: a.codeHash });
      expect(await s.deviceLinks.open(again, later, 5)).toBe("ok");
      expect((await s.deviceLinks.get(a.codeHash, later))?.did).toBe(bob.did);
    });

    test("device links: at most maxOpen live slots per account", async () => {
      const { s } = w();
      const alice = await w().user();
      const now = w().now();
      for (let i = 0; i < 3; i++) expect(await s.deviceLinks.open(slot(alice.did, now), now, 3)).toBe("ok");
      expect(await s.deviceLinks.open(slot(alice.did, now), now, 3)).toBe("too-many");
      // Expired ones do not count.
      expect(await s.deviceLinks.open(slot(alice.did, now + 600_000), now + 600_000, 3)).toBe("ok");
    });

    test("device links: filled once by its own account, taken once, never by another account", async () => {
      const { s } = w();
      const [alice, bob] = [await w().user(), await w().user()];
      const now = w().now();
      const a = slot(alice.did, now);
      await s.deviceLinks.open(a, now, 5);
      expect(await s.deviceLinks.take(a.codeHash, alice.did, now)).toBeNull();
      expect(await s.deviceLinks.fill(a.codeHash, bob.did, '{"x":1}', now)).toBe("not-found");
      expect(await s.deviceLinks.fill(randomHex(32), alice.did, '{"x":1}', now)).toBe("not-found");
      expect(await s.deviceLinks.fill(a.codeHash, alice.did, '{"box":"AAAA"}', now + 1)).toBe("ok");
      expect(await s.deviceLinks.fill(a.codeHash, alice.did, '{"box":"BBBB"}', now + 2)).toBe("filled");
      expect(await s.deviceLinks.get(a.codeHash, now + 2)).toMatchObject({
        envelope: '{"box":"AAAA"}',
        filledAt: now + 1,
      });
      expect(await s.deviceLinks.take(a.codeHash, bob.did, now + 3)).toBeNull();
      expect(await s.deviceLinks.take(a.codeHash, alice.did, now + 3)).toBe('{"box":"AAAA"}');
      expect(await s.deviceLinks.take(a.codeHash, alice.did, now + 3)).toBeNull();
      expect(await s.deviceLinks.get(a.codeHash, now + 3)).toBeNull();
    });

    test("device links: an expired slot can be neither filled nor taken, and purge removes it", async () => {
      const { s } = w();
      const alice = await w().user();
      const now = w().now();
      const a = slot(alice.did, now);
      const b = slot(alice.did, now, { expiresAt: now + 5 });
      await s.deviceLinks.open(a, now, 5);
      await s.deviceLinks.open(b, now, 5);
      await s.deviceLinks.fill(a.codeHash, alice.did, "{}", now);
      expect(await s.deviceLinks.fill(b.codeHash, alice.did, "{}", now + 5)).toBe("not-found");
      expect(await s.deviceLinks.take(a.codeHash, alice.did, a.expiresAt)).toBeNull();
      expect(await s.deviceLinks.purge(now + 5)).toBe(1);
      expect(await s.deviceLinks.purge(a.expiresAt)).toBe(1);
      expect(await s.deviceLinks.purge(a.expiresAt)).toBe(0);
      expect(await s.deviceLinks.get(a.codeHash, now)).toBeNull();
    });

    test("device links: two opens of one code at once, from two accounts: exactly one wins", async () => {
      const { s } = w();
      const [alice, bob] = [await w().user(), await w().user()];
      const now = w().now();
      const codeHash = randomHex(32);
      const results = await Promise.all([
        s.deviceLinks.open(slot(alice.did, now, { codeHash }), now, 5),
        s.deviceLinks.open(slot(bob.did, now, { codeHash }), now, 5),
      ]);
      expect(results.sort()).toEqual(["exists", "ok"]);
      // And two fills at once: one "ok", one "filled".
      const owner = (await s.deviceLinks.get(codeHash, now))?.did as string;
      const fills = await Promise.all([
        s.deviceLinks.fill(codeHash, owner, '{"a":1}', now),
        s.deviceLinks.fill(codeHash, owner, '{"b":2}', now),
      ]);
      expect(fills.sort()).toEqual(["filled", "ok"]);
    });
  });
}
