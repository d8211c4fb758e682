/**
 * The Redis bus's message format (docs/decisions/redis-fanout.md): a bus event as it travels between
 * processes, and a batch of them in one message. redis-bus.ts publishes and receives them.
 */
import type { ServerFrame } from "../../core/protocol/index.ts";
import type { BusEvent } from "./bus.ts";

/** What travels on the wire: the frame already serialised once. */
export type Wire =
  | { k: "c"; c: string; t: string; s?: number }
  | { k: "u"; d: string; t: string }
  | { k: "x"; c: string; d: string }
  | { k: "e"; i: string }
  | { k: "p"; d: string; o: boolean };

export function toWire(e: BusEvent): Wire {
  switch (e.kind) {
    case "channel": {
      const seq = (e.frame?.data as { record?: { seq?: unknown } } | undefined)?.record?.seq;
      const t = e.text ?? JSON.stringify(e.frame);
      return typeof seq === "number" ? { k: "c", c: e.channelId, t, s: seq } : { k: "c", c: e.channelId, t };
    }
    case "user":
      return { k: "u", d: e.did, t: e.text ?? JSON.stringify(e.frame) };
    case "unsubscribe":
      return { k: "x", c: e.channelId, d: e.did };
    case "end-session":
      return { k: "e", i: e.sessionId };
    case "presence":
      return { k: "p", d: e.did, o: e.online };
  }
}

/**
 * A bus message holds a batch: this line, then per event its header as JSON on one line (with `n`,
 * the length of its frame text), then that text as it is. The frame, already JSON, is not escaped
 * into a second JSON string and parsed out of it again on every process.
 */
export const BATCH_HEADER = "wsync-bus 2\n";

export function encodeWire(w: Wire): string {
  if (w.k === "c" || w.k === "u") {
    const { t, ...head } = w;
    return `${JSON.stringify({ ...head, n: t.length })}\n${t}`;
  }
  return `${JSON.stringify(w)}\n`;
}

/** The events of a bus message (a batch, or one event as JSON from a process of an earlier version). */
export function decodeBatch(message: string): Wire[] {
  if (!message.startsWith(BATCH_HEADER)) return [JSON.parse(message) as Wire];
  const out: Wire[] = [];
  let at = BATCH_HEADER.length;
  while (at < message.length) {
    const eol = message.indexOf("\n", at);
    if (eol < 0) throw new Error("bus message: a header without its end");
    const head = JSON.parse(message.slice(at, eol)) as Wire & { n?: number };
    at = eol + 1;
    if (head.k === "c" || head.k === "u") {
      const n = head.n;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || at + n > message.length)
        throw new Error("bus message: a text longer than the message");
      const { n: _n, ...rest } = head;
      out.push({ ...rest, t: message.slice(at, at + n) } as Wire);
      at += n;
    } else out.push(head);
  }
  return out;
}

// Frames arrive serialised: the hub sends `text` as it is and never reads `frame`.
const SERIALISED = null as unknown as ServerFrame;

export function fromWire(w: Wire): BusEvent {
  switch (w.k) {
    case "c":
      return { kind: "channel", channelId: w.c, frame: SERIALISED, text: w.t };
    case "u":
      return { kind: "user", did: w.d, frame: SERIALISED, text: w.t };
    case "x":
      return { kind: "unsubscribe", channelId: w.c, did: w.d };
    case "e":
      return { kind: "end-session", sessionId: w.i };
    case "p":
      return { kind: "presence", did: w.d, online: w.o };
  }
}
