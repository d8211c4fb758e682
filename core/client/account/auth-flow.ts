import { CryptoText, reasonOf } from "../../crypto/errors.ts";
import {
  checkPrivateKey,
  generateIdentity,
  importIdentity,
  PrivateKeyCheckText,
} from "../../crypto/identity.ts";
import type { BackupSecretKind } from "../../crypto/key-backup.ts";
import { ApiError, type Session } from "../../protocol/runtime.ts";
import type { Keyring } from "../keys/keyring.ts";
import type { TrustOrigin } from "../keys/trust.ts";
import type { ApiClient } from "../net/api.ts";
import type { Realtime } from "../net/realtime.ts";
import type { KeyValueStore } from "../store.ts";
import { type ClientEvents, type ClientState, resetState } from "../view/state.ts";
import type { KeyBackupFlow } from "./key-backup-flow.ts";
import { needsRefresh, type SessionStore } from "./session.ts";
import type { TrustBackup } from "./trust-backup.ts";

/** Where this account's key is known to be kept besides this device (docs/decisions/key-securing.md). */
export type KeySecuredBy = "backup" | "linked" | "copy";

/** The store's record of it: per account and key, so another account or a replaced key starts over. */
const KEY_SECURED = "wsync-key-secured";

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
  /** Runs a refresh alone among this browser's tabs (ClientOptions.refreshLock). */
  refreshLock<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * Signing up, in and out: the session (restore, refresh, end) and this device's key pair (create,
 * validate, replace, export), with the spec's key check after every sign-in.
 */
export class AuthFlow {
  private refreshing: Promise<boolean> | null = null;
  private pendingKeys: { publicKey: string; privateKey: string } | null = null;
  /**
   * The private key while this page or process has it in hand anyway (just made, pasted or restored):
   * backup and key-image export can use it without it ever being stored in readable form.
   */
  private keyInMemory: string | null = null;
  /** The login password during registration only, so a backup passphrase can be refused if equal. */
  private registrationPassword: string | null = null;
  private backupFlow: Promise<KeyBackupFlow> | null = null;
  private trustUploads: Promise<TrustBackup> | null = null;

  constructor(private readonly c: AuthContext) {
    // Protocol §8: whenever a head moves, the key backup's trust state follows (trust-backup.ts).
    c.keyring.trust.onBump = () =>
      void this.trustBackup().then(
        (t) => t.schedule(),
        (e: unknown) => this.c.log(`trust state upload: ${reasonOf(e)}`),
      );
  }

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
    if (!stored?.did) return false;
    if (!stored.accessJwt && this.c.session.mode !== "cookie") return false;
    return this.runAuth(async () => {
      try {
        // A cookie session keeps no access token across loads: the refresh cookie brings one.
        if (!stored.accessJwt && !(await this.refreshTokens())) {
          throw new ApiError("Unauthorized", "Session is no longer valid");
        }
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
      await this.c.keyring.saveIdentity(keys.privateKey);
      // Until "I've Saved My Keys", a reload shows these keys again rather than publishing them.
      await this.c.keyring.vault.setUnconfirmed(keys.privateKey);
      this.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
      this.keyInMemory = keys.privateKey;
      this.registrationPassword = input.password;
      return this.pendingKeys;
    });
  }

  /**
   * "I've Saved My Keys": send the public key; the user is now signed in with keys ready. With
   * `backup`, the key is also sealed under that passphrase or recovery code and stored on the server
   * (docs/key-backup.md) before the registration counts as confirmed: if that fails, the keys stay
   * unconfirmed (the modal stays, a reload shows it again) and calling this again retries.
   */
  async completeRegistration(backup?: { kind: BackupSecretKind; secret: string }): Promise<void> {
    const keys = this.pendingKeys;
    const session = this.c.session.current;
    if (!keys || !session) throw new Error("Missing keys or user token");
    // A refused secret must not get as far as publishing the key.
    if (backup) await (await this.backups()).checkSecret(backup);
    if (this.c.state.auth.user?.publicKey !== keys.publicKey) {
      await this.c.api.call("savePublicKey", { publicKey: keys.publicKey });
      if (this.c.state.auth.user) this.c.state.auth.user.publicKey = keys.publicKey;
      await this.c.session.save({ ...session, publicKey: keys.publicKey });
    }
    if (backup) await this.saveKeyBackup({ ...backup, privateKey: keys.privateKey });
    // Without a backup the key stays readable to this app until it is secured (a backup later, or a
    // linked device): once non-extractable it could never be backed up (issue 28).
    else await this.c.keyring.vault.holdUntilSecured(keys.privateKey);
    await this.c.keyring.vault.setUnconfirmed(null);
    this.pendingKeys = null;
    this.registrationPassword = null;
    await this.afterAuth(keys.publicKey);
  }

