import { describe, expect, test } from "bun:test";
import { DuplicateError, type SessionRow } from "../../../server/storage/types.ts";
import { newDid, randomB32, randomHex, sortStrings, type World } from "./fixtures.ts";

export function accountsContract(w: () => World): void {
  describe("accounts", () => {
    test("create stores every field; lookups by did, handle and email find it", async () => {
      const { s } = w();
      const a = w().accountRow({ publicKey: "cHVi", fingerprint: randomHex(16) });
      await s.accounts.create(a);
      expect(await s.accounts.byDid(a.did)).toEqual(a);
      expect(await s.accounts.byHandle(a.handle)).toEqual(a);
      expect(await s.accounts.byEmail(a.email)).toEqual(a);
    });

    test("bots: stored with their channels, found by id, did and owner (oldest first), revoked once", async () => {
      const { s } = w();
      const owner = await w().user();
      const rows = [];
      for (let i = 0; i < 2; i++) {
        const bot = await w().user();
        const row = {
          id: randomB32(16),
          did: bot.did,
          ownerDid: owner.did,
          sessionId: `bot-${randomB32(20)}`,
          tokenHash: randomHex(32),
          channelIds: [randomB32(16), randomB32(16)],
          createdAt: 1_700_000_000_000 + i,
          revokedAt: null,
        };
        await s.bots.create(row);
        rows.push(row);
      }
      expect(await s.bots.byId(rows[0]?.id ?? "")).toEqual(rows[0] ?? null);
      expect(await s.bots.byDid(rows[1]?.did ?? "")).toEqual(rows[1] ?? null);
      expect(await s.bots.byOwner(owner.did)).toEqual(rows);
      expect(await s.bots.byId(randomB32(16))).toBeNull();
      expect(await s.bots.revoke(rows[0]?.id ?? "", 1_800_000_000_000)).toBe(true);
      expect(await s.bots.revoke(rows[0]?.id ?? "", 1_900_000_000_000)).toBe(false);
      expect((await s.bots.byId(rows[0]?.id ?? ""))?.revokedAt).toBe(1_800_000_000_000);
    });

    test("lookups of unknown accounts answer null", async () => {
      const { s } = w();
      await w().user();
      expect(await s.accounts.byDid(newDid())).toBeNull();
      expect(await s.accounts.byHandle("nobody.test")).toBeNull();
      expect(await s.accounts.byEmail("nobody@example.com")).toBeNull();
    });

    test("a taken handle throws DuplicateError('handle') and stores nothing", async () => {
      const { s } = w();
      const a = await w().user();
      const b = w().accountRow({ handle: a.handle });
      const err = await s.accounts.create(b).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateError);
      expect((err as DuplicateError).field).toBe("handle");
      expect((err as DuplicateError).name).toBe("DuplicateError");
      expect(await s.accounts.byDid(b.did)).toBeNull();
      expect(await s.accounts.byEmail(b.email)).toBeNull();
    });

    test("a taken email throws DuplicateError('email') and stores nothing", async () => {
      const { s } = w();
      const a = await w().user();
      const b = w().accountRow({ email: a.email });
      const err = await s.accounts.create(b).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateError);
      expect((err as DuplicateError).field).toBe("email");
      expect(await s.accounts.byDid(b.did)).toBeNull();
      expect(await s.accounts.byHandle(b.handle)).toBeNull();
    });

    test("byDids and byHandles return the known accounts among those asked for", async () => {
      const { s } = w();
      const a = await w().user();
      const b = await w().user();
      const c = await w().user();
      expect(await s.accounts.byDids([])).toEqual([]);
      expect(await s.accounts.byHandles([])).toEqual([]);
      const byDids = await s.accounts.byDids([a.did, newDid(), c.did, a.did]);
      expect(sortStrings(byDids.map((x) => x.did))).toEqual(sortStrings([a.did, c.did]));
      expect(byDids.find((x) => x.did === a.did)).toEqual(a);
      const byHandles = await s.accounts.byHandles([b.handle, "nobody.test", c.handle]);
      expect(sortStrings(byHandles.map((x) => x.did))).toEqual(sortStrings([b.did, c.did]));
      expect(byHandles.find((x) => x.did === b.did)).toEqual(b);
    });

    test("byDids answers a full get-keys request (500 dids, more than one bind parameter each)", async () => {
      const { s } = w();
      const users = [];
      for (let i = 0; i < 5; i++) users.push(await w().user());
      const asked = [...users.map((u) => u.did), ...Array.from({ length: 595 }, newDid)];
      const found = await s.accounts.byDids(asked);
      expect(sortStrings(found.map((x) => x.did))).toEqual(sortStrings(users.map((u) => u.did)));
    });

    test("setFirstPublicKey sets a key once; later calls answer false and change nothing", async () => {
      const { s } = w();
      const a = w().accountRow();
      await s.accounts.create(a);
      expect(await s.accounts.setFirstPublicKey(a.did, "Zmlyc3Q=", "aa".repeat(16))).toBe(true);
      expect(await s.accounts.setFirstPublicKey(a.did, "c2Vjb25k", "bb".repeat(16))).toBe(false);
      const after = await s.accounts.byDid(a.did);
      expect(after?.publicKey).toBe("Zmlyc3Q=");
      expect(after?.fingerprint).toBe("aa".repeat(16));
      expect(await s.accounts.setFirstPublicKey(newDid(), "eA==", "cc".repeat(16))).toBe(false);
    });

    test("replacePublicKey changes the key and bumps the member version of exactly the user's channels", async () => {
      const { s } = w();
      const alice = await w().user();
      const bob = await w().user();
      const mine = await w().channel(alice, "public");
      const joined = await w().channel(bob, "invite");
      await w().join(joined, alice);
      const notMine = await w().channel(bob, "public");
      for (const ch of [mine, joined, notMine]) await w().epoch(ch, ch.id === mine.id ? alice : bob);
      const before = new Map<string, number>();
      for (const ch of [mine, joined, notMine])
        before.set(ch.id, (await s.epochs.state(ch.id)).memberVersion);

      const ids = await s.accounts.replacePublicKey(alice.did, "bmV3a2V5", "dd".repeat(16));

      expect(sortStrings(ids)).toEqual(sortStrings([mine.id, joined.id]));
      const after = await s.accounts.byDid(alice.did);
      expect(after?.publicKey).toBe("bmV3a2V5");
      expect(after?.fingerprint).toBe("dd".repeat(16));
      expect((await s.channels.member(mine.id, alice.did))?.fingerprint).toBe("dd".repeat(16));
      for (const ch of [mine, joined]) {
        const st = await s.epochs.state(ch.id);
        expect(st.memberVersion).toBe((before.get(ch.id) as number) + 1);
        // No epoch may be wrapped to the old key any more: the next message needs a new epoch.
        expect(st.rotationRequired).toBe(true);
        expect((await s.channels.get(ch.id))?.memberVersion).toBe(st.memberVersion);
      }
      const untouched = await s.epochs.state(notMine.id);
      expect(untouched.memberVersion).toBe(before.get(notMine.id) as number);
      expect(untouched.rotationRequired).toBe(false);
    });

    test("replacePublicKey of a user without channels returns no ids", async () => {
      const { s } = w();
      const a = await w().user();
      expect(await s.accounts.replacePublicKey(a.did, "eA==", "ee".repeat(16))).toEqual([]);
      expect((await s.accounts.byDid(a.did))?.publicKey).toBe("eA==");
    });
  });
}

