/**
 * Issue 32: the browser's search index at rest is sealed under a non-extractable device key; a
 * corrupted, foreign (another account's) or other key's snapshot is discarded, so the index is rebuilt.
 */
import { describe, expect, test } from "bun:test";
import {
  DEVICE_KEY,
  deviceKey,
  jsonPieces,
  loadSnapshot,
  SNAPSHOT,
  type SnapshotStore,
  saveSnapshot,
} from "../../../web/features/search/snapshot.ts";

class MapStore implements SnapshotStore {
  readonly map = new Map<string, unknown>();
  async get(k: string) {
    return this.map.get(k);
  }
  async set(k: string, v: unknown) {
    this.map.set(k, v);
  }
  async del(k: string) {
    this.map.delete(k);
  }
}

const ALICE = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
const BOB = "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb";
const data = { v: 1, messages: [{ uri: "at://x/1", text: "the secret launch code is swordfish" }] };

/** Every byte the store holds, as text (what reading IndexedDB without the key shows). */
function rawText(store: MapStore): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (v instanceof ArrayBuffer) parts.push(new TextDecoder("latin1").decode(v));
    else if (ArrayBuffer.isView(v)) parts.push(new TextDecoder("latin1").decode(v as Uint8Array));
    else if (typeof v === "string") parts.push(v);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  for (const v of store.map.values()) walk(v);
  return parts.join("\n");
}

describe("the sealed snapshot", () => {
  test("is written out in pieces that join to exactly JSON.stringify, and a big one round-trips", async () => {
    const messages = Array.from({ length: 2345 }, (_, i) => ({
      uri: `at://x/${i}`,
      text: i % 7 ? `message "${i}" ünïcode\n` : null,
      skip: undefined,
    }));
    const big = {
      v: 1,
      messages,
      edits: [],
      channelNames: { c1: "ops", c2: null },
      progress: {},
      gone: undefined,
    };
    const join = async (d: unknown, per?: number) => {
      const parts: string[] = [];
      for await (const p of jsonPieces(d, per)) parts.push(p);
      return parts;
    };
    for (const per of [1, 2, 1000, 5000]) expect((await join(big, per)).join("")).toBe(JSON.stringify(big));
    expect((await join(big, 1000)).length).toBeGreaterThan(8); // the messages went in three pieces
    for (const d of [null, 3, "x", [1, 2], { toJSON: () => "y" }, {}])
      expect((await join(d, 1)).join("")).toBe(JSON.stringify(d));
    const store = new MapStore();
    const key = await deviceKey(store);
    await saveSnapshot(store, key, ALICE, big);
    expect(await loadSnapshot(store, key, ALICE)).toEqual(JSON.parse(JSON.stringify(big)));
  });

  test("round trip under a non-extractable device key, kept across calls; no plaintext stored", async () => {
    const store = new MapStore();
    const key = await deviceKey(store);
    expect(key.extractable).toBe(false);
    await expect(crypto.subtle.exportKey("raw", key)).rejects.toThrow();
    expect(await deviceKey(store)).toBe(key);
    await saveSnapshot(store, key, ALICE, data);
    expect(await loadSnapshot(store, key, ALICE)).toEqual(data);
    const raw = rawText(store);
    expect(raw.length).toBeGreaterThan(20);
    expect(raw).not.toContain("swordfish");
    expect(raw).not.toContain("launch");
    expect(raw).not.toContain(ALICE);
  });

  test("a corrupted snapshot is discarded", async () => {
    const store = new MapStore();
    const key = await deviceKey(store);
    await saveSnapshot(store, key, ALICE, data);
    const sealed = store.map.get(SNAPSHOT) as { ct: ArrayBuffer };
    const bytes = new Uint8Array(sealed.ct);
    bytes[5] = (bytes[5] as number) ^ 1;
    expect(await loadSnapshot(store, key, ALICE)).toBeNull();
    expect(store.map.has(SNAPSHOT)).toBe(false);
    // Not a snapshot at all.
    store.map.set(SNAPSHOT, { v: 1, iv: "nope", ct: 3 });
    expect(await loadSnapshot(store, key, ALICE)).toBeNull();
    expect(store.map.has(SNAPSHOT)).toBe(false);
  });

  test("another account's snapshot, or one sealed under another key, is discarded", async () => {
    const store = new MapStore();
    const key = await deviceKey(store);
    await saveSnapshot(store, key, ALICE, data);
    expect(await loadSnapshot(store, key, BOB)).toBeNull();
    expect(store.map.has(SNAPSHOT)).toBe(false);
    await saveSnapshot(store, key, ALICE, data);
    // The device key replaced (another browser profile's snapshot copied in).
    store.map.delete(DEVICE_KEY);
    const other = await deviceKey(store);
    expect(other).not.toBe(key);
    expect(await loadSnapshot(store, other, ALICE)).toBeNull();
    expect(store.map.has(SNAPSHOT)).toBe(false);
  });
});
