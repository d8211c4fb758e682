import { CryptoText, reasonOf } from "../../crypto/errors.ts";
import {
  checkPrivateKey,
  generateIdentity,
  importIdentity,
  PrivateKeyCheckText,
} from "../../crypto/identity.ts";
import type { BackupSecretKind } from "../../crypto/key-backup.ts";
import { ApiError, type Session } from "../../protocol/runtime.ts";
import type { TrustOrigin } from "../keys/trust.ts";
import { KEY_SECURED, type SetupHost } from "./auth-types.ts";

/**
 * Signing up and in, and putting a key on this device (made, pasted, restored or replaced): the parts
 * of the authentication flow (auth-flow.ts) that run only when the user acts, so a page that opens
 * signed in never loads them (issue 28's budget for /sync's first load).
 */
export class KeySetup {
  constructor(private readonly h: SetupHost) {}

  /**
   * Creates the account and a key pair kept locally (spec §4.2). The user is not authenticated until
   * `completeRegistration()` saves the public key, after they saved their keys.
   */
  async register(input: {
    handle: string;
    email: string;
    password: string;
  }): Promise<{ publicKey: string; privateKey: string }> {
    return this.h.runAuth(async () => {
      const session = await this.h.c.api.call("register", input, { token: null });
      await this.h.c.session.save(session);
      this.h.c.state.auth.user = {
        did: session.did,
        handle: session.handle,
        email: session.email,
        publicKey: null,
      };
      const keys = await generateIdentity();
      await this.h.c.keyring.saveIdentity(keys.privateKey);
      // Until "I've Saved My Keys", a reload shows these keys again rather than publishing them.
      await this.h.c.keyring.vault.setUnconfirmed(keys.privateKey);
      this.h.mem.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
      this.h.mem.keyInMemory = keys.privateKey;
      this.h.mem.registrationPassword = input.password;
      return this.h.mem.pendingKeys;
    });
  }

  /**
   * The first keys of an account made elsewhere (signed in with ATProto): a key pair kept locally and
   * unconfirmed, as after `register`, so the keys modal shows them until "I've Saved My Keys".
   */
  async makeFirstKeys(): Promise<void> {
    const keys = await generateIdentity();
    await this.h.c.keyring.saveIdentity(keys.privateKey);
    await this.h.c.keyring.vault.setUnconfirmed(keys.privateKey);
    this.h.mem.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
    this.h.mem.keyInMemory = keys.privateKey;
  }

  /**
   * "I've Saved My Keys": send the public key; the user is now signed in with keys ready. With
   * `backup`, the key is also sealed under that passphrase or recovery code and stored on the server
   * (docs/key-backup.md) before the registration counts as confirmed: if that fails, the keys stay
   * unconfirmed (the modal stays, a reload shows it again) and calling this again retries.
   */
  async completeRegistration(backup?: { kind: BackupSecretKind; secret: string }): Promise<void> {
    const keys = this.h.mem.pendingKeys;
    const session = this.h.c.session.current;
    if (!keys || !session) throw new Error("Missing keys or user token");
    // A refused secret must not get as far as publishing the key.
    if (backup) await (await this.h.backups()).checkSecret(backup);
    if (this.h.c.state.auth.user?.publicKey !== keys.publicKey) {
      await this.h.c.api.call("savePublicKey", { publicKey: keys.publicKey });
      if (this.h.c.state.auth.user) this.h.c.state.auth.user.publicKey = keys.publicKey;
      await this.h.c.session.save({ ...session, publicKey: keys.publicKey });
    }
    if (backup) await this.h.saveKeyBackup({ ...backup, privateKey: keys.privateKey });
    // Without a backup the key stays readable to this app until it is secured (a backup later, or a
    // linked device): once non-extractable it could never be backed up (issue 28).
    else await this.h.c.keyring.vault.holdUntilSecured(keys.privateKey);
    await this.h.c.keyring.vault.setUnconfirmed(null);
    this.h.mem.pendingKeys = null;
    this.h.mem.registrationPassword = null;
    await this.h.afterAuth(keys.publicKey);
  }

  async login(identifier: string, password: string): Promise<void> {
    await this.h.runAuth(async () => {
      let session: Session;
      try {
        session = await this.h.c.api.call("login", { identifier, password }, { token: null });
      } catch (e) {
        if (e instanceof ApiError && e.code === "InvalidCredentials") throw new Error("Invalid credentials");
        throw e;
      }
      await this.h.c.session.save(session);
      await this.h.afterAuth(session.publicKey);
    });
  }

  /**
   * The Private Key Validation modal (spec §2.6, §5): the pasted or image-read key must be the
   * account's. Accepts what the app exports (the whole keys file, any whitespace, URL-safe base64);
   * a refusal names the check that failed.
   */
  async validatePrivateKey(text: string): Promise<void> {
    const serverKey = this.h.c.state.auth.user?.publicKey;
    const { privateKey, identity } = await checkPrivateKey(text, serverKey ?? null);
    if (!serverKey) throw new Error(PrivateKeyCheckText.notThisAccount);
    await this.installKey(privateKey, identity.publicKey);
  }

