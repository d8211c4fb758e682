/**
 * Fault 3, a slow consumer: one member's socket authenticates and then stops reading (a raw TCP
 * WebSocket client that pauses its socket), while another member sends large messages to the
 * channel as fast as they are acknowledged. Once its backlog would pass the cap the server drops its
 * connection at once, without flushing (Bun's backpressureLimit with closeOnBackpressureLimit,
 * server/app.ts); the other members must keep receiving every message.
 *
 * Whether the server dropped the connection is read from the kernel: the server's end of it leaves
 * ESTABLISHED (/proc/net/tcp{,6}), while the stalled client's end cannot learn it until it reads.
 * When it reads again, it finds what the kernel had already accepted and then the end of the
 * connection; no close frame is among it (tests/server/abuse-slow-consumer.test.ts).
 */
import type { MessageRecord } from "../../core/protocol/index.ts";
import { ok } from "../server/harness.ts";
import { createChannel, type Person, person, rotate, seal } from "../server/people.ts";
import { RawWs, serverSideTcpState } from "../server/raw-ws.ts";
import { type FaultResult, FaultSocket, result, ServerProcess, waitUntil } from "./lib.ts";

export interface SlowConsumerOptions {
  /** How long to keep sending before the fault fails for want of a close. */
  limitMs?: number;
  /** The server must drop the connection within this long of the client's last read. */
  closeWithinMs?: number;
  /** Bytes of content to fan out to the channel before judging (default 32 MiB). */
  budgetBytes?: number;
}

