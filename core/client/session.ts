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

/**
 * "bearer": both tokens are the client's to keep (protocol §3; the CLI, scripts). "cookie": a browser
 * session; the refresh token is an HttpOnly cookie the page never sees, the access token lives in
 * memory only, and the stored `auth` record holds no token at all (docs/decisions/key-custody.md).
 */
export type SessionMode = "bearer" | "cookie";

/** What a cookie session stores under `auth`: who is signed in, never a token. */
interface StoredCookieAuth {
  did: string;
  handle: string;
  email: string;
  publicKey: string | null;
  session: "cookie";
}

/** The stored session (spec storage keys `auth` and `token`). */
export class SessionStore {
  private session: Session | null = null;

  constructor(
    private readonly store: KeyValueStore,
    readonly mode: SessionMode = "bearer",
  ) {}

  get current(): Session | null {
    return this.session;
  }

  /**
   * The stored session. In cookie mode its tokens are empty: the caller refreshes (the cookie) to get
   * an access token before anything else.
   */
  async load(): Promise<Session | null> {
    if (this.mode === "cookie") {
      const s = await readJson<StoredCookieAuth>(this.store, StoreKeys.auth);
      this.session =
        s && typeof s.did === "string" && s.session === "cookie"
          ? { ...s, accessJwt: "", refreshJwt: "" }
          : null;
      return this.session;
    }
    const s = await readJson<Session>(this.store, StoreKeys.auth);
    this.session = s && typeof s.did === "string" && typeof s.accessJwt === "string" ? s : null;
    return this.session;
  }

  async save(session: Session): Promise<void> {
    this.session = session;
    if (this.mode === "cookie") {
      const stored: StoredCookieAuth = {
        did: session.did,
        handle: session.handle,
        email: session.email,
        publicKey: session.publicKey,
        session: "cookie",
      };
      await this.store.set(StoreKeys.auth, JSON.stringify(stored));
      await this.store.delete(StoreKeys.token);
      return;
    }
    await this.store.set(StoreKeys.auth, JSON.stringify(session));
    await this.store.set(StoreKeys.token, session.accessJwt);
  }

  async clear(): Promise<void> {
    this.session = null;
    await this.store.delete(StoreKeys.auth);
    await this.store.delete(StoreKeys.token);
  }
}
