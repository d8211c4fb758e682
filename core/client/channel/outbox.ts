import { reasonOf } from "../../crypto/index.ts";
import { ApiError, type MessageRecord, WsEvent } from "../../protocol/runtime.ts";
import { NetworkError } from "../net/api.ts";
import type { ChannelView, TimelineItem } from "../view/state.ts";
import type { EngineContext } from "./engine-context.ts";
import { replaceItem } from "./timeline.ts";

const MAX_SEND_ATTEMPTS = 4;
/** How long a message written offline waits for the connection before it fails (✗, retry). */
export const OFFLINE_QUEUE_MS = 5 * 60_000;

/** One attempt's outcome: the stored record, or "again" (the epoch moved, the socket dropped). */
export type Attempt<T> = { done: T } | "again";

/**
 * The way out for one message (channel-engine.ts `send` decides what to send; this carries it):
 * the TRANSMITTING row and its QUEUED mark, the transport (the socket when it is up, else HTTP),
 * retries with the same clientMsgId (the server's idempotency returns the first record, so a retry
 * never posts twice), the offline queue (the server unreachable: wait for the connection for up to
 * OFFLINE_QUEUE_MS, attempts not spent meanwhile), the sender-chain number each message keeps
 * across its retries and gives back when refused for good, and the ✗ row when it fails.
 */
export class Outbox {
  /** The chain number taken for a message not yet stored, by clientMsgId (kept by every retry). */
  private readonly positions = new Map<string, { device: string; n: number }>();

  constructor(private readonly c: EngineContext) {}

  /** This message's number in the device's chain in the channel: taken once per clientMsgId. */
  async position(
    clientMsgId: string,
    publicKey: string,
    channelId: string,
  ): Promise<{ device: string; n: number }> {
    const held = this.positions.get(clientMsgId);
    if (held) return held;
    const taken = await this.c.keyring.senderChains.next(publicKey, channelId);
    this.positions.set(clientMsgId, taken);
    return taken;
  }

  /** Sends the body on the socket when it is up, else over HTTP; the record the server stored. */
  async transmit(body: { channelUri: string; content: string; clientMsgId: string }): Promise<MessageRecord> {
    return this.c.realtime.connectionStatus === "connected"
      ? ((await this.c.realtime.request(WsEvent.channelMessage, body)).record as MessageRecord)
      : ((await this.c.api.call("send", body)).record as MessageRecord);
  }

  /**
   * Runs `attempt` until it is done: again after a refusal that a fresh epoch answers
   * (RotationRequired, EpochConflict: `onEpochMoved`) or a dropped socket, up to MAX_SEND_ATTEMPTS;
   * offline it waits for the connection. On failure the pending row becomes ✗ and a chain number
   * refused for good is given back.
   */
  async deliver<T>(o: {
    view: ChannelView;
    pending: TimelineItem;
    channelId: string;
    publicKey: string;
    onQueued?: () => void;
    onEpochMoved: () => Promise<unknown>;
    attempt: () => Promise<T>;
  }): Promise<T> {
    const { view, pending } = o;
    const clientMsgId = pending.clientMsgId as string;
    const setQueued = (queued: boolean) => {
      const cur = view.items.find((i) => i.uri === pending.uri);
      if (!cur || Boolean(cur.queued) === queued) return;
      replaceItem(view, pending.uri, (i) => ({ ...i, queued }));
      this.c.changed();
    };
    const offlineUntil = this.c.now() + OFFLINE_QUEUE_MS;
    try {
      for (let attempt = 0; attempt < MAX_SEND_ATTEMPTS; ) {
        try {
          const done = await o.attempt();
          this.positions.delete(clientMsgId);
          return done;
        } catch (e) {
          if (e instanceof ApiError && (e.code === "RotationRequired" || e.code === "EpochConflict")) {
            attempt++;
            await o.onEpochMoved();
            continue;
          }
          // The socket dropped between the check and the request: try again (HTTP if still down).
          if (e instanceof ApiError && (e.message === "Not connected" || e.message === "Connection lost")) {
            attempt++;
            continue;
          }
          // The server is unreachable: wait for the connection (the socket keeps trying) and send
          // again with the same clientMsgId. Attempts are not spent while offline.
          if (!(e instanceof NetworkError)) throw e;
          const left = offlineUntil - this.c.now();
          if (left <= 0 || !this.c.realtime.active) throw e;
          setQueued(true);
          o.onQueued?.();
          if (!(await this.c.realtime.whenConnected(left))) throw e;
          setQueued(false);
        }
      }
      throw new Error("Failed to send message");
    } catch (e) {
      // Refused for good (not a lost answer): the chain number goes back if nothing came after it.
      const taken = this.positions.get(clientMsgId);
      if (taken && e instanceof ApiError) {
        this.positions.delete(clientMsgId);
        await this.c.keyring.senderChains.giveBack(o.publicKey, o.channelId, taken).catch(() => undefined);
      }
      replaceItem(view, pending.uri, () => ({
        ...pending,
        sending: false,
        state: "failed",
        error: reasonOf(e),
      }));
      this.c.changed();
      throw e;
    }
  }
}
