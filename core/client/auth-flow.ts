import {
  CryptoText,
  generateIdentity,
  importIdentity,
  reasonOf,
  validatePrivateKeyText,
} from "../crypto/index.ts";
import { ApiError, type Session } from "../protocol/runtime.ts";
import type { ApiClient } from "./api.ts";
import type { Keyring } from "./keyring.ts";
import type { Realtime } from "./realtime.ts";
import { REFRESH_MARGIN_MS, type SessionStore, tokenExpiry } from "./session.ts";
import { type ClientEvents, type ClientState, resetState } from "./state.ts";
import type { KeyValueStore } from "./store.ts";

/** What the authentication flow is given by the client. */
export interface AuthContext {
  state: ClientState;
  api: ApiClient;
  session: SessionStore;
  keyring: Keyring;
  realtime: Realtime;
  store: KeyValueStore;
  now(): number;
  changed(): void;
  emit<K extends keyof ClientEvents>(event: K, payload: ClientEvents[K]): void;
  log(message: string): void;
}

/**
 * Signing up, in and out: the session (restore, refresh, end) and this device's key pair (create,
 * validate, replace, export), with the spec's key check after every sign-in.
 */
export class AuthFlow {
  private refreshing: Promise<boolean> | null = null;
  private pendingKeys: { publicKey: string; privateKey: string } | null = null;

  constructor(private readonly c: AuthContext) {}

  private async runAuth<T>(fn: () => Promise<T>): Promise<T> {
    this.c.state.auth.loading = true;
    this.c.state.auth.error = null;
    this.c.changed();
    try {
      return await fn();
    } catch (e) {
      this.c.state.auth.error = e instanceof Error ? e.message : String(e);
      throw e;
    } finally {
      this.c.state.auth.loading = false;
      this.c.changed();
    }
  }

  /** Loads a stored session and checks it with the server (spec §2.3: session check on load). */
  async restore(): Promise<boolean> {
    const stored = await this.c.session.load();
    if (!stored?.did || !stored.accessJwt) return false;
    return this.runAuth(async () => {
      try {
        const user = await this.c.api.call("session");
        const current = this.c.session.current ?? stored;
        await this.c.session.save({ ...current, ...user });
        await this.afterAuth(user.publicKey);
        return true;
      } catch (e) {
        // Spec §4.1: a rejected session removes the stored auth.
        if (e instanceof ApiError && e.status === 401) await this.c.session.clear();
        throw e;
      }
    });
  }

  /**
   * Creates the account and a key pair kept locally (spec §4.2). The user is not authenticated until
   * `completeRegistration()` saves the public key, after they saved their keys.
   */
  async register(input: {
    handle: string;
    email: string;
    password: string;
  }): Promise<{ publicKey: string; privateKey: string }> {
    return this.runAuth(async () => {
      const session = await this.c.api.call("register", input, { token: null });
      await this.c.session.save(session);
      this.c.state.auth.user = {
        did: session.did,
        handle: session.handle,
        email: session.email,
        publicKey: null,
      };
      const keys = await generateIdentity();
      await this.c.keyring.saveIdentity(keys.privateKey, keys.publicKey);
      this.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
      return this.pendingKeys;
    });
  }

  /** "I've Saved My Keys": send the public key; the user is now signed in with keys ready. */
  async completeRegistration(): Promise<void> {
    const keys = this.pendingKeys;
    const session = this.c.session.current;
    if (!keys || !session) throw new Error("Missing keys or user token");
    await this.c.api.call("savePublicKey", { publicKey: keys.publicKey });
    await this.c.session.save({ ...session, publicKey: keys.publicKey });
    this.pendingKeys = null;
    await this.afterAuth(keys.publicKey);
  }

  async login(identifier: string, password: string): Promise<void> {
    await this.runAuth(async () => {
      let session: Session;
      try {
        session = await this.c.api.call("login", { identifier, password }, { token: null });
      } catch (e) {
        if (e instanceof ApiError && e.code === "InvalidCredentials") throw new Error("Invalid credentials");
        throw e;
      }
      await this.c.session.save(session);
      await this.afterAuth(session.publicKey);
    });
  }

