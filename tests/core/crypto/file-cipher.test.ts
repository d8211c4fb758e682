/**
 * Files sealed in chunks (core/crypto/file-cipher.ts; docs/protocol-extensions.md "Files"): the
 * sizes at every chunk edge round-trip, a 100 MB file streams through with bounded memory, the
 * buckets hide the exact size, each chunk matches an independent AES-GCM (@noble/ciphers) under the
 * documented nonce, and every tampering is refused: a changed byte, reordered, dropped, repeated or
 * foreign chunks, a cut-off end, data appended, and the wrong key.
 */
import { describe, expect, test } from "bun:test";
import { gcm } from "@noble/ciphers/aes.js";
import {
  bucketChunks,
  decryptBytes,
  decryptFile,
  encryptBytes,
  encryptedFileSize,
  encryptFile,
  FILE_CHUNK,
  FILE_CIPHER_CHUNK,
  fileChunkCount,
  isBucketCount,
  newFileKey,
} from "../../../core/crypto/file-cipher.ts";
import { CryptoError } from "../../../core/crypto/index.ts";

function pattern(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

function chunksOf(sealed: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < sealed.length; at += FILE_CIPHER_CHUNK)
    out.push(sealed.slice(at, at + FILE_CIPHER_CHUNK));
  return out;
}

function join(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function refused(key: Uint8Array, sealed: Uint8Array): Promise<string> {
  try {
    await decryptBytes(key, sealed);
  } catch (e) {
    expect(e).toBeInstanceOf(CryptoError);
    expect((e as CryptoError).code).toBe("file-invalid");
    return (e as Error).message;
  }
  throw new Error("the tampered file opened");
}

describe("file cipher: sizes", () => {
  for (const size of [0, 1, FILE_CHUNK - 1, FILE_CHUNK, FILE_CHUNK + 1, 3 * FILE_CHUNK + 17]) {
    test(`${size} bytes round-trip, padded to the bucket`, async () => {
      const key = newFileKey();
      const data = pattern(size, size + 7);
      const sealed = await encryptBytes(key, data);
      expect(sealed.length).toBe(encryptedFileSize(size));
      expect(sealed.length % FILE_CIPHER_CHUNK).toBe(0);
      expect(isBucketCount(sealed.length / FILE_CIPHER_CHUNK)).toBe(true);
      expect(await decryptBytes(key, sealed)).toEqual(data);
    });
  }

  test("a split source and a split ciphertext give the same result", async () => {
    const key = newFileKey();
    const data = pattern(2 * FILE_CHUNK + 5);
    async function* pieces(bytes: Uint8Array, step: number) {
      for (let at = 0; at < bytes.length; at += step) yield bytes.subarray(at, at + step);
    }
    const sealed: Uint8Array[] = [];
    for await (const c of encryptFile(key, pieces(data, 1000), data.length)) sealed.push(c);
    const plain: Uint8Array[] = [];
    for await (const p of decryptFile(key, pieces(join(sealed), 777))) plain.push(p);
    expect(join(plain)).toEqual(data);
  });

  test("a source longer or shorter than the declared size is refused", async () => {
    const key = newFileKey();
    const run = async (data: Uint8Array, size: number) => {
      async function* src() {
        yield data;
      }
      for await (const _ of encryptFile(key, src(), size)) {
        // drain
      }
    };
    await expect(run(pattern(10), 9)).rejects.toThrow("longer");
    await expect(run(pattern(10), 11)).rejects.toThrow("ended after 10 of 11");
  });

  test("buckets: Padmé over the chunk count, overhead at most 12.5%, small counts exact", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(bucketChunks)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(bucketChunks(9)).toBe(10);
    expect(bucketChunks(33)).toBe(36);
    expect(bucketChunks(383)).toBe(384);
    for (let c = 1; c < 5000; c++) {
      const b = bucketChunks(c);
      expect(b).toBeGreaterThanOrEqual(c);
      expect(b / c).toBeLessThanOrEqual(1.125);
      expect(bucketChunks(b)).toBe(b);
    }
    // Files of different sizes in one bucket look the same to the server.
    expect(encryptedFileSize(600 * 1024)).toBe(encryptedFileSize(630 * 1024));
    expect(fileChunkCount(0)).toBe(1);
    expect(fileChunkCount(FILE_CHUNK - 8)).toBe(1);
    expect(fileChunkCount(FILE_CHUNK - 7)).toBe(2);
  });

  test("each chunk is AES-256-GCM with nonce = index (8 bytes BE) ‖ last flag (4 bytes BE)", async () => {
    const key = newFileKey();
    const data = pattern(FILE_CHUNK + 100);
    const chunks = chunksOf(await encryptBytes(key, data));
    expect(chunks.length).toBe(2);
    const aad = new TextEncoder().encode("wsync/file/v1");
    const nonce = (i: number, last: number) => {
      const n = new Uint8Array(12);
      n[7] = i;
      n[11] = last;
      return n;
    };
    const first = gcm(key, nonce(0, 0), aad).decrypt(chunks[0] as Uint8Array);
    const second = gcm(key, nonce(1, 1), aad).decrypt(chunks[1] as Uint8Array);
    expect(new DataView(first.buffer).getBigUint64(0)).toBe(BigInt(data.length));
    expect(join([first.subarray(8), second]).subarray(0, data.length)).toEqual(data);
  });
});

