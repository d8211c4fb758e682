import type { KeyValueStore } from "../../core/client/index.ts";

/**
 * localStorage behind the engine's store interface (spec §3 storage keys). Keys and tokens live in the
 * browser only; they never travel to the server except as the protocol says.
 */
export class BrowserStore implements KeyValueStore {
  constructor(private readonly storage: Storage = window.localStorage) {}
  async get(key: string) {
    return this.storage.getItem(key);
  }
  async set(key: string, value: string) {
    this.storage.setItem(key, value);
  }
  async delete(key: string) {
    this.storage.removeItem(key);
  }
}

/** Spec §2.1 guard rule: stored auth must hold a did and an access token. */
export function hasStoredAuth(storage: Storage = window.localStorage): boolean {
  try {
    const auth = JSON.parse(storage.getItem("auth") ?? "null") as {
      did?: unknown;
      accessJwt?: unknown;
    } | null;
    return typeof auth?.did === "string" && typeof auth.accessJwt === "string";
  } catch {
    return false;
  }
}
