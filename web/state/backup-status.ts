import { authUi, type BackupStatus } from "./auth.ts";
import { loadClient } from "./engine.ts";

/*
 * Whether the server holds the account's key backup, for the key dialogs, the key-image page and the
 * logout dialog. Kept out of ./auth.ts, which /sync loads before its first interaction (issue 28),
 * so it loads with the parts that ask.
 */

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