export async function runSlowConsumer(opts: SlowConsumerOptions = {}): Promise<FaultResult> {
  const r = result("slow-consumer");
  const limitMs = opts.limitMs ?? 30_000;
  const closeWithinMs = opts.closeWithinMs ?? 10_000;
  const server = await ServerProcess.start();
  try {
    const [alice, bob, carol] = [
      await person(server.url, "sca"),
      await person(server.url, "scb"),
      await person(server.url, "scc"),
    ] as [Person, Person, Person];
    const { channel } = await createChannel(server.url, alice, "public", "slow");
    for (const p of [bob, carol]) await ok(server.url, "joinChannel", { channelUri: channel.uri }, p.token);
    const e = await rotate(server.url, carol, channel);
    if (e.res.status !== 200) throw new Error(`rotation refused: ${JSON.stringify(e.res.body)}`);
    const epoch = { epochId: e.epochId, epochNumber: e.epochNumber, epochKey: e.epochKey };

    const sender = await FaultSocket.connect(server.wsUrl, alice.token);
    const reader = await FaultSocket.connect(server.wsUrl, bob.token);
    const received = new Set<string>();
    reader.onFrame = (f) => {
      if (f.type === "channel:message") received.add((f.data.record as MessageRecord).uri);
    };
    // A socket receives a channel's frames once it has joined it on that socket.
    for (const s of [sender, reader]) {
      const f = await s.request("channel:join", { channelUri: channel.uri });
      if (f.type !== "ack") throw new Error(`channel:join refused: ${JSON.stringify(f.data)}`);
    }
    // A WebSocket client on a bare TCP socket, so that it can stop reading.
    const slow = await RawWs.open(server.wsUrl);
    slow.send(JSON.stringify({ type: "auth", data: { token: carol.token } }));
    slow.send(JSON.stringify({ type: "channel:join", id: "j", data: { channelUri: channel.uri } }));
    const joined = () => slow.json().some((f) => f.id === "j");
    const tcpState = () => serverSideTcpState(server.port, slow.sock.localPort ?? 0);
    if (!(await waitUntil(joined, 10_000))) throw new Error("raw socket: channel:join not answered");
    slow.pause();
    const pausedAt = performance.now();
    const framesAtPause = slow.frames.length;

    // ~40 KB of text a message (≈55 KB of content): the backlog grows fast. Keep sending until
    // `budgetBytes` went out (many times the cap), the connection is dropped, or the time is up.
    const text = "x".repeat(40_000);
    const sent: string[] = [];
    const ackedAt = new Map<string, number>();
    let bytesOut = 0;
    let droppedAt = 0;
    let state: string | null = "01";
    let sendErrors = 0;
    const budgetBytes = opts.budgetBytes ?? 32 * 1024 * 1024;
    while (performance.now() - pausedAt < limitMs && bytesOut < budgetBytes) {
      const batch = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const body = await seal(alice, channel, epoch, text);
          const f = await sender.request("channel:message", body).catch(() => null);
          if (f?.type !== "ack") {
            sendErrors++;
            return null;
          }
          bytesOut += body.content.length;
          const uri = (f.data as { record: MessageRecord }).record.uri;
          ackedAt.set(uri, performance.now());
          return uri;
        }),
      );
      for (const uri of batch) if (uri) sent.push(uri);
      state = tcpState();
      if (state !== "01" && !droppedAt) droppedAt = performance.now();
    }
    // Then the grace period the server gives a closed slow socket before it drops the connection.
    if (!droppedAt && (await waitUntil(() => tcpState() !== "01", 3_000, 50))) droppedAt = performance.now();
    state = tcpState();
    // A few more after the close: the others still get everything.
    for (let i = 0; i < 10; i++) {
      const f = await sender.request("channel:message", await seal(alice, channel, epoch, `after ${i}`));
      if (f.type === "ack") sent.push((f.data as { record: MessageRecord }).record.uri);
      else sendErrors++;
    }
    await waitUntil(() => sent.every((u) => received.has(u)), 10_000);
    const framesWhilePaused = slow.frames.length - framesAtPause;
    // Now read what reached the stalled client: the messages before the close frame tell when the
    // server closed it (the ack of the first message it no longer got), the frame its code.
    slow.resume();
    await waitUntil(() => slow.ended || slow.closeCode !== null, 3_000);
    const gotUris = new Set<string>();
    for (const f of slow.frames.slice(framesAtPause)) {
      if (f.opcode !== 1) continue;
      const m = /"uri":"([^"]+)"/.exec(f.payload.subarray(0, 400).toString());
      if (m?.[1]) gotUris.add(m[1]);
    }
    const firstMissed = sent.find((u) => !gotUris.has(u));
    const code = slow.closeCode;
    // When the server stopped sending to it: the ack of the first message it did not get.
    const cutOffMs = firstMissed ? (ackedAt.get(firstMissed) ?? 0) - pausedAt : null;
    const missed = sent.filter((u) => !received.has(u)).length;
    r.figures = {
      close_code: String(code ?? "none"),
      cut_off_ms: cutOffMs === null ? "never" : Math.round(cutOffMs),
      delivered_before_close: gotUris.size,
      tcp_dropped_ms: droppedAt ? Math.round(droppedAt - pausedAt) : "never",
      tcp_state_at_end: state ?? "gone",
      fanned_out_kib: Math.round(bytesOut / 1024),
      frames_read_while_paused: framesWhilePaused,
      messages: sent.length,
      other_member_missed: missed,
      send_errors: sendErrors,
    };
    if (code !== null) r.fail(`closed with ${code}: a close frame was queued behind an unread backlog`);
    if (!droppedAt)
      r.fail(
        "the stalled socket's TCP connection was never dropped (the server promises: at once when its backlog passes the cap)",
      );
    else if (droppedAt - pausedAt > closeWithinMs)
      r.fail(
        `the stalled socket was dropped after ${Math.round(droppedAt - pausedAt)} ms (limit ${closeWithinMs})`,
      );
    if (!slow.ended) r.fail("the stalled socket's connection had not ended once it read again");
    if (missed) r.fail(`the other member missed ${missed} of ${sent.length} messages`);
    if (reader.closeCode !== null || sender.closeCode !== null) r.fail("a healthy socket was closed");
    if (sendErrors) r.fail(`${sendErrors} sends failed`);
    sender.close();
    reader.close();
    slow.destroy();
    return r;
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runSlowConsumer()));
}
