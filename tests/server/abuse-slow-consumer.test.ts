/**
 * Slow consumers (issue "Server hardening" 6, and native fan-out): a socket whose backlog would pass
 * the cap (1 MiB) is dropped at once, without a close frame queued behind what it is not reading;
 * the other members of the channel keep getting every frame.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { frame } from "../../server/realtime/bus.ts";
import { SocketLimits } from "../../server/ws/socket.ts";
import { startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, person } from "./people.ts";
import { RawWs, serverSideTcpState } from "./raw-ws.ts";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.stop());

/** A raw socket, authenticated and subscribed to the channel. */
async function subscribed(token: string, channelUri: string): Promise<RawWs> {
  const raw = await RawWs.open(t.wsUrl);
  raw.send(JSON.stringify({ type: "auth", data: { token } }));
  raw.send(JSON.stringify({ type: "channel:join", id: "j", data: { channelUri } }));
  await raw.until(() => raw.json().some((f) => f.id === "j"));
  return raw;
}

/**
 * Publishes 32 KiB frames to the channel, 8 per tick with a pause between, so a socket that reads
 * keeps up and only one that does not falls behind; stops once `until` holds or after `maxBytes`.
 */
async function flood(channelId: string, until: () => boolean, maxBytes = 64 * 1024 * 1024) {
  const pad = "x".repeat(32 * 1024);
  let sent = 0;
  let n = 0;
  while (sent < maxBytes && !until()) {
    for (let i = 0; i < 8; i++) {
      await t.services.bus.publish({
        kind: "channel",
        channelId,
        frame: frame("channel:message" as never, { n: n++, pad } as never),
      });
      sent += pad.length;
    }
    await Bun.sleep(5);
  }
  return { frames: n, bytes: sent };
}

test("a socket whose backlog passes the cap is dropped at once, without flushing; the others keep getting every frame", async () => {
  const [a, b] = await Promise.all([person(t.url, "slow"), person(t.url, "fast")]);
  const { channel } = await createChannel(t.url, a, "public");
  const fast = await TestSocket.connect(t.wsUrl, b.token);
  expect((await fast.request("channel:join", { channelUri: channel.uri })).type).toBe("ack");
  const slow = await subscribed(a.token, channel.uri);
  expect(t.services.hub.connectionCount).toBe(2);

  slow.pause();
  // Kernel buffers on loopback absorb a few MiB first; then its backlog passes the cap.
  const { frames } = await flood(channel.id, () => t.services.hub.connectionCount === 1);
  expect(t.services.hub.connectionCount).toBe(1);
  // The server let go of the connection without waiting for the stalled client to read: its end
  // left ESTABLISHED (the kernel still owes the client what it had accepted).
  const serverPort = Number(new URL(t.url).port);
  const clientPort = slow.sock.localPort as number;
  const deadline = Date.now() + 1_000;
  while (serverSideTcpState(serverPort, clientPort) === "01" && Date.now() < deadline) await Bun.sleep(20);
  expect(serverSideTcpState(serverPort, clientPort)).not.toBe("01");
  slow.resume();
  await slow.until(() => slow.ended, 5_000);
  expect(slow.ended).toBe(true);
  // Dropped, not closed: no close frame was queued behind a backlog it was not reading.
  expect(slow.closeCode).toBeNull();
  // Everything it was sent fits in the cap plus what the kernel buffers held: nothing grew unbounded.
  const received = slow.frames.reduce((n, f) => n + f.payload.length, 0);
  expect(received).toBeLessThan(SocketLimits.maxBacklogBytes + 16 * 1024 * 1024);

  // The reader got every frame, and still gets new ones.
  await fast.waitFor(
    (f) => f.type === "channel:message" && (f.data as { n: number }).n === frames - 1,
    10_000,
  );
  const count = fast.frames.filter((f) => f.type === "channel:message").length;
  expect(count).toBe(frames);
  await t.services.bus.publish({
    kind: "channel",
    channelId: channel.id,
    frame: frame("channel:message" as never, { n: -1 } as never),
  });
  await fast.waitFor((f) => f.type === "channel:message" && (f.data as { n: number }).n === -1);
  fast.close();
});
