/**
 * A small key-value store the engine persists through: localStorage in a browser, a 0600 JSON file in
 * the CLI, a Map in tests. Values are strings; the engine owns their format.
 */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * One read-modify-write that no other process or tab sharing the store interleaves with (a
   * device's sender-chain counter, protocol §8). Stores used by one process at a time may omit it.
   */
  update?(key: string, change: (current: string | null) => string): Promise<string>;
}

/** `store.update` where the store has one, else get-then-set (one process, one event loop turn apart). */
export async function updateValue(
  store: KeyValueStore,
  key: string,
  change: (current: string | null) => string,
): Promise<string> {
  if (store.update) return store.update(key, change);
  const next = change(await store.get(key));
  await store.set(key, next);
  return next;
}

export class MemoryStore implements KeyValueStore {
  readonly data = new Map<string, string>();
  async update(key: string, change: (current: string | null) => string) {
    const next = change(this.data.get(key) ?? null);
    this.data.set(key, next);
    return next;
  }
  async get(key: string) {
    return this.data.get(key) ?? null;
  }
  async set(key: string, value: string) {
    this.data.set(key, value);
  }
  async delete(key: string) {
    this.data.delete(key);
  }
}

/** Storage keys (spec §3: token, auth, privateKey, publicKey, and a per-channel epoch store). */
export const StoreKeys = {
  token: "token",
  auth: "auth",
  privateKey: "privateKey",
  publicKey: "publicKey",
  pins: "wsync-pins",
  /** did → handle pinned on first sight (protocol §7 "Names"). */
  handles: "wsync-handles",
  epochs: (channelId: string) => `wsync-epochs:${channelId}`,
  /** The channel ids that have an epoch store, so logout can wipe them all. */
  epochIndex: "wsync-epochs-index",
} as const;

export async function readJson<T>(store: KeyValueStore, key: string): Promise<T | null> {
  const raw = await store.get(key);
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}
