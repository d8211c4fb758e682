/** What the suite drives: one system (wsync or a peer), started on 127.0.0.1 and pinned to core 0. */
export interface System {
  readonly name: string;
  /** The server process whose CPU and memory are read from /proc. */
  readonly pid: number;
  /** Whether a channel's sender receives its own message (IRC does not echo it). */
  readonly selfEcho: boolean;
  /**
   * Whether a send resolves once the server stored the message (wsync's ack; the storing peer's echo
   * of an archived message). Otherwise a publish completes at a sampled member's receipt.
   */
  readonly acknowledges?: boolean;
  /**
   * The share (0–1] of the M = 1,000 closed loops' messages and of the open loop's seconds this
   * system is given at full size (default 1): for a peer that delivers an order of magnitude slower.
   */
  readonly bigShare?: number;
  /** How long this system may deliver nothing before a shortfall counts (default 2 s). */
  readonly quietMs?: number;
  /** Channels of `size` joined members each, and a way to send in each (see Group). */
  group(channels: number, size: number, opts: GroupOptions): Promise<Group>;
  /** Setup for connectOne(0 … sockets-1): users, channels (not measured). */
  prepare(sockets: number): Promise<void>;
  /** Socket `i`, connected, authenticated and joined to a 10-member channel (connects/s, idle memory). */
  connectOne(i: number): Promise<Member>;
  stop(): Promise<void>;
}

export interface GroupOptions {
  /** Plaintext bytes of each message. */
  payload: number;
  /** Messages each channel's sender will send (wsync seals them all before measuring). */
  messages: number;
  /** How many members of each channel (after the sender) report arrivals. */
  sampled: number;
  /** A sampled member of channel `c` received message `id` at `at` (performance.now()). */
  onArrival(c: number, id: number, at: number): void;
}

export interface Group {
  /** Per channel: its members; member 0 is the channel's sender. */
  members: Member[][];
  /**
   * Sends message `id` (0 ≤ id < messages) in channel `c`; resolves when the server acknowledged it
   * as stored (wsync) or when it was written (peers, which acknowledge nothing).
   */
  send(c: number, id: number): Promise<void>;
  close(): Promise<void>;
}

export interface Member {
  /** Deliveries (channel messages) this member received. */
  readonly count: number;
  close(): void;
}
