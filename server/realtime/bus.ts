import type { ServerFrame } from "../../core/protocol/index.ts";

/**
 * What one server process tells every process (itself included). In-process by default; the Redis
 * implementation carries the same events across processes.
 */
export type BusEvent =
  /**
   * A frame for every socket subscribed to the channel. `text`, when given, is `frame` already
   * serialised (a message record is serialised once, for its ack and its fan-out alike).
   */
  | { kind: "channel"; channelId: string; frame: ServerFrame; text?: string }
  /** A frame for every socket of one user. */
  | { kind: "user"; did: string; frame: ServerFrame; text?: string }
  /** The user left or was removed: their sockets must stop receiving the channel's events. */
  | { kind: "unsubscribe"; channelId: string; did: string }
  /** The session was logged out: close its sockets. */
  | { kind: "end-session"; sessionId: string }
  /** A user came online or went offline across processes (the Redis presence's view; hubs ignore it). */
  | { kind: "presence"; did: string; online: boolean };

export interface Bus {
  publish(event: BusEvent): Promise<void>;
  subscribe(handler: (event: BusEvent) => void): void;
  close(): Promise<void>;
  /** Answers when the shared bus (Redis) answers; absent for the in-process bus (readiness). */
  ping?(): Promise<void>;
}

export class LocalBus implements Bus {
  private readonly handlers: ((event: BusEvent) => void)[] = [];

  async publish(event: BusEvent): Promise<void> {
    for (const h of this.handlers) h(event);
  }

  subscribe(handler: (event: BusEvent) => void): void {
    this.handlers.push(handler);
  }

  async close(): Promise<void> {
    this.handlers.length = 0;
  }
}

export function frame<T extends ServerFrame["type"]>(type: T, data: ServerFrame<T>["data"]): ServerFrame<T> {
  return { type, data };
}
