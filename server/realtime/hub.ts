import { WsClose } from "../../core/protocol/index.ts";
import type { BusEvent } from "./bus.ts";

/** One authenticated socket, as the hub sees it. */
export interface Connection {
  readonly id: string;
  readonly did: string;
  readonly sessionId: string;
  /** Sends a text frame; returns the bytes still queued for this socket afterwards. */
  send(text: string): number;
  close(code: number, reason: string): void;
}

/**
 * This process's sockets: who is connected, and which channels each socket follows. Delivery is the
 * last step of fan-out: a frame reaches a socket only if that socket subscribed to the channel, and a
 * member who leaves or is kicked is unsubscribed everywhere by an `unsubscribe` bus event.
 */
export class Hub {
  private readonly byChannel = new Map<string, Set<Connection>>();
  private readonly byDid = new Map<string, Set<Connection>>();
  private readonly channelsOf = new Map<Connection, Set<string>>();

  constructor(
    /** A socket with more than this many bytes queued is closed rather than allowed to grow. */
    private readonly maxBufferedBytes = 1024 * 1024,
  ) {}

  /** Returns true when this is the user's first socket here (they came online). */
  add(conn: Connection): boolean {
    const existing = this.byDid.get(conn.did);
    const set = existing ?? new Set<Connection>();
    if (!existing) this.byDid.set(conn.did, set);
    set.add(conn);
    this.channelsOf.set(conn, new Set());
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
          conn.close(code, reason);
          n++;
        } catch {
          // Already closing.
        }
      }
    }
    return n;
  }

  /** Returns true when that was the user's last socket here (they went offline). */
  remove(conn: Connection): boolean {
    for (const channelId of this.channelsOf.get(conn) ?? []) this.byChannel.get(channelId)?.delete(conn);
    this.channelsOf.delete(conn);
    const set = this.byDid.get(conn.did);
    if (!set?.delete(conn)) return false;
    if (set.size > 0) return false;
    this.byDid.delete(conn.did);
    return true;
  }

  subscribe(conn: Connection, channelId: string): void {
    const mine = this.channelsOf.get(conn);
    if (!mine) return;
    mine.add(channelId);
    const set = this.byChannel.get(channelId) ?? new Set<Connection>();
    this.byChannel.set(channelId, set);
    set.add(conn);
  }

  private unsubscribeUser(channelId: string, did: string): void {
    const set = this.byChannel.get(channelId);
    if (!set) return;
    for (const conn of [...set]) {
      if (conn.did !== did) continue;
      set.delete(conn);
      this.channelsOf.get(conn)?.delete(channelId);
    }
    if (set.size === 0) this.byChannel.delete(channelId);
  }

  isOnline(did: string): boolean {
    return this.byDid.has(did);
  }

  get connectionCount(): number {
    return this.channelsOf.size;
  }

  deliver(event: BusEvent): void {
    switch (event.kind) {
      case "channel":
        this.sendAll(this.byChannel.get(event.channelId), JSON.stringify(event.frame));
        return;
      case "user":
        this.sendAll(this.byDid.get(event.did), JSON.stringify(event.frame));
        return;
      case "unsubscribe":
        this.unsubscribeUser(event.channelId, event.did);
        return;
      case "end-session":
        for (const conn of [...this.channelsOf.keys()]) {
          if (conn.sessionId === event.sessionId) conn.close(WsClose.sessionEnded, "Session ended");
        }
        return;
    }
  }

  /** Sends to one socket, closing it if it has fallen too far behind. */
  sendTo(conn: Connection, text: string): void {
    const queued = conn.send(text);
    if (queued > this.maxBufferedBytes) {
      conn.close(WsClose.backpressure, "Too far behind; reconnect and fill the gap");
    }
  }

  private sendAll(conns: Set<Connection> | undefined, text: string): void {
    if (!conns) return;
    for (const conn of [...conns]) this.sendTo(conn, text);
  }
}
