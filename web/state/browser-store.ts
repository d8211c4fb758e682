import type { KeyValueStore } from "../../core/client/index.ts";

/**
 * localStorage behind the engine's store interface (spec §3 storage keys), for what is not secret:
 * the signed-in user without tokens, pins, verified chains. The private key and epoch keys live in
 * the IndexedDB vault (idb-vault.ts), the refresh token in an HttpOnly cookie, the access token in
 * memory (docs/decisions/key-custody.md).
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
  /**
   * Tabs of one browser share this store: a counter (the sender chain's n, protocol §8) is moved
   * under a Web Lock so two tabs never take the same number.
   */
  async update(key: string, change: (current: string | null) => string): Promise<string> {
    const run = () => {
      const next = change(this.storage.getItem(key));
      this.storage.setItem(key, next);
      return next;
    };
    const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;
    return locks ? locks.request(`wsync-store:${key}`, run) : run();
  }
}

/**
 * Spec §2.1 guard rule: stored auth must hold a did and an access token, or (a cookie session, whose
 * tokens are never stored where scripts read them) a did and the cookie-session mark.
 */
export function hasStoredAuth(storage: Storage = window.localStorage): boolean {
  try {
    const auth = JSON.parse(storage.getItem("auth") ?? "null") as {
      did?: unknown;
      accessJwt?: unknown;
      session?: unknown;
    } | null;
    return typeof auth?.did === "string" && (typeof auth.accessJwt === "string" || auth.session === "cookie");
  } catch {
    return false;
  }
}

/** Where an account's unsent drafts are kept in this browser (web/state/resume.ts). */
export const keptKey = (did: string) => `wsync-drafts:${did}`;

/** The did of the stored sign-in, if any (whose drafts to keep when the session is found ended). */
export function storedDid(storage: Storage = window.localStorage): string | null {
  try {
    const did = (JSON.parse(storage.getItem("auth") ?? "null") as { did?: unknown } | null)?.did;
    return typeof did === "string" ? did : null;
  } catch {
    return null;
  }
}

/**
 * Whether this browser still holds what earlier versions kept in localStorage (a private key, epoch
 * stores, a bearer session): only then does the one-time move (migrate-storage.ts) load and run.
 */
export function hasLegacyStorage(storage: Storage, cookieSessions: boolean): boolean {
  if (storage.getItem("privateKey")) return true;
  if (Object.keys(storage).some((k) => k.startsWith("wsync-epochs:"))) return true;
  if (!cookieSessions) return false;
  if (storage.getItem("token")) return true;
  try {
    const auth = JSON.parse(storage.getItem("auth") ?? "null") as { refreshJwt?: unknown } | null;
    return typeof auth?.refreshJwt === "string" && auth.refreshJwt !== "";
  } catch {
    return false;
  }
}
