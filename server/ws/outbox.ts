/**
 * Frames sent from outside Bun's socket callbacks, held until the end of the event-loop turn.
 *
 * Bun corks a socket only while its `message`, `open` or `drain` callback runs. The acks of a group
 * commit are sent later, when the writer thread answers, and each `ws.send` there was a write of its
 * own (a fifth of the main thread's samples per stored message in a profile: docs/benchmarks.md,
 * issue 35; docs/decisions/native-fanout.md, amendment). Held here, a socket's frames of one turn go
 * out corked, in one write, in the order they were sent; fan-out through topics is batched by Bun in
 * the same way.
 */

/** The part of Bun's ServerWebSocket the outbox uses. */
export interface CorkableSocket {
  readonly readyState: number;
  send(data: string): number;
  /** Runs `callback` with the socket corked: its sends go out in one write (Bun's `ws.cork`). */
  cork<R>(callback: () => R): R;
}

const OPEN = 1;

/** Each socket's held frames, in order; emptied at the end of the turn. */
const held = new Map<CorkableSocket, string[]>();
let scheduled = false;

function flush(): void {
  scheduled = false;
  const sockets = [...held];
  held.clear();
  for (const [ws, texts] of sockets) {
    if (ws.readyState !== OPEN) continue;
    ws.cork(() => {
      for (const text of texts) if (ws.readyState === OPEN) ws.send(text);
    });
  }
}

/** Sends `text` at the end of this turn, corked with the socket's other frames of the turn. */
export function sendAtTurnEnd(ws: CorkableSocket, text: string): void {
  const texts = held.get(ws);
  if (texts) {
    texts.push(text);
    return;
  }
  held.set(ws, [text]);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

/** Sends `text` now, or behind the socket's held frames if it has any: its frames keep their order. */
export function sendInOrder(ws: CorkableSocket, text: string): void {
  const texts = held.get(ws);
  if (texts) texts.push(text);
  else if (ws.readyState === OPEN) ws.send(text);
}
