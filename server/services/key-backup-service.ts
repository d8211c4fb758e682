import { CryptoError } from "../../core/crypto/errors.ts";
import { type KeyBackup, KeyBackupError, parseKeyBackup } from "../../core/crypto/key-backup.ts";
import { parseTrustStateBlob, type TrustStateBlob } from "../../core/crypto/trust-seal.ts";
import { ApiError, TrustStateLimits } from "../../core/protocol/index.ts";
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

  /** Deletes the backup and the trust state stored beside it. */
  async delete(ctx: AuthContext): Promise<{ success: true }> {
    if (!(await this.storage.accounts.deleteKeyBackup(ctx.did))) {
      throw new ApiError("NotFound", "No key backup for this account");
    }
    return { success: true };
  }

  /**
   * The trust state beside the backup (protocol §8 "Fresh devices"): a blob sealed under a key only
   * the account's identity holds, which the server cannot open either. It is kept only while the
   * account has a backup, and replaced only by a higher `version` (the version is bound inside the
   * blob, so the server could not relabel an older one as newer: it can only keep or withhold it).
   */
  async putTrustState(
    ctx: AuthContext,
    body: { blob: unknown },
  ): Promise<{ success: true; version: number; updatedAt: number }> {
    let blob: TrustStateBlob;
    try {
      blob = parseTrustStateBlob(body.blob);
    } catch (e) {
      if (e instanceof CryptoError) throw new ApiError("InvalidRequest", `blob: ${e.message}`);
      throw e;
    }
    const text = JSON.stringify(blob);
    if (Buffer.byteLength(text, "utf8") > TrustStateLimits.blobMaxBytes) {
      throw new ApiError("TooLarge", `blob: at most ${TrustStateLimits.blobMaxBytes} bytes of JSON`);
    }
    const at = this.clock.now();
    const result = await this.storage.accounts.putTrustState(ctx.did, text, blob.version, at);
    if (result === "no-backup") {
      throw new ApiError("NotFound", "No key backup for this account: the trust state is kept beside one");
    }
    if (result === "stale") {
      throw new ApiError("VersionConflict", "A trust state of this version or a newer one is stored");
    }
    return { success: true, version: blob.version, updatedAt: at };
  }

  async getTrustState(ctx: AuthContext): Promise<{ blob: unknown; updatedAt: number }> {
    const row = await this.storage.accounts.getTrustState(ctx.did);
    if (!row) throw new ApiError("NotFound", "No trust state for this account");
    return { blob: JSON.parse(row.blob) as unknown, updatedAt: row.updatedAt };
  }
}