  /** The keys of a registration the user has not confirmed yet (shown again after a reload). */
  get unconfirmedKeys(): { publicKey: string; privateKey: string } | null {
    return this.pendingKeys;
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
      const unconfirmed = await this.c.keyring.vault.getUnconfirmed();
      if (unconfirmed) {
        // Registration reloaded before the user confirmed saving the keys: show them again.
        this.pendingKeys = { publicKey: identity.publicKey, privateKey: unconfirmed };
        this.keyInMemory = unconfirmed;
        this.c.state.auth.keyState = "unconfirmed";
        this.c.changed();
        return;
      }
      // Registration stopped after the user confirmed but before the key was saved: finish it.
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

  /**
   * The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the
   * account's. Accepts what the app exports (the whole keys file, any whitespace, URL-safe base64);
   * a refusal names the check that failed.
   */
  async validatePrivateKey(text: string): Promise<void> {
    const serverKey = this.c.state.auth.user?.publicKey;
    const { privateKey, identity } = await checkPrivateKey(text, serverKey ?? null);
    if (!serverKey) throw new Error(PrivateKeyCheckText.notThisAccount);
    await this.installKey(privateKey, identity.publicKey);
  }

  /** Stores a checked private key on this device and finishes the key check. */
  async installKey(
    privateKey: string,
    publicKey: string,
    origin: TrustOrigin = { source: "server", since: this.c.now() },
  ): Promise<void> {
    try {
      await this.c.keyring.saveIdentity(privateKey);
    } catch {
      throw new Error(CryptoText.privateKeySaveFailed);
    }
    // Protocol §8 "Fresh devices": a key put on a device that verified nothing itself brings no trust
    // state with it; the device says so per channel until another member confirms what it sees.
    if (!(await this.c.keyring.hasVerifiedChains())) await this.c.keyring.trust.setOrigin(origin);
    this.keyInMemory = privateKey;
    await this.afterAuth(this.c.state.auth.user?.publicKey ?? publicKey);
    // It came from somewhere else (a key file or image, the backup, another device): a copy exists.
    await this.keySecured(
      origin.source === "backup" ? "backup" : origin.source === "link" ? "linked" : "copy",
    );
  }

  // ---- whether the key is secured beyond this device (docs/decisions/key-securing.md) ----------

  /**
   * Records that the account's current key is kept somewhere besides this device, and drops the
   * readable copy the vault held until then.
   */
  async keySecured(by: KeySecuredBy): Promise<void> {
    const user = this.c.state.auth.user;
    if (!user?.publicKey) return;
    await this.c.store.set(KEY_SECURED, `${user.did} ${user.publicKey} ${by}`);
    await this.c.keyring.vault.holdUntilSecured(null);
  }

  /** How the current key is secured, as recorded here: "did publicKey how", for this account and key only. */
  private async securedBy(): Promise<KeySecuredBy | null> {
    const user = this.c.state.auth.user;
    const [did, publicKey, by] = ((await this.c.store.get(KEY_SECURED)) ?? "").split(" ");
    return user?.publicKey && did === user.did && publicKey === user.publicKey ? (by as KeySecuredBy) : null;
  }

  /**
   * Whether the account's key is secured beyond this device: a backup on the server, or a copy this
   * device knows of (it linked another device, or got the key from a file, an image, the backup or
   * another device). "unknown" when the server could not be asked. Asks the server only while this
   * device knows of no copy; a backup found there is remembered.
   */
  async keyCustody(): Promise<"secured" | "unsecured" | "unknown"> {
    if (this.c.state.auth.keyState !== "ready") return "unknown";
    if (await this.securedBy()) return "secured";
    let status: Awaited<ReturnType<AuthFlow["keyBackupStatus"]>>;
    try {
      status = await this.keyBackupStatus();
    } catch {
      return "unknown";
    }
    if (!status) return "unsecured";
    await this.keySecured("backup");
    return "secured";
  }

  // ---- encrypted key backup (key-backup-flow.ts, loaded on first use) ---------------------------

  private backups(): Promise<KeyBackupFlow> {
    this.backupFlow ??= import("./key-backup-flow.ts").then(
      ({ KeyBackupFlow }) =>
        new KeyBackupFlow({
          state: this.c.state,
          api: this.c.api,
          now: () => this.c.now(),
          accountKey: () => this.c.state.auth.user?.publicKey ?? this.pendingKeys?.publicKey ?? null,
          exportPrivateKey: () => this.exportPrivateKey(),
          registrationPassword: () => this.registrationPassword,
        }),
    );
    return this.backupFlow;
  }

  /** The account's backup on the server, or null when it has none. */
  async keyBackupStatus(): Promise<{ kind: BackupSecretKind; updatedAt: number } | null> {
    // Read here, not in key-backup-flow.ts: the board asks on load (the reminder), and the backup
    // format and its Argon2id need not load for a question the server answers.
    try {
      const { backup, updatedAt } = await this.c.api.call("keyBackupGet");
      const kind = (backup as { kind?: unknown } | null)?.kind;
      return { kind: kind === "recovery-code" ? "recovery-code" : "passphrase", updatedAt };
    } catch (e) {
      if (e instanceof ApiError && e.code === "NotFound") return null;
      throw e;
    }
  }

  /** Seals the account's private key and stores the blob (KeyBackupFlow.save), then the trust state beside it. */
  async saveKeyBackup(input: {
    kind: BackupSecretKind;
    secret: string;
    privateKey?: string;
    loginPassword?: string;
  }): Promise<{ updatedAt: number }> {
    const saved = await (await this.backups()).save(input);
    await (await this.trustBackup()).backupSaved();
    // A backup of the account's current key (save checked it) secures it.
    await this.keySecured("backup");
    return saved;
  }

  /**
   * "Restore from backup": the passphrase or recovery code opens the server's blob on this device,
   * and the trust state beside it (protocol §8) becomes this device's; without one that opens, the
   * device says its channels are verified from the server's word.
   */
  async restoreFromBackup(secret: string): Promise<void> {
    const opened = await (await this.backups()).open(secret);
    // The trust state beside the backup goes in before the key (installing the key shows the board,
    // which opens channels): they start at the heads another device verified.
    const identity = await importIdentity(opened.privateKey);
    const restored = await (await this.trustBackup()).restore(identity);
    await this.installKey(
      opened.privateKey,
      opened.publicKey,
      restored ? { source: "backup", since: restored.createdAt } : undefined,
    );
  }

  /** The uploader of the key backup's trust state (trust-backup.ts, loaded on first use). */
  /** Waits for a trust-state upload already scheduled (a short-lived process before it exits). */
  async flushTrustBackup(): Promise<void> {
    if (this.trustUploads) await (await this.trustUploads).flush();
  }

  private trustBackup(): Promise<TrustBackup> {
    this.trustUploads ??= import("./trust-backup.ts").then(({ TrustBackup }) => new TrustBackup(this.c));
    return this.trustUploads;
  }

  /** The private key from the backup, for an export this device cannot make from its own vault. */
  async privateKeyFromBackup(secret: string): Promise<string> {
    const opened = await (await this.backups()).open(secret);
    this.keyInMemory = opened.privateKey;
    return opened.privateKey;
  }

  async deleteKeyBackup(): Promise<void> {
    await (await this.backups()).delete();
    (await this.trustBackup()).backupDeleted();
    if ((await this.securedBy()) === "backup") await this.c.store.delete(KEY_SECURED);
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  async createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    const keys = await generateIdentity();
    // The new key is this client's before the server announces it, so the key-changed notice that
    // races the answer is recognised as our own; a refused save puts the old key back.
    const previous = await this.c.keyring.vault.snapshotIdentity();
    // A planned change (this device still holds the account's key): the old key stays to vouch for
    // the new one in each channel's key-change commit (protocol §8 key-change statement).
    const old = this.c.keyring.identity;
    if (old && old.publicKey === this.c.state.auth.user?.publicKey) {
      await this.c.keyring.retire(old, await this.c.keyring.vault.exportPrivateKey());
    }
    await this.c.keyring.saveIdentity(keys.privateKey);
    if (!(await this.c.keyring.hasVerifiedChains()))
      await this.c.keyring.trust.setOrigin({ source: "server", since: this.c.now() });
    try {
      await this.c.api.call("savePublicKey", { publicKey: keys.publicKey, replace: true });
    } catch (e) {
      await this.c.keyring.vault.restoreIdentity(previous);
      await this.c.keyring.loadIdentity();
      throw e;
    }
    this.keyInMemory = keys.privateKey;
    // The new key is secured nowhere yet (the server deleted the old key's backup): keep it readable
    // to this app until it is (docs/decisions/key-securing.md).
    await this.c.store.delete(KEY_SECURED);
    await this.c.keyring.vault.holdUntilSecured(keys.privateKey);
    const s = this.c.session.current;
    if (s) await this.c.session.save({ ...s, publicKey: keys.publicKey });
    await this.c.keyring.repin(this.c.state.auth.user?.did ?? "", keys.publicKey);
    await this.afterAuth(keys.publicKey);
    return keys;
  }

  /**
   * The private key for export (text or Shadow Cipher image): from a store that can give it back
   * (the CLI), or the copy this page holds in memory; null in a browser whose key is only in the
   * non-extractable vault (then the backup or the user's own download is the way).
   */
  async exportPrivateKey(): Promise<string | null> {
    return (await this.c.keyring.vault.exportPrivateKey()) ?? this.keyInMemory;
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  async logout(): Promise<void> {
    const s = this.c.session.current;
    // Stop the socket first: the server closes it as "session ended" when the logout lands, which
    // must not be mistaken for a session ended elsewhere (that path keeps the keys).
    this.c.realtime.stop();
    try {
      if (s && this.c.session.mode === "cookie") {
        await this.c.api.call("logoutCookie", { did: s.did }, { token: null });
      } else if (s) {
        await this.c.api.call("logout", { did: s.did, refreshJwt: s.refreshJwt }, { token: null });
      }
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
    if (wipeKeys) {
      await this.c.keyring.clear(Object.keys(this.c.state.open));
      await this.c.store.delete(KEY_SECURED);
      this.keyInMemory = null;
      this.pendingKeys = null;
    }
    this.registrationPassword = null;
    void this.trustUploads?.then(
      (t) => t.stop(),
      () => undefined,
    );
    // A session ended by the server is forgotten from the store only if it is still the stored one:
    // another process of this device may have signed in again meanwhile.
    if (wipeKeys) await this.c.session.clear();
    else await this.c.session.forget();
    resetState(this.c.state);
    this.c.changed();
  }

  /** Rotates the refresh token; concurrent callers share one refresh. */
  refreshTokens(): Promise<boolean> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      const s = this.c.session.current;
      const cookie = this.c.session.mode === "cookie";
      if (!s || (!cookie && !s.refreshJwt)) return false;
      try {
        const ok = await this.c.refreshLock(async () => {
          // Cookie sessions: no bearer; the browser sends the HttpOnly cookie, one tab at a time.
          if (cookie) {
            await this.c.session.save(await this.c.api.call("refresh", undefined, { token: null }));
            return true;
          }
          // Bearer sessions share their store with other processes of this device (the CLI): one of
          // them may have refreshed already, and presenting the token it replaced would be a replay.
          // Under the lock, the stored session is the newest; refresh only if nobody else did.
          const stored = await this.c.session.load();
          if (!stored || stored.did !== s.did) return false;
          if (stored.refreshJwt !== s.refreshJwt && !needsRefresh(stored.accessJwt, this.c.now()))
            return true;
          await this.c.session.save(
            await this.c.api.call("refresh", undefined, { token: stored.refreshJwt }),
          );
          return true;
        });
        if (!ok) {
          // Signed out (or in as someone else) by another process of this device.
          await this.endLocally(false);
          this.c.emit("session-ended", {});
        }
        return ok;
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
    if (needsRefresh(s.accessJwt, this.c.now())) await this.refreshTokens();
    return this.c.session.current?.accessJwt ?? null;
  }
}
