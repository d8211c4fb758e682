/**
 * The search index at rest (issue 32): one AES-256-GCM sealed snapshot in IndexedDB, never plaintext.
 * - The key is this device's own, generated with `extractable: false` and kept as a CryptoKey in the
 *   same database: a script (or a person with the profile's files) that reads the stored values finds
 *   only ciphertext and a key object it cannot export; only code running in this origin can use it.
 * - The account's did is the additional data: a snapshot of another account (a shared browser, a
 *   sign-in as someone else) does not open, and is discarded like a corrupted one; the index is then
 *   rebuilt by the backfill.
 * - The JSON is gzipped before sealing (CompressionStream), about a quarter of its size.
 */

/** The few calls of a key-value store this needs (idb-keyval in the browser, a Map in tests). */
export interface SnapshotStore {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  del(key: string): Promise<void>;
}

export const DEVICE_KEY = "device-key";
export const SNAPSHOT = "snapshot";
const VERSION = 1;

interface Sealed {
  v: number;
  iv: Uint8Array<ArrayBuffer>;
  ct: ArrayBuffer;
}

const aad = (account: string) => new TextEncoder().encode(`wsync-search-snapshot-v${VERSION}\n${account}`);

/** This device's search key: made once, non-extractable, kept in the store. */
export async function deviceKey(store: SnapshotStore): Promise<CryptoKey> {
  const kept = await store.get(DEVICE_KEY);
  if (kept instanceof CryptoKey && kept.algorithm.name === "AES-GCM" && !kept.extractable) return kept;
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]);
  await store.set(DEVICE_KEY, key);
  return key;
}

async function pipe(bytes: Uint8Array<ArrayBuffer>, stream: CompressionStream | DecompressionStream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** Array items serialized per piece (2,000 of the benchmark's messages: about 1 MB of JSON). */
export const PIECE = 2000;

const turn = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * `JSON.stringify(data)`, in pieces with a turn for the thread between them: the arrays at the top
 * of an object (the snapshot's messages and edits) go `PIECE` items at a time, so the worker answers
 * a query in between instead of after the whole index is written out (~0.7 s at 100,000 messages).
 * The pieces joined are exactly `JSON.stringify(data)`. The caller must not change `data` meanwhile.
 */
export async function* jsonPieces(data: unknown, per = PIECE): AsyncGenerator<string> {
  if (!data || typeof data !== "object" || Array.isArray(data) || "toJSON" in data) {
    yield JSON.stringify(data);
    return;
  }
  let first = true;
  yield "{";
  for (const [k, v] of Object.entries(data)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    yield `${first ? "" : ","}${JSON.stringify(k)}:`;
    first = false;
    if (!Array.isArray(v) || v.length <= per) {
      yield JSON.stringify(v);
      continue;
    }
    yield "[";
    for (let i = 0; i < v.length; i += per) {
      if (i > 0) await turn();
      yield (i > 0 ? "," : "") + JSON.stringify(v.slice(i, i + per)).slice(1, -1);
    }
    yield "]";
  }
  yield "}";
}

/** Seals `data` (JSON) for `account` and stores it in place of the previous snapshot. */
export async function saveSnapshot(store: SnapshotStore, key: CryptoKey, account: string, data: unknown) {
  const pieces = jsonPieces(data);
  const text = new ReadableStream<string>({
    async pull(c) {
      const next = await pieces.next();
      if (next.done) c.close();
      else c.enqueue(next.value);
    },
  });
  const zipped = text.pipeThrough(new TextEncoderStream()).pipeThrough(new CompressionStream("gzip"));
  const plain = new Uint8Array(await new Response(zipped).arrayBuffer());
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad(account) }, key, plain);
  const sealed: Sealed = { v: VERSION, iv, ct };
  await store.set(SNAPSHOT, sealed);
  return ct.byteLength;
}

/**
 * The snapshot of `account`, opened; null when there is none. One that does not open (corrupted,
 * another account's, sealed under another key, another version) is deleted: the caller rebuilds.
 */
export async function loadSnapshot(store: SnapshotStore, key: CryptoKey, account: string): Promise<unknown> {
  const s = (await store.get(SNAPSHOT)) as Partial<Sealed> | undefined;
  if (s === undefined || s === null) return null;
  try {
    if (s.v !== VERSION || !(s.iv instanceof Uint8Array) || !(s.ct instanceof ArrayBuffer))
      throw new Error("shape");
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: s.iv, additionalData: aad(account) },
      key,
      s.ct,
    );
    const json = await pipe(new Uint8Array(plain), new DecompressionStream("gzip"));
    return JSON.parse(new TextDecoder().decode(json));
  } catch {
    await store.del(SNAPSHOT);
    return null;
  }
}
