import { reasonOf } from "../../crypto/errors.ts";
import type { Identity } from "../../crypto/identity.ts";
import type { BackupSecretKind } from "../../crypto/key-backup.ts";
import { ApiError, type Session } from "../../protocol/runtime.ts";
import type { TrustOrigin } from "../keys/trust.ts";
import { resetState } from "../view/state.ts";
import {
  type AuthContext,
  type AuthMemory,
  KEY_SECURED,
  type KeySecuredBy,
  PROOF_PUBLISHED,
} from "./auth-types.ts";
import type { KeyBackupFlow } from "./key-backup-flow.ts";
import type { KeySetup } from "./key-setup.ts";
import { needsRefresh } from "./session.ts";
import type { TrustBackup } from "./trust-backup.ts";

export type { AuthContext, KeySecuredBy } from "./auth-types.ts";

/** When a key proof that could not be published is tried again (AuthFlow.publishProof). */
const PROOF_RETRY_MS = [15_000, 60_000];

/**
 * Signing up, in and out: the session (restore, refresh, end) and this device's key pair (create,
 * validate, replace, export), with the spec's key check after every sign-in.
 */
export class AuthFlow {
  private refreshing: Promise<boolean> | null = null;
  private readonly mem: AuthMemory = { pendingKeys: null, keyInMemory: null, registrationPassword: null };
  private setupPart: Promise<KeySetup> | null = null;
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

