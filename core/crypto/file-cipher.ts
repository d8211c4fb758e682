import type { Bytes } from "./bytes.ts";
import { utf8 } from "./bytes.ts";
import { CryptoError, CryptoText } from "./errors.ts";
import { randomBytes } from "./random.ts";

// Files (docs/protocol-extensions.md "Files"): each file gets its own random AES-256 key and is cut
// into 64 KiB chunks, each sealed with AES-256-GCM. The construction is the STREAM online AEAD
// (Hoang, Reyhanitabar, Rogaway, Vizár 2015): the nonce of chunk i is i (8 bytes, big-endian) followed
// by a 4-byte flag that is 1 on the last chunk only. So a reordered chunk fails (its index is in the
// nonce), a truncated file fails (its new last chunk was sealed with flag 0), a chunk from another
// file fails (another key), and the key being fresh per file means a nonce never repeats under it.
//
// The sealed plaintext is an 8-byte big-endian length, the file, then zeros up to a whole number of
// chunks, and then whole zero chunks up to a bucket (below), so every chunk on the wire is exactly
// FILE_CIPHER_CHUNK bytes and the server learns only the bucket, never the exact size.

/** Plaintext bytes per chunk. */
export const FILE_CHUNK = 65536;
/** The GCM tag each chunk carries. */
export const FILE_TAG = 16;
/** Ciphertext bytes per chunk: every chunk, the last and the padding included. */
export const FILE_CIPHER_CHUNK = FILE_CHUNK + FILE_TAG;
/** The length header at the start of the sealed plaintext. */
const HEADER = 8;
/** Bound as AAD into every chunk: a ciphertext of another wsync format never opens as a file. */
const AAD = utf8("wsync/file/v1");

/**
 * The bucket for a file that needs `chunks` chunks: Padmé (Nikitin et al., "Reducing Metadata
 * Leakage from Encrypted Files and Communication with PURBs", 2019) over the chunk count. It keeps
 * the low bits of the count exact up to 7 chunks and rounds more of them away as files grow, so
 * the padding costs at most ~12% and a count leaks O(log log n) bits instead of log n.
 */
export function bucketChunks(chunks: number): number {
  if (!Number.isSafeInteger(chunks) || chunks < 1) throw new RangeError("bucketChunks: bad count");
  if (chunks < 2) return chunks;
  const e = Math.floor(Math.log2(chunks));
  const s = Math.floor(Math.log2(e)) + 1;
  const lastBits = e - s;
  const mask = 2 ** lastBits - 1;
  return Math.ceil(chunks / (mask + 1)) * (mask + 1);
}

/** How many chunks a file of `size` bytes is sealed into (the bucket included). */
export function fileChunkCount(size: number): number {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError("fileChunkCount: bad size");
  return bucketChunks(Math.max(1, Math.ceil((size + HEADER) / FILE_CHUNK)));
}

/** The ciphertext size of a file of `size` bytes: what the server stores and sees. */
export function encryptedFileSize(size: number): number {
  return fileChunkCount(size) * FILE_CIPHER_CHUNK;
}

/** True when `chunks` is a count some file size seals into (the server refuses any other). */
export function isBucketCount(chunks: number): boolean {
  return Number.isSafeInteger(chunks) && chunks >= 1 && bucketChunks(chunks) === chunks;
}

/** A new file key: 32 random bytes (never reused: one per file, one per thumbnail). */
export function newFileKey(): Bytes {
  return randomBytes(32);
}

function nonce(index: number, last: boolean): Bytes {
  const n = new Uint8Array(12);
  const view = new DataView(n.buffer);
  view.setUint32(0, Math.floor(index / 2 ** 32));
  view.setUint32(4, index >>> 0);
  view.setUint32(8, last ? 1 : 0);
  return n;
}

function invalid(detail: string): never {
  throw new CryptoError("file-invalid", CryptoText.fileInvalid(detail));
}

async function importKey(raw: Uint8Array, usage: KeyUsage): Promise<CryptoKey> {
  if (raw.length !== 32) invalid("the key must be 32 bytes");
  return crypto.subtle.importKey("raw", new Uint8Array(raw), "AES-GCM", false, [usage]);
}

