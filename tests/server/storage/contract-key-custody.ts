import { describe, expect, test } from "bun:test";
import { newDid, type World } from "./fixtures.ts";

/** A stand-in for a sealed blob: storage keeps the text as it is given. */
const blobText = (version: number, tag = "") =>
  JSON.stringify({ v: 1, version, iv: "AAAAAAAAAAAAAAAA", ciphertext: `c${version}${tag}` });

/**
 * The key backup and the trust state stored beside it (docs/key-backup.md; protocol §8 "Fresh
 * devices"): one of each per account, the trust state only beside a backup, replaced only by a
 * higher version, and gone with the backup (deleted, or the account's key replaced).
 */
export function keyCustodyContract(w: () => World): void {
  describe("key backup and trust state", () => {
    test("a key backup is stored, replaced and deleted; deleting a missing one answers false", async () => {
      const { s } = w();
      const a = await w().user();
      expect(await s.accounts.getKeyBackup(a.did)).toBeNull();
      await s.accounts.putKeyBackup(a.did, '{"b":1}', 1000);
      expect(await s.accounts.getKeyBackup(a.did)).toEqual({ blob: '{"b":1}', updatedAt: 1000 });
      await s.accounts.putKeyBackup(a.did, '{"b":2}', 2000);
      expect(await s.accounts.getKeyBackup(a.did)).toEqual({ blob: '{"b":2}', updatedAt: 2000 });
      expect(await s.accounts.deleteKeyBackup(a.did)).toBe(true);
      expect(await s.accounts.getKeyBackup(a.did)).toBeNull();
      expect(await s.accounts.deleteKeyBackup(a.did)).toBe(false);
    });

    test("a trust state is stored only beside a key backup", async () => {
      const { s } = w();
      const a = await w().user();
      expect(await s.accounts.getTrustState(a.did)).toBeNull();
      expect(await s.accounts.putTrustState(a.did, blobText(1), 1, 1000)).toBe("no-backup");
      expect(await s.accounts.getTrustState(a.did)).toBeNull();
      // An unknown account has no backup either.
      expect(await s.accounts.putTrustState(newDid(), blobText(1), 1, 1000)).toBe("no-backup");
      await s.accounts.putKeyBackup(a.did, '{"b":1}', 1000);
      expect(await s.accounts.putTrustState(a.did, blobText(0), 0, 1500)).toBe("stored");
      expect(await s.accounts.getTrustState(a.did)).toEqual({
        blob: blobText(0),
        version: 0,
        updatedAt: 1500,
      });
    });

    test("it is replaced only by a higher version; a lower or equal one changes nothing", async () => {
      const { s } = w();
      const a = await w().user();
      const b = await w().user();
      for (const u of [a, b]) await s.accounts.putKeyBackup(u.did, '{"b":1}', 1000);
      expect(await s.accounts.putTrustState(a.did, blobText(5), 5, 2000)).toBe("stored");
      expect(await s.accounts.putTrustState(a.did, blobText(5, "again"), 5, 3000)).toBe("stale");
      expect(await s.accounts.putTrustState(a.did, blobText(4), 4, 3000)).toBe("stale");
      expect(await s.accounts.getTrustState(a.did)).toEqual({
        blob: blobText(5),
        version: 5,
        updatedAt: 2000,
      });
      expect(await s.accounts.putTrustState(a.did, blobText(9), 9, 4000)).toBe("stored");
      expect(await s.accounts.getTrustState(a.did)).toEqual({
        blob: blobText(9),
        version: 9,
        updatedAt: 4000,
      });
      // Versions are per account: B's first one may be lower than A's.
      expect(await s.accounts.putTrustState(b.did, blobText(2), 2, 4000)).toBe("stored");
      expect((await s.accounts.getTrustState(a.did))?.version).toBe(9);
      // A version as large as a client may send (a safe integer beyond 32 bits) round-trips.
      const big = Number.MAX_SAFE_INTEGER;
      expect(await s.accounts.putTrustState(b.did, blobText(big), big, 5000)).toBe("stored");
      expect((await s.accounts.getTrustState(b.did))?.version).toBe(big);
    });

    test("of concurrent writes of the same version exactly one is stored", async () => {
      const { s } = w();
      const a = await w().user();
      await s.accounts.putKeyBackup(a.did, '{"b":1}', 1000);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          s.accounts.putTrustState(a.did, blobText(3, `n${i}`), 3, 2000 + i),
        ),
      );
      expect(results.filter((r) => r === "stored")).toHaveLength(1);
      expect(results.filter((r) => r === "stale")).toHaveLength(5);
      const stored = await s.accounts.getTrustState(a.did);
      expect(stored?.version).toBe(3);
      expect(results[(stored?.updatedAt ?? 0) - 2000]).toBe("stored");
    });

    test("replacing the key backup keeps the trust state; deleting it deletes the trust state too", async () => {
      const { s } = w();
      const a = await w().user();
      const b = await w().user();
      for (const u of [a, b]) {
        await s.accounts.putKeyBackup(u.did, '{"b":1}', 1000);
        expect(await s.accounts.putTrustState(u.did, blobText(4), 4, 1000)).toBe("stored");
      }
      await s.accounts.putKeyBackup(a.did, '{"b":2}', 2000);
      expect((await s.accounts.getTrustState(a.did))?.version).toBe(4);
      expect(await s.accounts.deleteKeyBackup(a.did)).toBe(true);
      expect(await s.accounts.getTrustState(a.did)).toBeNull();
      // A new backup starts without one, at any version.
      await s.accounts.putKeyBackup(a.did, '{"b":3}', 3000);
      expect(await s.accounts.getTrustState(a.did)).toBeNull();
      expect(await s.accounts.putTrustState(a.did, blobText(1), 1, 3000)).toBe("stored");
      // Another account's are untouched.
      expect((await s.accounts.getTrustState(b.did))?.version).toBe(4);
    });

    test("replacing the account's key deletes the backup and the trust state", async () => {
      const { s } = w();
      const a = await w().user();
      await s.accounts.putKeyBackup(a.did, '{"b":1}', 1000);
      expect(await s.accounts.putTrustState(a.did, blobText(8), 8, 1000)).toBe("stored");
      await s.accounts.replacePublicKey(a.did, "bmV3a2V5", "dd".repeat(16));
      expect(await s.accounts.getKeyBackup(a.did)).toBeNull();
      expect(await s.accounts.getTrustState(a.did)).toBeNull();
      expect(await s.accounts.putTrustState(a.did, blobText(9), 9, 2000)).toBe("no-backup");
    });
  });
}