describe("file cipher: tampering", () => {
  const key = newFileKey();
  const data = pattern(3 * FILE_CHUNK + 10);
  let sealedP: Promise<Uint8Array> | null = null;
  const sealed = () => {
    sealedP ??= encryptBytes(key, data);
    return sealedP;
  };

  test("the untouched file opens", async () => {
    expect(await decryptBytes(key, await sealed())).toEqual(data);
  });

  test("a flipped bit anywhere is refused", async () => {
    for (const at of [0, 11, FILE_CHUNK, FILE_CIPHER_CHUNK + 3, 4 * FILE_CIPHER_CHUNK - 1]) {
      const bad = (await sealed()).slice();
      bad[at] = (bad[at] as number) ^ 1;
      await refused(key, bad);
    }
  });

  test("reordered chunks are refused", async () => {
    const c = chunksOf(await sealed());
    await refused(key, join([c[1], c[0], c[2], c[3]] as Uint8Array[]));
    await refused(key, join([c[0], c[2], c[1], c[3]] as Uint8Array[]));
  });

  test("truncation is refused: the last chunk dropped, a middle chunk dropped, a chunk cut short", async () => {
    const c = chunksOf(await sealed());
    expect(await refused(key, join(c.slice(0, 3)))).toContain("last");
    await refused(key, join([c[0], c[1], c[3]] as Uint8Array[]));
    await refused(key, (await sealed()).subarray(0, (await sealed()).length - 1));
    await refused(key, new Uint8Array(0));
  });

  test("a repeated chunk and data appended after the last are refused", async () => {
    const c = chunksOf(await sealed());
    await refused(key, join([c[0], c[1], c[1], c[2], c[3]] as Uint8Array[]));
    await refused(key, join([...c, c[3] as Uint8Array]));
    await refused(key, join([...c, new Uint8Array(5)]));
  });

  test("a chunk swapped in from another file (another key) is refused", async () => {
    const other = chunksOf(await encryptBytes(newFileKey(), pattern(3 * FILE_CHUNK + 10, 99)));
    const c = chunksOf(await sealed());
    await refused(key, join([c[0], other[1], c[2], c[3]] as Uint8Array[]));
  });

  test("a chunk swapped in from another file under the same key, same position, is refused when lengths differ", async () => {
    // Keys are never reused, but even then a file of another length cannot stand in: the length
    // header in chunk 0 fixes the chunk count.
    const short = chunksOf(await encryptBytes(key, pattern(10)));
    await refused(key, join([short[0] as Uint8Array, ...chunksOf(await sealed()).slice(1)]));
  });

  test("the wrong key is refused", async () => {
    expect(await refused(newFileKey(), await sealed())).toContain("chunk 0");
  });

  test("a key of the wrong length is refused", async () => {
    await refused(new Uint8Array(16), await sealed());
  });
});

describe("file cipher: 100 MB streamed", () => {
  test("encrypts and decrypts 100 MB through streams with memory bounded", async () => {
    const size = 100 * 1024 * 1024;
    const key = newFileKey();
    const piece = pattern(1024 * 1024, 5);
    async function* source() {
      for (let at = 0; at < size; at += piece.length) {
        // A fresh copy each time, as a file reader hands out new buffers.
        yield piece.slice(0, Math.min(piece.length, size - at));
      }
    }
    Bun.gc(true);
    const base = process.memoryUsage().rss;
    let peak = 0;
    let out = 0;
    let chunks = 0;
    let mismatch = false;
    for await (const plain of decryptFile(key, encryptFile(key, source(), size))) {
      // Compare against the repeating pattern without keeping anything.
      const offset = out % piece.length;
      for (let i = 0; i < plain.length; i += 4099) {
        if (plain[i] !== piece[(offset + i) % piece.length]) mismatch = true;
      }
      out += plain.length;
      if (++chunks % 128 === 0) {
        // A full collection before each sample: what is measured is what is still held, not
        // garbage a busy process has not collected yet.
        Bun.gc(true);
        peak = Math.max(peak, process.memoryUsage().rss - base);
      }
    }
    expect(mismatch).toBe(false);
    expect(out).toBe(size);
    // The file is 100 MB and is never held whole: the process grows by far less than the file.
    expect(peak).toBeLessThan(48 * 1024 * 1024);
  });
});
