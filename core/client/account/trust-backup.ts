import { reasonOf } from "../../crypto/errors.ts";
import type { Identity } from "../../crypto/identity.ts";
import { openTrustState, sealTrustState } from "../../crypto/trust-seal.ts";
import { ApiError, TrustStateLimits } from "../../protocol/runtime.ts";
import type { Keyring } from "../keys/keyring.ts";
import type { TrustState } from "../keys/trust.ts";
import type { ApiClient } from "../net/api.ts";
import type { ClientState } from "../view/state.ts";

// Protocol §8 "Fresh devices": the key backup also carries the device's trust state, with a `version`
// counter moved whenever a head moves, and a device restored from it shows the backup's date. The
// backup itself is sealed under the user's passphrase, which the device does not keep, so the trust
// state is a blob of its own beside it (PUT/GET /keys/trust-state), sealed under a key only the
// identity holds (core/crypto/trust-seal.ts) and re-sealed by the device whenever a head moves.
// Loaded on the first head move or backup call, not with the engine.

/** How often a device uploads (at most), and how long it waits after a head moves first. */
export const TrustUploadTiming = {
  /** At most one upload per this long; the latest state wins. */
  intervalMs: 5_000,
  /** After a head moves, so the rest of that change is stored before the state is read. */
  settleMs: 250,
  /** After the server said the account has no key backup: try again only after this long. */
  noBackupRecheckMs: 30 * 60_000,
};

export interface TrustBackupContext {
  state: ClientState;
  api: ApiClient;
  keyring: Keyring;
  now(): number;
  log(message: string): void;
}

/** The signed-in account and its identity, when this device holds the account's current key. */
function signedIn(c: TrustBackupContext): { did: string; identity: Identity } | null {
  const user = c.state.auth.user;
  const identity = c.keyring.identity;
  if (!user || !identity || user.publicKey !== identity.publicKey) return null;
  return { did: user.did, identity };
}

/**
 * Keeps the key backup's trust state up to date from this device: after a head moves (TrustStore
 * tells `schedule`), at most once per `intervalMs`, the newest state sealed and stored, merged with
 * the stored one (a channel whose head another device saw further is kept), at a version above both.
 * Nothing here is awaited by sending; a failure is logged and the next head move tries again. An
 * account without a key backup answers 404, after which the device stops trying for a while (the
 * backup saved on this device restarts it at once).
 */
export class TrustBackup {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  /** A head moved while an upload was running: upload once more after it. */
  private again = false;
  private lastUploadAt = Number.NEGATIVE_INFINITY;
  private noBackupUntil = 0;

  constructor(
    private readonly c: TrustBackupContext,
    private readonly timing: typeof TrustUploadTiming = TrustUploadTiming,
  ) {}

  /** A head moved: upload soon (never sooner than `intervalMs` after the last one). */
  schedule(): void {
    if (this.c.now() < this.noBackupUntil || !signedIn(this.c)) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(this.timing.settleMs, this.lastUploadAt + this.timing.intervalMs - this.c.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run();
    }, wait);
    // A process about to exit (a one-shot CLI command) is not held open by it: the next head move,
    // in any later process, uploads the newest state.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** A backup was just saved on this device: upload now (awaited; a failure is logged, not thrown). */
  async backupSaved(): Promise<void> {
    this.noBackupUntil = 0;
    this.cancel();
    await this.running;
    await this.run();
  }

  /** The backup was deleted (and with it the trust state): nothing to upload beside until a new one. */
  backupDeleted(): void {
    this.noBackupUntil = Number.POSITIVE_INFINITY;
    this.cancel();
  }

  /** Signed out: forget what was learned about this account. */
  stop(): void {
    this.cancel();
    this.again = false;
    this.noBackupUntil = 0;
    this.lastUploadAt = Number.NEGATIVE_INFINITY;
  }

  /** The upload running or scheduled, finished (tests, and a process that wants it out before exiting). */
  async flush(): Promise<void> {
    if (this.timer) {
      this.cancel();
      await this.run();
    }
    while (this.running) await this.running;
  }

