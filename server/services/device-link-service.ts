import { parsePublicKey, toBase64 } from "../../core/crypto/index.ts";
import { ApiError, DeviceLink, type RouteBody } from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { sha256Hex } from "../util/secrets.ts";
import type { AuthContext } from "./auth-service.ts";

const codeRe = new RegExp(DeviceLink.codePattern);

export interface DeviceLinkOptions {
  /** How long a fetch waits for the envelope (default DeviceLink.pollMs). */
  pollMs?: number;
  /**
   * How often a waiting fetch looks at storage again, for an envelope stored by another process
   * (one in this process wakes it at once).
   */
  recheckMs?: number;
}

/**
 * Device linking (protocol §8 "Fresh devices"; docs/protocol-extensions.md "Device link"). The server
 * only relays: a new device opens a slot under a code it shows, bound to its account; another device
 * of the same account looks up the new device's ephemeral key and fills the slot with an envelope
 * encrypted to it; the new device fetches the envelope (a long poll), which removes the slot. Slots
 * live in storage (every process sees them) for DeviceLink.ttlMs. Only the code's SHA-256 is stored,
 * and neither codes nor envelopes are ever logged. Another account's slot looks exactly like none.
 */
export class DeviceLinkService {
  /** Fetches waiting in this process, by code hash: woken when a fill here lands. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly pollMs: number;
  private readonly recheckMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly bus: Bus,
    private readonly clock: Clock,
    opts: DeviceLinkOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? DeviceLink.pollMs;
    this.recheckMs = opts.recheckMs ?? 1_000;
  }

  async open(ctx: AuthContext, body: RouteBody<"deviceLinkOpen">) {
    let ephemeralPublicKey: string;
    try {
      // Stored as the canonical base64 of the 65-byte point (what the confirmation digits hash).
      ephemeralPublicKey = toBase64(await parsePublicKey(body.ephemeralPublicKey));
    } catch {
      throw new ApiError("InvalidRequest", "ephemeralPublicKey: not a base64 uncompressed P-256 public key");
    }
    const now = this.clock.now();
    const expiresAt = now + DeviceLink.ttlMs;
    const result = await this.storage.deviceLinks.open(
      {
        codeHash: sha256Hex(body.code),
        did: ctx.did,
        ephemeralPublicKey,
        createdAt: now,
        expiresAt,
      },
      now,
      DeviceLink.openSlotsMax,
    );
    if (result === "exists") {
      throw new ApiError("LinkExists", "A device link with this code is already open: make a new code");
    }
    if (result === "too-many") {
      throw new ApiError(
        "RateLimited",
        `At most ${DeviceLink.openSlotsMax} device links may be open at once: finish one or let it expire`,
        60,
      );
    }
    return { success: true as const, expiresAt };
  }

  async lookup(ctx: AuthContext, body: RouteBody<"deviceLinkLookup">) {
    const slot = await this.mine(ctx, body.code);
    return { ephemeralPublicKey: slot.ephemeralPublicKey, expiresAt: slot.expiresAt };
  }

  async complete(ctx: AuthContext, body: RouteBody<"deviceLinkComplete">) {
    const { envelope } = body;
    if (typeof envelope !== "object" || envelope === null || Array.isArray(envelope)) {
      throw new ApiError("InvalidRequest", "envelope: must be a JSON object");
    }
    const json = JSON.stringify(envelope);
    if (Buffer.byteLength(json, "utf8") > DeviceLink.envelopeMaxBytes) {
      throw new ApiError("TooLarge", `envelope: at most ${DeviceLink.envelopeMaxBytes} bytes of JSON`);
    }
    const slot = await this.mine(ctx, body.code);
    const result = await this.storage.deviceLinks.fill(slot.codeHash, ctx.did, json, this.clock.now());
    if (result === "not-found") throw notFound();
    if (result === "filled") throw new ApiError("LinkExists", "This device link was completed already");
    for (const wake of this.waiters.get(slot.codeHash) ?? []) wake();
    // The account's sockets (the new device's among them) hear of it at once, on every process. A
    // large envelope is left to the new device's fetch (a frame that size would crowd slow sockets).
    if (Buffer.byteLength(json, "utf8") > DeviceLink.envelopeFrameMaxBytes) return { success: true as const };
    await this.bus.publish({
      kind: "user",
      did: ctx.did,
      frame: frame(DeviceLink.linkedEvent, {
        code: body.code,
        ephemeralPublicKey: slot.ephemeralPublicKey,
        envelope,
      }),
    });
    return { success: true as const };
  }

  /**
   * The envelope once the caller's slot is filled (then the slot is gone), waiting up to `pollMs`;
   * `{envelope: null}` when the wait runs out first (the client asks again while the slot lives).
   * No slot of the caller's under that code (none, expired, fetched, another account's, or a code
   * of the wrong form): 404.
   */
  async fetch(ctx: AuthContext, code: string, signal?: AbortSignal) {
    // A code that could never have been opened names no slot: the same answer as an unknown one.
    if (!codeRe.test(code)) throw notFound();
    const codeHash = sha256Hex(code);
    const deadline = Date.now() + this.pollMs;
    for (;;) {
      const taken = await this.storage.deviceLinks.take(codeHash, ctx.did, this.clock.now());
      if (taken !== null) return { envelope: JSON.parse(taken) as Record<string, unknown> };
      const slot = await this.storage.deviceLinks.get(codeHash, this.clock.now());
      if (!slot || slot.did !== ctx.did) throw notFound();
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return { envelope: null };
      await this.wait(codeHash, Math.min(left, this.recheckMs), signal);
    }
  }

  /** Removes expired slots (the server's periodic sweep); how many. Expired ones are never served. */
  sweep(): Promise<number> {
    return this.storage.deviceLinks.purge(this.clock.now());
  }

  /** The caller's live slot under `code`; anything else is 404, whoever holds it. */
  private async mine(ctx: AuthContext, code: string) {
    const slot = await this.storage.deviceLinks.get(sha256Hex(code), this.clock.now());
    if (!slot || slot.did !== ctx.did) throw notFound();
    return slot;
  }

  private wait(codeHash: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.waiters.get(codeHash) ?? new Set<() => void>();
      this.waiters.set(codeHash, waiters);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(codeHash) === waiters) this.waiters.delete(codeHash);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      waiters.add(done);
    });
  }
}

const notFound = () => new ApiError("NotFound", "No such device link (it may have expired)");