export function sessionsContract(w: () => World): void {
  const session = async (overrides: Partial<SessionRow> = {}): Promise<SessionRow> => {
    const user = await w().user();
    const t = w().now();
    const row: SessionRow = {
      id: randomHex(16),
      did: user.did,
      refreshHash: randomHex(32),
      createdAt: t,
      expiresAt: t + 30 * 86_400_000,
      revokedAt: null,
      ...overrides,
    };
    await w().s.sessions.create(row);
    return row;
  };
  /** A new session as get() returns it: never rotated. */
  const fresh = (row: SessionRow) => ({ ...row, rotations: 0, prevRefreshHash: null, rotatedAt: null });

  describe("sessions", () => {
    test("create then get returns the row; unknown ids answer null", async () => {
      const { s } = w();
      const row = await session();
      expect(await s.sessions.get(row.id)).toEqual(fresh(row));
      expect(await s.sessions.get(randomHex(16))).toBeNull();
    });

    test("access reads the session with its account's name and state; unknown ids answer null", async () => {
      const { s } = w();
      const row = await session();
      const handle = (await s.accounts.byDid(row.did))?.handle as string;
      expect(await s.sessions.access(row.id)).toEqual({
        did: row.did,
        expiresAt: row.expiresAt,
        revokedAt: null,
        account: { handle, disabledAt: null, deletedAt: null },
      });
      expect(await s.sessions.access(randomHex(16))).toBeNull();
      const at = w().now();
      await s.sessions.revoke(row.id, at);
      expect((await s.sessions.access(row.id))?.revokedAt).toBe(at);
      // Disabled by the operator: the account's state is read with the session (and its sessions end).
      const other = await session();
      expect(await s.admin.setDisabled(other.did, at + 1)).toEqual({ sessionsRevoked: 1 });
      expect(await s.sessions.access(other.id)).toMatchObject({
        revokedAt: at + 1,
        account: { disabledAt: at + 1, deletedAt: null },
      });
    });

    test("rotate is a compare-and-swap on the refresh hash, keeping the hash it replaced and when", async () => {
      const { s } = w();
      const row = await session();
      const next = randomHex(32);
      const at = w().now();
      expect(await s.sessions.rotate(row.id, row.refreshHash, next, row.expiresAt + 1000, at)).toBe(true);
      expect(await s.sessions.get(row.id)).toEqual({
        ...row,
        refreshHash: next,
        expiresAt: row.expiresAt + 1000,
        rotations: 1,
        prevRefreshHash: row.refreshHash,
        rotatedAt: at,
      });
      // The previous refresh token is spent: presenting it again fails and changes nothing.
      expect(
        await s.sessions.rotate(row.id, row.refreshHash, randomHex(32), row.expiresAt + 2000, at + 1),
      ).toBe(false);
      expect(
        await s.sessions.rotate(row.id, randomHex(32), randomHex(32), row.expiresAt + 2000, at + 1),
      ).toBe(false);
      expect((await s.sessions.get(row.id))?.refreshHash).toBe(next);
      expect(await s.sessions.rotate(randomHex(16), next, randomHex(32), 1, at)).toBe(false);
      const third = randomHex(32);
      expect(await s.sessions.rotate(row.id, next, third, row.expiresAt + 3000, at + 2)).toBe(true);
      expect(await s.sessions.get(row.id)).toMatchObject({
        refreshHash: third,
        rotations: 2,
        prevRefreshHash: next,
        rotatedAt: at + 2,
      });
    });

    test("only one of two concurrent rotations with the same hash wins", async () => {
      const { s } = w();
      const row = await session();
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          s.sessions.rotate(row.id, row.refreshHash, randomHex(32), row.expiresAt, w().now()),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    test("revoke marks the session; a revoked session cannot rotate", async () => {
      const { s } = w();
      const row = await session();
      const other = await session();
      const at = w().now();
      await s.sessions.revoke(row.id, at);
      expect((await s.sessions.get(row.id))?.revokedAt).toBe(at);
      expect(await s.sessions.rotate(row.id, row.refreshHash, randomHex(32), row.expiresAt, w().now())).toBe(
        false,
      );
      expect((await s.sessions.get(row.id))?.refreshHash).toBe(row.refreshHash);
      expect((await s.sessions.get(other.id))?.revokedAt).toBeNull();
      // Revoking again never brings it back.
      await s.sessions.revoke(row.id, w().now());
      expect((await s.sessions.get(row.id))?.revokedAt).not.toBeNull();
      await s.sessions.revoke(randomHex(16), w().now());
    });

    test("listActive gives one account's live sessions, newest first, without revoked or expired ones", async () => {
      const { s } = w();
      const t = w().now();
      const first = await session({ createdAt: t });
      const did = first.did;
      const second = await session({ did, createdAt: t + 1 });
      const revoked = await session({ did, createdAt: t + 2 });
      await s.sessions.revoke(revoked.id, t + 3);
      await session({ did, createdAt: t + 4, expiresAt: t + 5 });
      const someoneElse = await session({ createdAt: t + 6 });
      const live = await s.sessions.listActive(did, t + 5);
      expect(live.map((x) => x.id)).toEqual([second.id, first.id]);
      expect(live[0]).toEqual(fresh(second));
      expect((await s.sessions.listActive(someoneElse.did, t + 5)).map((x) => x.id)).toEqual([
        someoneElse.id,
      ]);
      expect(await s.sessions.listActive("did:plc:nobody", t)).toEqual([]);
    });

    test("purge removes sessions expired or revoked before the cut-off, and counts them", async () => {
      const { s } = w();
      const t = w().now();
      const cut = t + 10_000;
      const expired = await session({ expiresAt: cut - 1 });
      const revokedBefore = await session({ revokedAt: cut - 1, expiresAt: cut + 86_400_000 });
      const revokedAfter = await session({ revokedAt: cut + 1, expiresAt: cut + 86_400_000 });
      const live = await session({ expiresAt: cut + 1 });
      expect(await s.sessions.purge(cut)).toBe(2);
      expect(await s.sessions.get(expired.id)).toBeNull();
      expect(await s.sessions.get(revokedBefore.id)).toBeNull();
      expect(await s.sessions.get(revokedAfter.id)).toEqual(fresh(revokedAfter));
      expect(await s.sessions.get(live.id)).toEqual(fresh(live));
      expect(await s.sessions.purge(cut)).toBe(0);
    });
  });
}