/** Cuts a stream of arbitrary pieces into pieces of exactly `size` bytes (the last may be shorter). */
async function* rechunk(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Bytes> {
  let buf = new Uint8Array(size);
  let fill = 0;
  for await (const piece of source) {
    let at = 0;
    while (at < piece.length) {
      const take = Math.min(size - fill, piece.length - at);
      buf.set(piece.subarray(at, at + take), fill);
      fill += take;
      at += take;
      if (fill === size) {
        yield buf;
        buf = new Uint8Array(size);
        fill = 0;
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill);
}

/**
 * Seals a file of exactly `size` bytes read from `source`, yielding one ciphertext chunk of
 * FILE_CIPHER_CHUNK bytes at a time (fileChunkCount(size) of them). Holds at most a chunk or two in
 * memory whatever the size. Throws when `source` yields more or fewer than `size` bytes.
 */
export async function* encryptFile(
  rawKey: Uint8Array,
  source: AsyncIterable<Uint8Array>,
  size: number,
): AsyncGenerator<Bytes> {
  const total = fileChunkCount(size);
  const key = await importKey(rawKey, "encrypt");
  const header = new Uint8Array(HEADER);
  new DataView(header.buffer).setBigUint64(0, BigInt(size));
  async function* plain(): AsyncGenerator<Uint8Array> {
    yield header;
    let seen = 0;
    for await (const piece of source) {
      seen += piece.length;
      if (seen > size) throw new RangeError(`encryptFile: the source is longer than ${size} bytes`);
      yield piece;
    }
    if (seen !== size) throw new RangeError(`encryptFile: the source ended after ${seen} of ${size} bytes`);
  }
  let index = 0;
  const seal = async (chunk: Uint8Array, last: boolean): Promise<Bytes> => {
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: nonce(index, last), additionalData: AAD },
      key,
      new Uint8Array(chunk),
    );
    index++;
    return new Uint8Array(sealed);
  };
  for await (const piece of rechunk(plain(), FILE_CHUNK)) {
    // A short piece is the end of the data: zero-fill it to a whole chunk.
    const chunk = piece.length === FILE_CHUNK ? piece : padTo(piece, FILE_CHUNK);
    yield await seal(chunk, index === total - 1);
  }
  const zeros = new Uint8Array(FILE_CHUNK);
  while (index < total) yield await seal(zeros, index === total - 1);
}

function padTo(piece: Uint8Array, length: number): Bytes {
  const out = new Uint8Array(length);
  out.set(piece);
  return out;
}

/**
 * Opens a sealed file read from `source` (any split), yielding its plaintext in pieces. Refuses
 * (CryptoError "file-invalid") a wrong key, any changed byte, reordered, dropped, repeated or
 * foreign chunks, a cut-off end, data after the last chunk, and padding that is not zeros. Pieces
 * already yielded before a refusal must be thrown away by the caller (the CLI writes to a temporary
 * file and renames only after the last piece).
 */
export async function* decryptFile(
  rawKey: Uint8Array,
  source: AsyncIterable<Uint8Array>,
): AsyncGenerator<Bytes> {
  const key = await importKey(rawKey, "decrypt");
  let index = 0;
  let remaining = -1; // file bytes still to yield, known after chunk 0
  let expected = -1; // chunk count, known after chunk 0
  const open = async (chunk: Uint8Array, last: boolean): Promise<Bytes> => {
    if (chunk.length !== FILE_CIPHER_CHUNK) invalid("a chunk is cut short");
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: nonce(index, last), additionalData: AAD },
        key,
        new Uint8Array(chunk),
      );
      return new Uint8Array(plain);
    } catch {
      return invalid(
        last
          ? `chunk ${index} does not open as the last one (wrong key, changed or cut off)`
          : `chunk ${index} does not open (wrong key, changed, reordered or cut off)`,
      );
    }
  };
  const take = (plain: Bytes): Bytes | null => {
    let body = plain;
    if (index === 0) {
      const size = Number(new DataView(plain.buffer, plain.byteOffset, HEADER).getBigUint64(0));
      if (!Number.isSafeInteger(size)) invalid("the length header is out of range");
      remaining = size;
      expected = fileChunkCount(size);
      body = plain.subarray(HEADER);
    }
    const keep = Math.min(remaining, body.length);
    remaining -= keep;
    for (let i = keep; i < body.length; i++) if (body[i] !== 0) invalid("the padding is not zeros");
    index++;
    return keep > 0 ? body.subarray(0, keep) : null;
  };
  // One chunk of lookahead: a chunk is opened as the last only when nothing follows it.
  let pending: Bytes | null = null;
  for await (const chunk of rechunk(source, FILE_CIPHER_CHUNK)) {
    if (pending !== null) {
      if (expected !== -1 && index >= expected) invalid("data after the last chunk");
      const out = take(await open(pending, false));
      if (out) yield out;
    }
    pending = chunk;
  }
  if (pending === null) invalid("it is empty");
  if (expected !== -1 && index >= expected) invalid("data after the last chunk");
  const out = take(await open(pending, true));
  if (index !== expected) invalid(`it has ${index} chunks where its length needs ${expected}`);
  if (out) yield out;
}

/** Seals a small file held in memory (thumbnails): the concatenated chunks. */
export async function encryptBytes(rawKey: Uint8Array, data: Uint8Array): Promise<Bytes> {
  const out = new Uint8Array(encryptedFileSize(data.length));
  let at = 0;
  for await (const chunk of encryptFile(rawKey, once(data), data.length)) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Opens a small sealed file held in memory. */
export async function decryptBytes(rawKey: Uint8Array, sealed: Uint8Array): Promise<Bytes> {
  const parts: Bytes[] = [];
  let length = 0;
  for await (const piece of decryptFile(rawKey, once(sealed))) {
    parts.push(piece);
    length += piece.length;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function* once(data: Uint8Array): AsyncGenerator<Uint8Array> {
  yield data;
}
