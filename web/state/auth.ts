import { proxy } from "valtio";
import type { BackupSecretKind } from "../../core/crypto/key-backup.ts";
import { ApiError } from "../../core/protocol/runtime.ts";
import { engineState, loadClient } from "./engine.ts";

export type KeyPair = { publicKey: string; privateKey: string };
/** The account's key backup on the server, as the engine's keyBackupStatus() gives it. */
export type BackupStatus = { kind: BackupSecretKind; updatedAt: number };
/** The secret a key backup is sealed under (docs/key-backup.md). */
export type BackupChoice = { kind: BackupSecretKind; secret: string };

/**
 * The auth slice: the engine's auth state plus the three modals of spec §2.5–2.7, the registration
 * step between "account created" and "keys saved", and the key custody dialogs (backup, new keys,
 * device link). What only those modals and the logout dialog do is in ./auth-actions.ts, which loads
 * with them rather than with every page.
 */
export const authUi = proxy({
  /** Keys made at registration, shown in the keys modal until the user saved them. */
  pendingKeys: null as null | KeyPair,
  showKeysModal: false,
  savingKeys: false,
  /** Why the last "I've Saved My Keys" failed, when it is shown in the modal (a backup was asked for). */
  saveError: null as string | null,
  /** Field errors of the registration and login forms (spec §8). */
  fieldErrors: {} as Record<string, string>,
  /**
   * "I lost my key: make new keys" is under way or done: the validation modal stays up (showing the
   * new keys) even though the engine's key state is already "ready".
   */
  replacingKeys: false,
  /** The key pair made by "make new keys", shown keys-modal style until the user saved it. */
  newKeys: null as null | KeyPair,
  /** The board's "Key backup" dialog. */
  keyBackupOpen: false,
  /** The board's "Link a device" dialog (docs/device-linking.md). */
  linkDeviceOpen: false,
  /** The board's "Sessions" dialog: where this account is signed in, and signing one out. */
  sessionsOpen: false,
  /** The "Delete account" dialog (asked twice, with the password). */
  deleteAccountOpen: false,
  /**
   * The backup status as last read or changed by this page (undefined: not read yet). Kept because
   * the server counts every backup fetch against the account's restore attempts.
   */
  backupStatus: undefined as undefined | null | BackupStatus,
  /**
   * Whether the account's key is kept beyond this browser (a key backup, another device, a key file
   * this device got it from): "unsecured" shows the board's reminder (docs/decisions/key-securing.md).
   */
  keyCustody: undefined as undefined | "secured" | "unsecured" | "unknown",
});

let statusRead: Promise<BackupStatus | null> | null = null;
/** Bumped by every read and change, so an older read never overwrites a newer status. */
let statusVersion = 0;

/** Whether the server holds a key backup: read once per page (shared by every dialog), or again with `fresh`. */
export function backupStatus(fresh = false): Promise<BackupStatus | null> {
  if (!fresh && authUi.backupStatus !== undefined) return Promise.resolve(authUi.backupStatus);
  if (!fresh && statusRead) return statusRead;
  const version = ++statusVersion;
  const read = (async () => {
    try {
      const s = await (await loadClient()).keyBackupStatus();
      const status = s ? { kind: s.kind, updatedAt: s.updatedAt } : null;
      if (version === statusVersion) authUi.backupStatus = status;
      return status;
    } finally {
      if (version === statusVersion) statusRead = null;
    }
  })();
  statusRead = read;
  return read;
}

/** Records a change this page made to the backup (saved, deleted), so no re-read is needed. */
export function setBackupStatus(status: BackupStatus | null): void {
  statusVersion++;
  statusRead = null;
  authUi.backupStatus = status;
  if (status) authUi.keyCustody = "secured";
}

export const authState = engineState.auth;

/**
 * Spec §8 registration errors, each on the field it is about, by the server's error code (protocol §3):
 * HandleTaken, EmailTaken and WeakPassword name their field; InvalidRequest's message starts with the
 * field its schema check failed on ("handle: 3 to 32 characters…"), whose reason is shown. Matching
 * on words of the message (the spec's first rule) put "Handle is already taken" on `Bad Handle!`.
 */
export function registrationErrors(e: unknown): Record<string, string> {
  if (e instanceof ApiError) {
    if (e.code === "HandleTaken") return { handle: "Handle is already taken" };
    if (e.code === "EmailTaken") return { email: "Email is already registered" };
    if (e.code === "WeakPassword") {
      // The server's reason already starts with the spec's words; a bare reason gets them once.
      const reason = e.message.replace(/^Password is not strong enough:?\s*/i, "");
      return {
        password: reason ? `Password is not strong enough: ${reason}` : "Password is not strong enough",
      };
    }
    if (e.code === "RateLimited")
      return { form: `Too many attempts; try again${e.retryAfter ? ` in ${e.retryAfter} s` : " later"}` };
    if (e.code === "InvalidRequest") {
      const m = /^(handle|email|password)\b[:\s]*(.*)$/i.exec(e.message);
      const field = m?.[1]?.toLowerCase();
      if (field === "handle")
        return { handle: `Invalid handle: ${m?.[2] || "3 to 32 characters of a-z, 0-9 and -"}` };
      if (field === "email") return { email: "Enter a valid email address" };
      if (field === "password") return { password: `Invalid password: ${m?.[2] || "see the rules"}` };
    }
  }
  if (e instanceof Error && /network|reach the server|fetch/i.test(e.message))
    return { form: "Cannot reach the server. Check the connection and try again." };
  return { handle: "Registration failed", email: "Registration failed", password: "Registration failed" };
}

export async function login(identifier: string, password: string): Promise<boolean> {
  authUi.fieldErrors = {};
  try {
    await (await loadClient()).login(identifier, password);
    return true;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message === "Invalid credentials") {
      authUi.fieldErrors = { identifier: "Invalid credentials", password: "Invalid credentials" };
    }
    return false;
  }
}

export async function register(input: { handle: string; email: string; password: string }): Promise<boolean> {
  authUi.fieldErrors = {};
  try {
    authUi.pendingKeys = await (await loadClient()).register(input);
    authUi.showKeysModal = true;
    return true;
  } catch (e) {
    authUi.fieldErrors = registrationErrors(e);
    return false;
  }
}
