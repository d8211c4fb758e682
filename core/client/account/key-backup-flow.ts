import { checkPrivateKey } from "../../crypto/index.ts";
import {
  type BackupSecretKind,
  checkPassphrase,
  KeyBackupError,
  openKeyBackup,
  sealKeyBackup,
} from "../../crypto/key-backup.ts";
import { ApiError } from "../../protocol/runtime.ts";
import type { ApiClient } from "../net/api.ts";
import type { ClientState } from "../view/state.ts";

/** Texts of the key backup flows that are not the crypto layer's (docs/key-backup.md). */
export const BackupFlowText = {
  noBackup: "No key backup for this account",
  keyNotReadable:
    "This device cannot read its private key back (it is stored non-extractable): give the key file or image to back it up",
  tooManyAttempts: (seconds: number) => `Too many wrong attempts: try again in ${seconds} s`,
} as const;

/** Wrong backup secrets allowed before each further attempt waits (doubling, up to 5 minutes). */
const BACKUP_FREE_ATTEMPTS = 3;
const BACKUP_MAX_WAIT_MS = 300_000;

/** What the backup flow is given by AuthFlow. */
export interface KeyBackupContext {
  state: ClientState;
  api: ApiClient;
  now(): number;
  /** The account's public key: the server's, or that of a registration not yet confirmed. */
  accountKey(): string | null;
  /** The private key where this device can give it (a store that exports it, or the page's copy). */
  exportPrivateKey(): Promise<string | null>;
  /** The login password while a registration is in progress (a passphrase must differ from it). */
  registrationPassword(): string | null;
}

/**
 * The encrypted key backup on the server (docs/key-backup.md): seal and store, fetch and open (wrong
 * secrets throttled), delete (the status is read by AuthFlow itself). Loaded with the first backup call, not with the engine: the
 * backup format and its Argon2id stay out of every page that never uses them.
 */
export class KeyBackupFlow {
  private failures = 0;
  private waitUntil = 0;

  constructor(private readonly c: KeyBackupContext) {}

  private user() {
    const user = this.c.state.auth.user;
    if (!user) throw new Error("Not signed in");
    return user;
  }

  /**
   * Refuses a secret that may not seal a backup: too short, the login password, or too easy to guess
   * offline (passphrase-strength.ts, loaded here: its word lists stay out of every other path).
   * Generated recovery codes (120 random bits) need no estimate.
   */
  async checkSecret(input: {
    kind: BackupSecretKind;
    secret: string;
    loginPassword?: string;
  }): Promise<void> {
    if (input.kind !== "passphrase") return;
    const loginPassword = input.loginPassword ?? this.c.registrationPassword() ?? undefined;
    checkPassphrase(input.secret, loginPassword);
    const { checkPassphraseStrength } = await import("./passphrase-strength.ts");
    const user = this.c.state.auth.user;
    checkPassphraseStrength(input.secret, { handle: user?.handle, email: user?.email, loginPassword });
  }

  /**
   * Seals the account's private key under a passphrase or recovery code and stores the blob. The key
   * comes from `privateKey` (a key file the user gave, checked against the account), or from what
   * the device can export.
   */
  async save(input: {
    kind: BackupSecretKind;
    secret: string;
    privateKey?: string;
    loginPassword?: string;
  }): Promise<{ updatedAt: number }> {
    const user = this.user();
    await this.checkSecret(input);
    const privateKey =
      input.privateKey !== undefined
        ? (await checkPrivateKey(input.privateKey, this.c.accountKey())).privateKey
        : await this.c.exportPrivateKey();
    if (!privateKey) throw new Error(BackupFlowText.keyNotReadable);
    const backup = await sealKeyBackup({ did: user.did, privateKey, kind: input.kind, secret: input.secret });
    const { updatedAt } = await this.c.api.call("keyBackupPut", { backup });
    return { updatedAt };
  }

  /** Fetches and opens the backup; wrong secrets are counted, and past three each next try waits. */
  async open(secret: string): Promise<{ privateKey: string; publicKey: string }> {
    const user = this.user();
    const wait = this.waitUntil - this.c.now();
    if (wait > 0) throw new Error(BackupFlowText.tooManyAttempts(Math.ceil(wait / 1000)));
    let backup: unknown;
    try {
      backup = (await this.c.api.call("keyBackupGet")).backup;
    } catch (e) {
      if (e instanceof ApiError && e.code === "NotFound") throw new Error(BackupFlowText.noBackup);
      throw e;
    }
    try {
      const opened = await openKeyBackup(backup, secret, { did: user.did, publicKey: user.publicKey });
      this.failures = 0;
      return opened;
    } catch (e) {
      if (e instanceof KeyBackupError && e.code === "wrong-secret") {
        this.failures++;
        const over = this.failures - BACKUP_FREE_ATTEMPTS;
        if (over >= 0) this.waitUntil = this.c.now() + Math.min(BACKUP_MAX_WAIT_MS, 1000 * 2 ** (over + 2));
      }
      throw e;
    }
  }

  async delete(): Promise<void> {
    try {
      await this.c.api.call("keyBackupDelete");
    } catch (e) {
      if (e instanceof ApiError && e.code === "NotFound") return;
      throw e;
    }
  }
}
