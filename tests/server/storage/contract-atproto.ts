import { describe, expect, test } from "bun:test";
import { DuplicateError } from "../../../server/storage/types.ts";
import type { World } from "./fixtures.ts";

/**
 * The ATProto store (types.ts AtprotoStore, migration 15): the links of accounts signed in with
 * ATProto, and the OAuth client's state and session entries every server process shares. The same
 * behaviour on SQLite and PostgreSQL: a state is taken once, expired entries are never given out.
 */
export function atprotoContract(w: () => World): void {
  describe("atproto", () => {
    test("a link is stored, found by did, updated on a later sign-in, and listed among dids", async () => {
      const { s } = w();
      const a = await w().user();
      const b = await w().user();
      await s.atproto.link({ did: a.did, handle: a.handle, pdsUrl: "https://pds.example", linkedAt: 1000 });
      expect(await s.atproto.byDid(a.did)).toEqual({
        did: a.did,
        handle: a.handle,
        pdsUrl: "https://pds.example",
        linkedAt: 1000,
      });
      await s.atproto.link({ did: a.did, handle: a.handle, pdsUrl: "https://pds2.example", linkedAt: 2000 });
      // The PDS may move; the first link time stays.
      expect(await s.atproto.byDid(a.did)).toMatchObject({ pdsUrl: "https://pds2.example", linkedAt: 1000 });
      expect(await s.atproto.byDid(b.did)).toBeNull();
      expect([...(await s.atproto.linked([a.did, b.did, "did:plc:none"]))]).toEqual([a.did]);
      expect((await s.atproto.linked([])).size).toBe(0);
    });

    test("rename moves the account's and the link's handle together; a taken handle is refused and changes nothing", async () => {
      const { s } = w();
      const a = await w().user();
      const b = await w().user();
      await s.atproto.link({ did: a.did, handle: a.handle, pdsUrl: "https://pds.example", linkedAt: 1 });
      await s.atproto.rename(a.did, "alice-moved.example");
      expect((await s.accounts.byDid(a.did))?.handle).toBe("alice-moved.example");
      expect((await s.atproto.byDid(a.did))?.handle).toBe("alice-moved.example");
      expect(await s.accounts.byHandle(a.handle)).toBeNull();
      const err = await s.atproto.rename(a.did, b.handle).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateError);
      expect((err as DuplicateError).field).toBe("handle");
      expect((await s.accounts.byDid(a.did))?.handle).toBe("alice-moved.example");
      expect((await s.atproto.byDid(a.did))?.handle).toBe("alice-moved.example");
    });

    test("entries: set, get, replace, take once, delete; stores are apart; expired ones are never given", async () => {
      const { s } = w();
      const now = 1_700_000_000_000;
      await s.atproto.set("state", "k1", '{"a":1}', now + 60_000);
      await s.atproto.set("session", "k1", '{"s":1}', null);
      expect(await s.atproto.get("state", "k1", now)).toBe('{"a":1}');
      expect(await s.atproto.get("session", "k1", now)).toBe('{"s":1}');
      await s.atproto.set("state", "k1", '{"a":2}', now + 60_000);
      expect(await s.atproto.get("state", "k1", now)).toBe('{"a":2}');
      // A state is used once: the second take finds nothing.
      expect(await s.atproto.take("state", "k1", now)).toBe('{"a":2}');
      expect(await s.atproto.take("state", "k1", now)).toBeNull();
      expect(await s.atproto.get("state", "k1", now)).toBeNull();
      expect(await s.atproto.get("session", "k1", now)).toBe('{"s":1}');
      await s.atproto.delete("session", "k1");
      expect(await s.atproto.get("session", "k1", now)).toBeNull();
      // Past its expiry an entry is neither read nor taken (and taking it removes it).
      await s.atproto.set("state", "old", "x", now - 1);
      expect(await s.atproto.get("state", "old", now)).toBeNull();
      expect(await s.atproto.take("state", "old", now)).toBeNull();
      await s.atproto.set("state", "old", "x", now - 1);
      await s.atproto.set("pending", "old2", "y", now - 1);
      await s.atproto.set("pending", "live", "z", now + 1);
      await s.atproto.set("session", "forever", "w", null);
      expect(await s.atproto.purgeExpired(now)).toBe(2);
      expect(await s.atproto.get("pending", "live", now)).toBe("z");
      expect(await s.atproto.get("session", "forever", now + 10 ** 9)).toBe("w");
    });

    test("two takers of one state at once: exactly one gets it", async () => {
      const { s } = w();
      const now = 1_700_000_000_000;
      for (let i = 0; i < 5; i++) {
        await s.atproto.set("state", `race${i}`, `v${i}`, now + 60_000);
        const got = await Promise.all([1, 2, 3, 4].map(() => s.atproto.take("state", `race${i}`, now)));
        expect(got.filter((g) => g !== null)).toEqual([`v${i}`]);
      }
    });
  });
}
