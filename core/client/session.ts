import { fromBase64, fromUtf8 } from "../crypto/index.ts";
import type { Session } from "../protocol/runtime.ts";
import { type KeyValueStore, readJson, StoreKeys } from "./store.ts";

/** Seconds before expiry at which the access token is refreshed proactively. */
export const REFRESH_MARGIN_MS = 60_000;

/** The `exp` of a JWT in ms, read without verifying (the server verifies; this only schedules). */
export function tokenExpiry(jwt: string): number | null {
  const payload = jwt.split(".")[1];
  if (!payload) return null;
  try {
    const exp = (JSON.parse(fromUtf8(fromBase64(payload))) as { exp?: unknown }).exp;
    return typeof exp === "number" ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/** The stored session (spec storage keys `auth` and `token`). */
export class SessionStore {
  private session: Session | null = null;

  constructor(private readonly store: KeyValueStore) {}

  get current(): Session | null {
    return this.session;
  }

  async load(): Promise<Session | null> {
    const s = await readJson<Session>(this.store, StoreKeys.auth);
    this.session = s && typeof s.did === "string" && typeof s.accessJwt === "string" ? s : null;
    return this.session;
  }

  async save(session: Session): Promise<void> {
    this.session = session;
    await this.store.set(StoreKeys.auth, JSON.stringify(session));
    await this.store.set(StoreKeys.token, session.accessJwt);
  }

  async clear(): Promise<void> {
    this.session = null;
    await this.store.delete(StoreKeys.auth);
    await this.store.delete(StoreKeys.token);
  }
}