  private cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = this.upload()
      .catch((e: unknown) => this.c.log(`trust state upload: ${reasonOf(e)}`))
      .finally(() => {
        this.running = null;
        this.lastUploadAt = this.c.now();
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
    this.running = run;
    return run;
  }

  private async upload(): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const me = signedIn(this.c);
      if (!me) return;
      const stored = await this.stored(me);
      const mine = await this.c.keyring.trust.export(this.c.now());
      // Above both: a device restored from an older copy, or one whose counter lags another device's.
      const version = Math.max(mine.version, stored ? stored.version + 1 : 0);
      const state: TrustState = { ...merge(mine, stored?.state ?? null), version };
      const blob = await sealTrustState({ did: me.did, identity: me.identity, version, state });
      const bytes = new TextEncoder().encode(JSON.stringify(blob)).length;
      if (bytes > TrustStateLimits.blobMaxBytes) {
        this.c.log(`trust state upload: ${bytes} bytes is over the server's limit; not stored`);
        return;
      }
      try {
        await this.c.api.call("trustStatePut", { blob });
        return;
      } catch (e) {
        if (e instanceof ApiError && e.code === "NotFound") {
          this.noBackupUntil = this.c.now() + this.timing.noBackupRecheckMs;
          return;
        }
        // Another device stored a newer one in between: merge with it and try once more.
        if (e instanceof ApiError && e.code === "VersionConflict" && attempt === 0) continue;
        throw e;
      }
    }
  }

  /**
   * The stored trust state's version and, when it opens under this identity, its content (null when
   * it does not: nothing in it is used, and an upload replaces it); null when none is stored.
   */
  private async stored(me: {
    did: string;
    identity: Identity;
  }): Promise<{ version: number; state: TrustState | null } | null> {
    let blob: unknown;
    try {
      ({ blob } = await this.c.api.call("trustStateGet"));
    } catch (e) {
      if (e instanceof ApiError && e.code === "NotFound") return null;
      throw e;
    }
    try {
      const opened = await openTrustState({ did: me.did, identity: me.identity, blob });
      return { version: opened.version, state: opened.state as unknown as TrustState };
    } catch {
      // Not sealed by this identity, or altered: nothing in it can be used. Its version still counts.
      const version = (blob as { version?: unknown } | null)?.version;
      return typeof version === "number" && Number.isSafeInteger(version) ? { version, state: null } : null;
    }
  }

  /**
   * After the key came from the backup: the trust state beside it becomes this device's (so its
   * channels start from what another of the user's devices verified, and say since when). None, or
   * one that does not open under this identity: the device keeps the server's word, and says so.
   */
  async restore(identity?: Identity): Promise<{ version: number; createdAt: number } | null> {
    // `identity`: the key just opened from the backup, before it is installed (the trust state goes
    // in first, so nothing the board opens meanwhile starts from the server's word).
    const user = this.c.state.auth.user;
    const me = identity
      ? user && user.publicKey === identity.publicKey
        ? { did: user.did, identity }
        : null
      : signedIn(this.c);
    if (!me) return null;
    let opened: { version: number; state: TrustState | null } | null;
    try {
      opened = await this.stored(me);
    } catch (e) {
      this.c.log(`trust state from the backup: ${reasonOf(e)}`);
      return null;
    }
    if (!opened) return null;
    const t = opened.state;
    if (t?.v !== 1 || typeof t.createdAt !== "number" || typeof t.channels !== "object" || !t.channels) {
      this.c.log("trust state from the backup: it does not open under this key, or is not one; not used");
      return null;
    }
    try {
      await this.c.keyring.trust.import(
        { ...t, version: opened.version },
        { source: "backup", since: t.createdAt },
      );
    } catch (e) {
      this.c.log(`trust state from the backup: ${reasonOf(e)}`);
      return null;
    }
    return { version: opened.version, createdAt: t.createdAt };
  }
}

/**
 * This device's state with what only the stored one has: channels whose head is further there (or
 * that this device does not know), pins and names of people this device has not pinned.
 */
function merge(mine: TrustState, stored: TrustState | null): TrustState {
  if (stored?.v !== 1 || typeof stored.channels !== "object" || stored.channels === null) return mine;
  const channels = { ...mine.channels };
  for (const [id, theirs] of Object.entries(stored.channels)) {
    const ours = channels[id];
    if (!ours || (theirs?.head?.epochNumber ?? 0) > ours.head.epochNumber) channels[id] = theirs;
  }
  return {
    ...mine,
    pins: { ...(stored.pins ?? {}), ...mine.pins },
    handles: { ...(stored.handles ?? {}), ...mine.handles },
    channels,
  };
}
