import { type KeyBackup, KeyBackupError, parseKeyBackup } from "../../core/crypto/key-backup.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import type { AuthContext } from "./auth-service.ts";

/**
 * The encrypted key backup (docs/key-backup.md). The server keeps one opaque blob per account and can
 * never open it: the key that seals it comes from a secret only the user holds. Every call works on
 * the caller's own did; no call takes a did, so nobody can name another account's blob.
 */
export class KeyBackupService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async put(ctx: AuthContext, body: { backup: unknown }): Promise<{ success: true; updatedAt: number }> {
    // The shape check bounds every field (the route caps the body at 4 KiB besides), so a stored
    // blob is small; every refusal of it is a KeyBackupError.
    let backup: KeyBackup;
    try {
      backup = parseKeyBackup(body.backup);
    } catch (e) {
      if (e instanceof KeyBackupError) throw new ApiError("InvalidRequest", `backup: ${e.message}`);
      throw e;
    }
    // Bound to the caller: a blob labelled with another did is refused, not stored.
    if (backup.did !== ctx.did) throw new ApiError("Forbidden", "The backup names another account");
    const text = JSON.stringify(backup);
    const account = await this.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey) throw new ApiError("InvalidRequest", "Save a public key before a key backup");
    if (backup.publicKey !== account.publicKey) {
      throw new ApiError("InvalidRequest", "backup: the key inside is not the account's current key");
    }
    const at = this.clock.now();
    await this.storage.accounts.putKeyBackup(ctx.did, text, at);
    return { success: true, updatedAt: at };
  }

  async get(ctx: AuthContext): Promise<{ backup: unknown; updatedAt: number }> {
    const row = await this.storage.accounts.getKeyBackup(ctx.did);
    if (!row) throw new ApiError("NotFound", "No key backup for this account");
    return { backup: JSON.parse(row.blob) as unknown, updatedAt: row.updatedAt };
  }

  async delete(ctx: AuthContext): Promise<{ success: true }> {
    if (!(await this.storage.accounts.deleteKeyBackup(ctx.did))) {
      throw new ApiError("NotFound", "No key backup for this account");
    }
    return { success: true };
  }
}
