import { fromBase64 } from "../../crypto/base64.ts";
import { fromUtf8 } from "../../crypto/bytes.ts";
import type { Session } from "../../protocol/runtime.ts";
import { type KeyValueStore, readJson, StoreKeys } from "../store.ts";

/** Seconds before expiry at which the access token is refreshed proactively. */
export const REFRESH_MARGIN_MS = 60_000;

function claims(jwt: string): { exp?: unknown; iat?: unknown } | null {
  const payload = jwt.split(".")[1];
  if (!payload) return null;
  try {
    return JSON.parse(fromUtf8(fromBase64(payload))) as { exp?: unknown; iat?: unknown };
  } catch {
    return null;
  }
}

/** The `exp` of a JWT in ms, read without verifying (the server verifies; this only schedules). */
export function tokenExpiry(jwt: string): number | null {
  const exp = claims(jwt)?.exp;
  return typeof exp === "number" ? exp * 1000 : null;
}

/**
 * Whether an access token should be refreshed before use: within a minute of its end, or within the
 * last quarter of its life for a server that gives short-lived ones (WSYNC_ACCESS_TOKEN_TTL_SECONDS).
 */
export function needsRefresh(jwt: string, now: number): boolean {
  const c = claims(jwt);
  if (typeof c?.exp !== "number") return false;
  const life = typeof c.iat === "number" ? (c.exp - c.iat) * 1000 : Number.POSITIVE_INFINITY;
  return c.exp * 1000 - now < Math.min(REFRESH_MARGIN_MS, life / 4);
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

  /**
   * Clears the stored session if it is still this one (bearer: the same refresh token); a newer one
   * another process of this device stored meanwhile is kept, only this copy is dropped.
   */
  async forget(): Promise<void> {
    const mine = this.session;
    if (this.mode === "bearer" && mine) {
      const stored = await readJson<Session>(this.store, StoreKeys.auth);
      if (stored && stored.refreshJwt !== mine.refreshJwt) {
        this.session = null;
        return;
      }
    }
    await this.clear();
  }

  async clear(): Promise<void> {
    this.session = null;
    await this.store.delete(StoreKeys.auth);
    await this.store.delete(StoreKeys.token);
  }
}
