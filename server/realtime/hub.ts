import { WsClose } from "../../core/protocol/index.ts";
import type { BusEvent } from "./bus.ts";

/** One authenticated socket, as the hub sees it. */
export interface Connection {
  readonly did: string;
  readonly sessionId: string;
  /** Starts (stops) receiving what is published to `topic` (Bun's native topics). */
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Closes the socket with a close frame (`code`, `reason`). */
  end(code: number, reason: string): void;
}

/** Sends a text frame to every socket subscribed to `topic` (Bun's `server.publish`). */
export type Publish = (topic: string, text: string) => void;

/** The topic of a channel's frames, and of one user's frames (invites, key changes). */
export const channelTopic = (channelId: string) => `c:${channelId}`;
export const userTopic = (did: string) => `u:${did}`;

/** The text of a bus event's frame: serialised once, by whoever made the event, where it could. */
export const frameText = (event: { frame: unknown; text?: string }) =>
  event.text ?? JSON.stringify(event.frame);

/**
 * This process's sockets: who is connected, and the last step of fan-out. Delivery uses Bun's
 * native topics (docs/decisions/native-fanout.md): a socket subscribes to its user's topic when it
 * authenticates and to a channel's topic when it joins; a frame is serialised once and handed to
 * `server.publish`, which queues it for every subscriber and writes each socket's frames of one
 * event-loop turn in one corked write. A member who leaves or is kicked is unsubscribed from the
 * channel's topic on every socket of theirs by an `unsubscribe` bus event, before anything later is
 * published. A subscriber whose backlog would pass the cap is dropped by Bun at once (createApp's
 * `backpressureLimit` with `closeOnBackpressureLimit`).
 */
export class Hub {
  private readonly byDid = new Map<string, Set<Connection>>();
  private count = 0;

  constructor(private publish: Publish | null = null) {}

  /** Where frames go once the server listens (createApp passes `server.publish`). */
  attach(publish: Publish): void {
    this.publish = publish;
  }

  /** Returns true when this is the user's first socket here (they came online). */
  add(conn: Connection): boolean {
    const existing = this.byDid.get(conn.did);
    const set = existing ?? new Set<Connection>();
    if (!existing) this.byDid.set(conn.did, set);
    set.add(conn);
    this.count++;
    conn.subscribe(userTopic(conn.did));
    return !existing;
  }

  /**
   * Shutdown: closes every authenticated socket with `code` (1001, going away), so clients reconnect
   * to whichever server answers next instead of waiting on a dead connection.
   */
  closeAll(code: number, reason: string): number {
    let n = 0;
    for (const set of this.byDid.values()) {
      for (const conn of set) {
        try {
          conn.end(code, reason);
          n++;
        } catch {
          // Already closing.
        }
      }
    }
    return n;
  }

  /** Closes every socket of `did` here with `code` (its account was disabled or deleted); how many. */
  endUser(did: string, code: number, reason: string): number {
    const conns = [...(this.byDid.get(did) ?? [])];
    for (const conn of conns) conn.end(code, reason);
    return conns.length;
  }

  /** Returns true when that was the user's last socket here (they went offline). */
  remove(conn: Connection): boolean {
    const set = this.byDid.get(conn.did);
    if (!set?.delete(conn)) return false;
    this.count--;
    if (set.size > 0) return false;
    this.byDid.delete(conn.did);
    return true;
  }

  subscribe(conn: Connection, channelId: string): void {
    if (this.byDid.get(conn.did)?.has(conn)) conn.subscribe(channelTopic(channelId));
  }

  isOnline(did: string): boolean {
    return this.byDid.has(did);
  }

  /** Distinct accounts with a socket here (metrics). */
  get userCount(): number {
    return this.byDid.size;
  }

  get connectionCount(): number {
    return this.count;
  }

  deliver(event: BusEvent): void {
    switch (event.kind) {
      case "channel":
        this.publish?.(channelTopic(event.channelId), frameText(event));
        return;
      case "user":
        this.publish?.(userTopic(event.did), frameText(event));
        return;
      case "unsubscribe":
        for (const conn of this.byDid.get(event.did) ?? []) conn.unsubscribe(channelTopic(event.channelId));
        return;
      case "presence":
        return;
      case "end-session":
        for (const set of [...this.byDid.values()]) {
          for (const conn of [...set]) {
            if (conn.sessionId === event.sessionId) conn.end(WsClose.sessionEnded, "Session ended");
          }
        }
        return;
    }
  }
}
