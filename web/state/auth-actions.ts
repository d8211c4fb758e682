import { authUi, type BackupChoice, type KeyPair } from "./auth.ts";
import { setBackupStatus } from "./backup-status.ts";
import { keptKey } from "./browser-store.ts";
import { loadClient } from "./engine.ts";

/*
 * The actions of the keys modal (spec §2.5), "I lost my key" (spec §2.6) and logout: only the lazily
 * loaded modals and dialogs use them, so they are kept out of the pages' first script (web/state/auth.ts
 * holds the state every page reads).
 */

/**
 * "I've Saved My Keys" (spec §4.2): on failure the modal stays open and the error is logged. With a
 * backup the key is also sealed and stored before the keys count as confirmed; a failure of that
 * (a weak passphrase, the network) is shown in the modal too, since the user must act on it.
 */
export async function completeRegistration(backup?: BackupChoice): Promise<boolean> {
  authUi.savingKeys = true;
  authUi.saveError = null;
  try {
    await (await loadClient()).completeRegistration(backup);
    if (backup) setBackupStatus({ kind: backup.kind, updatedAt: Date.now() });
    authUi.showKeysModal = false;
    authUi.pendingKeys = null;
    return true;
  } catch (e) {
    console.warn("save keys failed", e);
    if (backup) authUi.saveError = e instanceof Error ? e.message : String(e);
    return false;
  } finally {
    authUi.savingKeys = false;
  }
}

/**
 * The keys of a registration not yet confirmed (keyState "unconfirmed", e.g. after a reload): the
 * keys modal shows them again, the same keys, until "I've Saved My Keys".
 */
export async function loadUnconfirmedKeys(): Promise<void> {
  if (authUi.pendingKeys) return;
  const keys = (await loadClient()).unconfirmedKeys;
  if (keys && !authUi.pendingKeys)
    authUi.pendingKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
}

/**
 * "I lost my key: make new keys": replaces the account's key pair (every channel is told the key
 * changed; history from before cannot be read). The new keys are kept for the keys-modal-style view.
 */
export async function makeNewKeys(): Promise<KeyPair> {
  authUi.replacingKeys = true;
  try {
    const keys = await (await loadClient()).createNewKeys();
    // The server deletes the backup of the replaced key.
    setBackupStatus(null);
    authUi.newKeys = { publicKey: keys.publicKey, privateKey: keys.privateKey };
    return keys;
  } catch (e) {
    authUi.replacingKeys = false;
    throw e;
  }
}

/** "I've Saved My Keys" for new keys: they are already the account's; only the backup, if chosen. */
export async function confirmNewKeys(backup?: BackupChoice): Promise<boolean> {
  const keys = authUi.newKeys;
  if (!keys) return false;
  authUi.savingKeys = true;
  authUi.saveError = null;
  try {
    if (backup) {
      const { updatedAt } = await (await loadClient()).saveKeyBackup({
        ...backup,
        privateKey: keys.privateKey,
      });
      setBackupStatus({ kind: backup.kind, updatedAt });
    }
    return true;
  } catch (e) {
    authUi.saveError = e instanceof Error ? e.message : String(e);
    return false;
  } finally {
    authUi.savingKeys = false;
  }
}

/** The engine stops its socket before it logs out, so its own "session ended" never fires here. */
/**
 * Self-service account deletion (the same server route as `wsync account delete`): the account and
 * its data go on the server, then this browser forgets it as a logout does.
 */
export async function deleteAccount(
  confirm: { password: string } | { handle: string },
): Promise<{ channels: number; messages: number }> {
  const client = await loadClient();
  const result = await client.deleteAccount(confirm);
  await logout().catch(() => undefined);
  return result;
}

export async function logout(): Promise<void> {
  const client = await loadClient();
  const did = client.state.auth.user?.did ?? null;
  try {
    await client.logout();
  } finally {
    // The search index and its device key go with the account, even when the server call failed
    // (issue 32, docs/search.md). A tiny module: it stops a running search worker and deletes the
    // database; when it cannot load (offline), the database is deleted here.
    await import("../features/search/search-switch.ts").then(
      (m) => m.wipeSearchIndex(),
      () => globalThis.indexedDB?.deleteDatabase("wsync-search"),
    );
  }
  // Signing out on purpose leaves no unsent text behind on this browser (a session ended by the
  // server keeps it for the next sign-in: web/state/resume.ts).
  if (did) localStorage.removeItem(keptKey(did));
}
