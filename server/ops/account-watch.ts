import { WsClose, WsEvent } from "../../core/protocol/index.ts";
import { frame } from "../realtime/bus.ts";
import { toNotifyRecord, uriOf } from "../services/records.ts";
import type { Services } from "../services/services.ts";

/** How often a server looks for accounts the operator disabled or that were deleted. */
export const ACCOUNT_WATCH_MS = 2_000;
/** How far back it looks (covers clocks a little apart between hosts sharing one PostgreSQL). */
const WINDOW_MS = 10 * 60 * 1000;

/**
 * The running server's side of `wsync admin disable` and account deletion (docs/decisions/admin.md).
 * The admin command works on the database from its own process, so every server process polls it:
 * an account disabled since the last look has its sockets here closed with 4423 (its sessions were
 * revoked in the same transaction, so every token of it is already refused); a deleted one with 4410,
 * and the "left" notices its deletion stored are sent to the members' open sockets here, so their
 * clients drop it from the member list and rotate before their next message. Each process delivers to
 * its own sockets only (never through the shared bus): every process runs this poll.
 */
export class AccountWatch {
  private timer: ReturnType<typeof setInterval> | null = null;
  /** When this process started looking (accounts closed well before that had no sockets here). */
  private startedAt: number | null = null;
  /** What this process already acted on: `did|disabledAt|deletedAt` → when. */
  private readonly handled = new Map<string, number>();
  private running: Promise<void> | null = null;

  /** `services` is read when first needed (the watch is made while they are being made). */
  constructor(private readonly services: () => Services) {}

  private get s(): Services {
    return this.services();
  }

  start(intervalMs = ACCOUNT_WATCH_MS): void {
    if (this.timer) return;
    this.startedAt ??= this.s.clock.now();
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look now (also after this process deleted an account itself); concurrent calls share it. */
  tick(): Promise<void> {
    this.running ??= this.look().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async look(): Promise<void> {
    const { s } = this;
    const now = s.clock.now();
    this.startedAt ??= now;
    const since = Math.max(this.startedAt - 60_000, now - WINDOW_MS);
    let rows: Awaited<ReturnType<Services["storage"]["admin"]["closedSince"]>>;
    try {
      rows = await s.storage.admin.closedSince(since);
    } catch (e) {
      s.logger.warn(`account watch: ${String((e as Error).message ?? e)}`);
      return;
    }
    for (const [key, at] of this.handled) if (at < now - 2 * WINDOW_MS) this.handled.delete(key);
    for (const row of rows) {
      const key = `${row.did}|${row.disabledAt}|${row.deletedAt}`;
      if (this.handled.has(key)) continue;
      try {
        if (row.deletedAt !== null) {
          const n = s.hub.endUser(row.did, WsClose.accountDeleted, "This account was deleted");
          await this.tellMembers(row.did, row.deletedAt);
          s.logger.info("account deleted: sockets closed, members told", { did: row.did, sockets: n });
        } else if (row.disabledAt !== null) {
          const n = s.hub.endUser(
            row.did,
            WsClose.accountDisabled,
            "This account is disabled by the server's operator",
          );
          s.logger.info("account disabled: sockets closed", { did: row.did, sockets: n });
        }
        this.handled.set(key, now);
      } catch (e) {
        s.logger.warn(`account watch: ${String((e as Error).message ?? e)}`, { did: row.did });
      }
    }
  }

  /** The member-left frame and the stored notice, to the sockets of this process in each channel. */
  private async tellMembers(did: string, deletedAt: number): Promise<void> {
    const { s } = this;
    for (const row of await s.storage.admin.noticesAbout(did, deletedAt)) {
      const channel = await s.storage.channels.get(row.channelId);
      if (!channel) continue;
      const channelUri = uriOf(channel);
      s.hub.deliver({
        kind: "channel",
        channelId: channel.id,
        frame: frame(WsEvent.memberLeft, { channelUri, did, reason: "left" }),
      });
      s.hub.deliver({
        kind: "channel",
        channelId: channel.id,
        frame: frame(WsEvent.notifyJoined, { record: toNotifyRecord(row, channelUri) }),
      });
    }
  }
}