  /** Stores a checked private key on this device and finishes the key check. */
  async installKey(
    privateKey: string,
    publicKey: string,
    origin: TrustOrigin = { source: "server", since: this.h.c.now() },
  ): Promise<void> {
    try {
      await this.h.c.keyring.saveIdentity(privateKey);
    } catch {
      throw new Error(CryptoText.privateKeySaveFailed);
    }
    // Protocol §8 "Fresh devices": a key put on a device that verified nothing itself brings no trust
    // state with it; the device says so per channel until another member confirms what it sees.
    if (!(await this.h.c.keyring.hasVerifiedChains())) await this.h.c.keyring.trust.setOrigin(origin);
    this.h.mem.keyInMemory = privateKey;
    await this.h.afterAuth(this.h.c.state.auth.user?.publicKey ?? publicKey);
    // It came from somewhere else (a key file or image, the backup, another device): a copy exists.
    await this.h.keySecured(
      origin.source === "backup" ? "backup" : origin.source === "link" ? "linked" : "copy",
    );
  }

  /** For an account with no usable key: a new key pair, replacing the server's (announced to channels). */
  async createNewKeys(): Promise<{ publicKey: string; privateKey: string }> {
    const keys = await generateIdentity();
    // The new key is this client's before the server announces it, so the key-changed notice that
    // races the answer is recognised as our own; a refused save puts the old key back.
    const previous = await this.h.c.keyring.vault.snapshotIdentity();
    // A planned change (this device still holds the account's key): the old key stays to vouch for
    // the new one in each channel's key-change commit (protocol §8 key-change statement).
    const old = this.h.c.keyring.identity;
    if (old && old.publicKey === this.h.c.state.auth.user?.publicKey) {
      await this.h.c.keyring.retire(old, await this.h.c.keyring.vault.exportPrivateKey());
    }
    await this.h.c.keyring.saveIdentity(keys.privateKey);
    if (!(await this.h.c.keyring.hasVerifiedChains()))
      await this.h.c.keyring.trust.setOrigin({ source: "server", since: this.h.c.now() });
    try {
      await this.h.c.api.call("savePublicKey", { publicKey: keys.publicKey, replace: true });
    } catch (e) {
      await this.h.c.keyring.vault.restoreIdentity(previous);
      await this.h.c.keyring.loadIdentity();
      throw e;
    }
    this.h.mem.keyInMemory = keys.privateKey;
    // The new key is secured nowhere yet (the server deleted the old key's backup): keep it readable
    // to this app until it is (docs/decisions/key-securing.md).
    await this.h.c.store.delete(KEY_SECURED);
    await this.h.c.keyring.vault.holdUntilSecured(keys.privateKey);
    const s = this.h.c.session.current;
    if (s) await this.h.c.session.save({ ...s, publicKey: keys.publicKey });
    await this.h.c.keyring.repin(this.h.c.state.auth.user?.did ?? "", keys.publicKey);
    await this.h.afterAuth(keys.publicKey);
    return keys;
  }

  /**
   * "Restore from backup": the passphrase or recovery code opens the server's blob on this device,
   * and the trust state beside it (protocol §8) becomes this device's; without one that opens, the
   * device says its channels are verified from the server's word.
   */
  async restoreFromBackup(secret: string): Promise<void> {
    const opened = await (await this.h.backups()).open(secret);
    // The trust state beside the backup goes in before the key (installing the key shows the board,
    // which opens channels): they start at the heads another device verified.
    const identity = await importIdentity(opened.privateKey);
    const restored = await (await this.h.trustBackup()).restore(identity);
    await this.installKey(
      opened.privateKey,
      opened.publicKey,
      restored ? { source: "backup", since: restored.createdAt } : undefined,
    );
  }

  /** The private key from the backup, for an export this device cannot make from its own vault. */
  async privateKeyFromBackup(secret: string): Promise<string> {
    const opened = await (await this.h.backups()).open(secret);
    this.h.mem.keyInMemory = opened.privateKey;
    return opened.privateKey;
  }

  async deleteKeyBackup(): Promise<void> {
    await (await this.h.backups()).delete();
    (await this.h.trustBackup()).backupDeleted();
    if ((await this.h.securedBy()) === "backup") await this.h.c.store.delete(KEY_SECURED);
  }

  /** Spec §4.1: logout clears the user and removes auth and keys, even when the server call fails. */
  async logout(): Promise<void> {
    const s = this.h.c.session.current;
    // Stop the socket first: the server closes it as "session ended" when the logout lands, which
    // must not be mistaken for a session ended elsewhere (that path keeps the keys).
    this.h.c.realtime.stop();
    // An ATProto account's proof goes with the key's last copy: this logout deletes the device's key,
    // and this device knows of no other copy (no backup, linked device or saved copy).
    const user = this.h.c.state.auth.user;
    if (user?.atproto && this.h.c.proofs && user.publicKey && !(await this.h.securedBy())) {
      const proofs = this.h.c.proofs;
      await import("./key-proof.ts")
        .then(({ removeKeyProof }) => removeKeyProof(proofs))
        .catch((e: unknown) => this.h.c.log(`key proof removal: ${reasonOf(e)}`));
    }
    try {
      if (s && this.h.c.session.mode === "cookie") {
        await this.h.c.api.call("logoutCookie", { did: s.did }, { token: null });
      } else if (s) {
        await this.h.c.api.call("logout", { did: s.did, refreshJwt: s.refreshJwt }, { token: null });
      }
    } catch (e) {
      this.h.c.log(`logout: ${reasonOf(e)}`);
    }
    await this.h.endLocally(true);
  }
}
