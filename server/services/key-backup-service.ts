import { isCryptoError } from "../../core/crypto/errors.ts";
import { KeyBackupError, KeyBackupText, parseKeyBackup } from "../../core/crypto/key-backup.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import type { AuthContext } from "./auth-service.ts";

/** The largest blob stored (a real one is about 600 bytes). */
export const KEY_BACKUP_MAX_CHARS = 2048;

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
    let text: string;
    try {
      const backup = parseKeyBackup(body.backup);
      // Bound to the caller: a blob labelled with another did is refused, not stored.
      if (backup.did !== ctx.did) throw new ApiError("Forbidden", "The backup names another account");
      text = JSON.stringify(backup);
    } catch (e) {
      if (e instanceof KeyBackupError) throw new ApiError("InvalidRequest", `backup: ${e.message}`);
      // Base64 that passes the shape check's character test but not decoding (4n+1 characters,
      // non-zero leftover bits) comes out of parseKeyBackup as a CryptoError: bad input all the same.
      if (isCryptoError(e)) throw new ApiError("InvalidRequest", `backup: ${KeyBackupText.malformed}`);
      throw e;
    }
    if (text.length > KEY_BACKUP_MAX_CHARS) throw new ApiError("TooLarge", "backup: too large");
    const account = await this.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey) throw new ApiError("InvalidRequest", "Save a public key before a key backup");
    if ((body.backup as { publicKey: string }).publicKey !== account.publicKey) {
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