  /**
   * Loads a stored session and checks it with the server (spec §2.3: session check on load). With
   * `fromCookie`, a browser that has no stored session yet but was just given a refresh cookie by the
   * server (the ATProto sign-in's callback, docs/atproto.md) takes that session up.
   */
  async restore(opts: { fromCookie?: boolean } = {}): Promise<boolean> {
    const stored = await this.c.session.load();
    if (!stored?.did && opts.fromCookie && this.c.session.mode === "cookie") return this.adoptCookie();
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
        await this.afterAuth(user.publicKey, { atproto: user.atproto === true });
        return true;
      } catch (e) {
        // Spec §4.1: a rejected session removes the stored auth.
        if (e instanceof ApiError && e.status === 401) await this.c.session.clear();
        throw e;
      }
    });
  }

  /** The cookie session the server set on a sign-in this page did not make itself (restore's fromCookie). */
  private adoptCookie(): Promise<boolean> {
    return this.runAuth(async () => {
      const session = await this.c.refreshLock(() => this.c.api.call("refresh", undefined, { token: null }));
      await this.c.session.save(session);
      const user = await this.c.api.call("session");
      await this.c.session.save({ ...session, ...user });
      await this.afterAuth(user.publicKey, { atproto: user.atproto === true });
      return true;
    });
  }

  // ---- signing up and in, and keys put on this device (key-setup.ts, loaded on first use) --------

  private setup(): Promise<KeySetup> {
    this.setupPart ??= import("./key-setup.ts").then(
      ({ KeySetup }) =>
        new KeySetup({
          c: this.c,
          mem: this.mem,
          runAuth: (fn) => this.runAuth(fn),
          afterAuth: (key) => this.afterAuth(key),
          keySecured: (by) => this.keySecured(by),
          backups: () => this.backups(),
          saveKeyBackup: (input) => this.saveKeyBackup(input),
          trustBackup: () => this.trustBackup(),
          securedBy: () => this.securedBy(),
          installKey: (privateKey, publicKey, origin) => this.installKey(privateKey, publicKey, origin),
          endLocally: (wipeKeys) => this.endLocally(wipeKeys),
        }),
    );
    return this.setupPart;
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
    return (await this.setup()).register(input);
  }

  /** "I've Saved My Keys" (KeySetup.completeRegistration), with the key backup when asked for. */
  async completeRegistration(backup?: { kind: BackupSecretKind; secret: string }): Promise<void> {
    return (await this.setup()).completeRegistration(backup);
  }

  async login(identifier: string, password: string): Promise<void> {
    return (await this.setup()).login(identifier, password);
  }

  /**
   * A session the server gave by another way than a password (sign in with ATProto from a terminal):
   * kept, then the same key check as after any login.
   */
  async adoptSession(session: Session): Promise<void> {
    await this.runAuth(async () => {
      await this.c.session.save(session);
      await this.afterAuth(session.publicKey);
    });
  }

  /** The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the account's. */
  async validatePrivateKey(text: string): Promise<void> {
    return (await this.setup()).validatePrivateKey(text);
  }

  /** Stores a checked private key on this device and finishes the key check. */
  async installKey(privateKey: string, publicKey: string, origin?: TrustOrigin): Promise<void> {
    return (await this.setup()).installKey(privateKey, publicKey, origin);
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  async createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    return (await this.setup()).createNewKeys();
  }

  /** The keys of a registration the user has not confirmed yet (shown again after a reload). */
  get unconfirmedKeys(): { publicKey: string; privateKey: string } | null {
    return this.mem.pendingKeys;
  }

  /**
   * Spec §4.1 key check: the server's key with the matching local private key is ready; a server key
   * without (or with a different) local key needs validation; no key anywhere is lost.
   */
  async afterAuth(serverPublicKey: string | null, o: { atproto?: boolean } = {}): Promise<void> {
    const s = this.c.session.current;
    if (!s) throw new Error("Not signed in");
    const before = this.c.state.auth.user;
    const atproto = o.atproto === true || (before?.did === s.did && before.atproto === true);
    this.c.state.auth.user = {
      did: s.did,
      handle: s.handle,
      email: s.email,
      publicKey: serverPublicKey,
      ...(atproto ? { atproto: true as const } : {}),
    };
    let identity = null;
    try {
      identity = await this.c.keyring.loadIdentity();
    } catch {
      identity = null;
    }
    if (serverPublicKey === null && atproto && !(identity && (await this.c.keyring.vault.getUnconfirmed()))) {
      // An ATProto account that has no chat key yet (its first sign-in): its keys are made here, on
      // the device, and shown as after a registration until the user saved them (docs/atproto.md).
      // A key this device kept from an earlier session is never published for it (nothing says it
      // is this account's): the new keys replace it, as a registration in this browser does.
      await (await this.setup()).makeFirstKeys();
      this.c.state.auth.keyState = "unconfirmed";
      this.c.changed();
      return;
    }
    if (serverPublicKey === null && identity) {
      const unconfirmed = await this.c.keyring.vault.getUnconfirmed();
      if (unconfirmed) {
        // Registration reloaded before the user confirmed saving the keys: show them again.
        this.mem.pendingKeys = { publicKey: identity.publicKey, privateKey: unconfirmed };
        this.mem.keyInMemory = unconfirmed;
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
    if (this.c.state.auth.keyState === "ready" && identity && atproto)
      this.proofWork = this.publishProof(s.did, identity);
  }

  /**
   * An ATProto account's chat key, published in its repository once per key on this device (issue
   * 33, core/client/account/key-proof.ts). In the background: a failure is logged and tried again on
   * the next sign-in or load; `proofPublished` is emitted when it is done.
   */
  /** The key proof's publication under way (publishProof), which a process about to exit waits for. */
  private proofWork: Promise<void> | null = null;

  /** Resolves when the key proof's publication under way (if any) has been tried (not its retries). */
  proofSettled(): Promise<void> {
    return this.proofWork ?? Promise.resolve();
  }

  private async publishProof(did: string, identity: Identity, attempt = 0): Promise<void> {
    const host = this.c.proofs;
    if (!host) return;
    try {
      const { publishKeyProof } = await import("./key-proof.ts");
      if (await publishKeyProof(host, did, identity))
        this.c.log("key proof published in the ATProto repository");
      this.c.state.auth.proof = "published";
    } catch (e) {
      this.c.log(`key proof: ${reasonOf(e)}`);
      this.c.state.auth.proof = "failed";
      // A PDS or server that was slow or away is asked again a little later (twice); a grant that
      // is missing (AtprotoSessionRequired) needs the person, so it waits for the next sign-in.
      const code = (e as { code?: unknown }).code;
      const retryMs = host.retryMs ?? PROOF_RETRY_MS;
      if (code !== "AtprotoSessionRequired" && attempt < retryMs.length) {
        const timer = setTimeout(() => {
          if (this.c.state.auth.user?.did === did && this.c.state.auth.proof === "failed")
            void this.publishProof(did, identity, attempt + 1);
        }, retryMs[attempt]);
        (timer as { unref?: () => void }).unref?.();
      }
    }
    this.c.changed();
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
  async securedBy(): Promise<KeySecuredBy | null> {
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
          accountKey: () => this.c.state.auth.user?.publicKey ?? this.mem.pendingKeys?.publicKey ?? null,
          exportPrivateKey: () => this.exportPrivateKey(),
          registrationPassword: () => this.mem.registrationPassword,
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
   * "Restore from backup" (KeySetup.restoreFromBackup): the passphrase or recovery code opens the
   * server's blob on this device, with the trust state beside it (protocol §8).
   */
  async restoreFromBackup(secret: string): Promise<void> {
    return (await this.setup()).restoreFromBackup(secret);
  }

  /** The private key from the backup, for an export this device cannot make from its own vault. */
  async privateKeyFromBackup(secret: string): Promise<string> {
    return (await this.setup()).privateKeyFromBackup(secret);
  }

  async deleteKeyBackup(): Promise<void> {
    return (await this.setup()).deleteKeyBackup();
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  async logout(): Promise<void> {
    return (await this.setup()).logout();
  }

  /** Waits for a trust-state upload already scheduled (a short-lived process before it exits). */
  async flushTrustBackup(): Promise<void> {
    if (this.trustUploads) await (await this.trustUploads).flush();
  }

  trustBackup(): Promise<TrustBackup> {
    this.trustUploads ??= import("./trust-backup.ts").then(({ TrustBackup }) => new TrustBackup(this.c));
    return this.trustUploads;
  }

  /**
   * The private key for export (text or Shadow Cipher image): from a store that can give it back
   * (the CLI), or the copy this page holds in memory; null in a browser whose key is only in the
   * non-extractable vault (then the backup or the user's own download is the way).
   */
  async exportPrivateKey(): Promise<string | null> {
    return (await this.c.keyring.vault.exportPrivateKey()) ?? this.mem.keyInMemory;
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
      // The note of the published proof (key-proof.ts PROOF_PUBLISHED) goes with the key.
      await this.c.store.delete(PROOF_PUBLISHED);
      this.mem.keyInMemory = null;
      this.mem.pendingKeys = null;
    }
    this.mem.registrationPassword = null;
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
