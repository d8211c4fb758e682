/**
 * Who is online (protocol §4: online while at least one socket is authenticated). One process: its
 * own sockets decide (LocalPresence). Several processes: any process's sockets count, and a process
 * that dies takes its users offline after its heartbeat expires (RedisPresence, redis-bus.ts).
 */
export interface Presence {
  /**
   * A user's first socket on this process authenticated. True when they came online (no socket of
   * theirs anywhere before): then the caller tells their channels.
   */
  connected(did: string): Promise<boolean>;
  /** A user's last socket on this process closed. True when they went offline everywhere. */
  disconnected(did: string): Promise<boolean>;
  /** Whether the user has a socket on any process (this process's view; synchronous). */
  isOnline(did: string): boolean;
  /**
   * Users whose last socket was on a process that died: their channels must be told they went
   * offline (the caller does, once, on whichever process noticed).
   */
  onLost(handler: (did: string) => void): void;
  close(): Promise<void>;
}

/** One process: presence is this process's sockets (the hub's). */
export class LocalPresence implements Presence {
  constructor(private readonly local: (did: string) => boolean) {}

  async connected(): Promise<boolean> {
    return true;
  }

  async disconnected(): Promise<boolean> {
    return true;
  }

  isOnline(did: string): boolean {
    return this.local(did);
  }

  onLost(): void {}

  async close(): Promise<void> {}
}
