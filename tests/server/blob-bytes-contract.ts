/**
 * The storage contract of encrypted file chunks (server/blobs/blob-bytes.ts): every store (the
 * filesystem, an S3-compatible one) runs these same tests (tests/server/blob-bytes.test.ts).
 */
import { describe, expect, test } from "bun:test";
import type { BlobBytes } from "../../server/blobs/blob-bytes.ts";

const id = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");

function chunk(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 13 + seed) & 255;
  return out;
}

export function blobBytesContract(name: string, make: () => BlobBytes, opts: { presigns: boolean }): void {
  describe(`BlobBytes contract: ${name}`, () => {
    test("a stored chunk reads back byte for byte; a chunk never stored is null", async () => {
      const s = make();
      const b = id();
      const data = chunk(65552, 1);
      await s.putChunk(b, 0, data);
      expect(await s.readChunk(b, 0)).toEqual(data);
      expect(await s.readChunk(b, 1)).toBeNull();
      expect(await s.readChunk(id(), 0)).toBeNull();
    });

    test("putting the same chunk again replaces it (idempotent), other chunks untouched", async () => {
      const s = make();
      const b = id();
      await s.putChunk(b, 0, chunk(100, 1));
      await s.putChunk(b, 1, chunk(100, 2));
      await s.putChunk(b, 0, chunk(100, 3));
      await s.putChunk(b, 0, chunk(100, 3));
      expect(await s.readChunk(b, 0)).toEqual(chunk(100, 3));
      expect(await s.readChunk(b, 1)).toEqual(chunk(100, 2));
      expect([...(await s.present(b, 2))].sort()).toEqual([0, 1]);
    });

    test("present names exactly the stored chunks below the count; blobs do not see each other", async () => {
      const s = make();
      const a = id();
      const other = id();
      for (const i of [0, 2, 5, 11]) await s.putChunk(a, i, chunk(10, i));
      await s.putChunk(other, 1, chunk(10, 9));
      expect([...(await s.present(a, 12))].sort((x, y) => x - y)).toEqual([0, 2, 5, 11]);
      // Chunks past the count are not reported (a record says how many there are).
      expect([...(await s.present(a, 6))].sort((x, y) => x - y)).toEqual([0, 2, 5]);
      expect([...(await s.present(other, 12))]).toEqual([1]);
      expect((await s.present(id(), 12)).size).toBe(0);
    });

    test("remove deletes every chunk of one blob only; removing again or a blob never stored is fine", async () => {
      const s = make();
      const a = id();
      const keep = id();
      for (let i = 0; i < 20; i++) await s.putChunk(a, i, chunk(10, i));
      await s.putChunk(keep, 0, chunk(10, 1));
      await s.remove(a);
      expect((await s.present(a, 20)).size).toBe(0);
      expect(await s.readChunk(a, 3)).toBeNull();
      expect(await s.readChunk(keep, 0)).toEqual(chunk(10, 1));
      await s.remove(a);
      await s.remove(id());
    });

    test("a zero-length chunk and many chunks at once are stored", async () => {
      const s = make();
      const b = id();
      await Promise.all(Array.from({ length: 24 }, (_, i) => s.putChunk(b, i, chunk(64, i))));
      await s.putChunk(b, 24, new Uint8Array(0));
      expect((await s.present(b, 25)).size).toBe(25);
      expect(await s.readChunk(b, 24)).toEqual(new Uint8Array(0));
      expect(await s.readChunk(b, 17)).toEqual(chunk(64, 17));
    });

    test("ids that are not blob ids are refused before any path or key is made", async () => {
      const s = make();
      for (const bad of ["../etc", "ABCDEF", "0".repeat(31), `${"0".repeat(32)}/x`]) {
        await expect(s.putChunk(bad, 0, chunk(1, 1))).rejects.toThrow();
        await expect(s.readChunk(bad, 0)).rejects.toThrow();
      }
    });

    if (opts.presigns)
      test("a presigned link fetches that chunk without any other credential", async () => {
        const s = make();
        const b = id();
        await s.putChunk(b, 3, chunk(500, 7));
        const url = s.presign?.(b, 3);
        expect(typeof url).toBe("string");
        const res = await fetch(url as string);
        expect(res.status).toBe(200);
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(chunk(500, 7));
        // The link names that object and no other (s3rver does not check V4 signatures, so a link
        // changed to another key cannot be shown refused here; a real S3 refuses it with 403).
        expect(new URL(url as string).pathname.endsWith(`/${b}/3`)).toBe(true);
        expect(new URL(url as string).searchParams.get("X-Amz-Expires")).toBe("60");
      });
    else
      test("this store has no presigned links (downloads go through the server)", () => {
        const s = make();
        expect(s.presign?.(id(), 0) ?? null).toBeNull();
      });
  });
}
