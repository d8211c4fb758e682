import { proxy } from "valtio";
import type { BackupSecretKind } from "../../core/crypto/key-backup.ts";
import { engineState } from "./engine.ts";

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

export const authState = engineState.auth;