  /**
   * Spec §4.1 key check: the server's key with the matching local private key is ready; a server key
   * without (or with a different) local key needs validation; no key anywhere is lost.
   */
  private async afterAuth(serverPublicKey: string | null): Promise<void> {
    const s = this.c.session.current;
    if (!s) throw new Error("Not signed in");
    this.c.state.auth.user = { did: s.did, handle: s.handle, email: s.email, publicKey: serverPublicKey };
    let identity = null;
    try {
      identity = await this.c.keyring.loadIdentity();
    } catch {
      identity = null;
    }
    if (serverPublicKey === null && identity) {
      // Registration stopped before the key was saved: finish it with the key this device holds.
      await this.c.api.call("savePublicKey", { publicKey: identity.publicKey });
      this.c.state.auth.user.publicKey = identity.publicKey;
      serverPublicKey = identity.publicKey;
    }
    // Spec §4.1: a server key with no local private key is stored locally while the user validates.
    if (serverPublicKey !== null && !identity) await this.c.store.set("publicKey", serverPublicKey);
    if (serverPublicKey === null) this.c.state.auth.keyState = "lost";
    else if (identity && identity.publicKey === serverPublicKey) this.c.state.auth.keyState = "ready";
    else this.c.state.auth.keyState = "validate";
    this.c.state.auth.isAuthenticated = true;
    if (this.c.state.auth.keyState === "ready" && identity)
      await this.c.keyring.pin(s.did, identity.publicKey);
    this.c.changed();
  }

  /** The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the account's. */
  async validatePrivateKey(text: string): Promise<void> {
    const problem = validatePrivateKeyText(text);
    if (problem) throw new Error(problem);
    const serverKey = this.c.state.auth.user?.publicKey;
    let identity: Awaited<ReturnType<typeof importIdentity>>;
    try {
      identity = await importIdentity(text.trim());
    } catch {
      throw new Error(CryptoText.privateKeyInvalidFormat);
    }
    if (!serverKey || identity.publicKey !== serverKey) {
      throw new Error("This private key does not belong to your account");
    }
    try {
      await this.c.keyring.saveIdentity(text.trim(), identity.publicKey);
    } catch {
      throw new Error(CryptoText.privateKeySaveFailed);
    }
    await this.afterAuth(serverKey);
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  async createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    const keys = await generateIdentity();
    // The new key is this client's before the server announces it, so the key-changed notice that
    // races the answer is recognised as our own; a refused save puts the old key back.
    const previous = {
      privateKey: await this.c.store.get("privateKey"),
      publicKey: await this.c.store.get("publicKey"),
    };
    await this.c.keyring.saveIdentity(keys.privateKey, keys.publicKey);
    try {
      await this.c.api.call("savePublicKey", { publicKey: keys.publicKey, replace: true });
    } catch (e) {
      if (previous.privateKey && previous.publicKey)
        await this.c.keyring.saveIdentity(previous.privateKey, previous.publicKey);
      throw e;
    }
    const s = this.c.session.current;
    if (s) await this.c.session.save({ ...s, publicKey: keys.publicKey });
    await this.c.keyring.repin(this.c.state.auth.user?.did ?? "", keys.publicKey);
    await this.afterAuth(keys.publicKey);
    return keys;
  }

  /** The stored private key (for export: text or Shadow Cipher image). */
  async exportPrivateKey(): Promise<string | null> {
    return this.c.store.get("privateKey");
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  async logout(): Promise<void> {
    const s = this.c.session.current;
    // Stop the socket first: the server closes it as "session ended" when the logout lands, which
    // must not be mistaken for a session ended elsewhere (that path keeps the keys).
    this.c.realtime.stop();
    try {
      if (s) await this.c.api.call("logout", { did: s.did, refreshJwt: s.refreshJwt }, { token: null });
    } catch (e) {
      this.c.log(`logout: ${reasonOf(e)}`);
    }
    await this.endLocally(true);
  }

  /**
   * Forgets the session. Logout also wipes this device's keys (spec §4.1); a session the server
   * ended (revoked elsewhere, refresh refused) only removes the stored auth, so the private key the
   * user restored here is not lost with it.
   */
  async endLocally(wipeKeys: boolean): Promise<void> {
    this.c.realtime.stop();
    if (wipeKeys) await this.c.keyring.clear(Object.keys(this.c.state.open));
    await this.c.session.clear();
    resetState(this.c.state);
    this.c.changed();
  }

  /** Rotates the refresh token; concurrent callers share one refresh. */
  refreshTokens(): Promise<boolean> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      const s = this.c.session.current;
      if (!s?.refreshJwt) return false;
      try {
        const next = await this.c.api.call("refresh", undefined, { token: s.refreshJwt });
        await this.c.session.save(next);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          await this.endLocally(false);
          this.c.emit("session-ended", {});
        }
        return false;
      }
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** An access token good for at least another minute, refreshing it first when needed. */
  async freshToken(): Promise<string | null> {
    const s = this.c.session.current;
    if (!s) return null;
    const exp = tokenExpiry(s.accessJwt);
    if (exp !== null && exp - this.c.now() < REFRESH_MARGIN_MS) await this.refreshTokens();
    return this.c.session.current?.accessJwt ?? null;
  }
}
