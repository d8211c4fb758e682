/**
 * Slow consumers (issue "Server hardening" 6): a socket whose backlog passes the cap (1 MiB) gets
 * nothing more; one that reads again is closed with 4408, one that does not has its connection
 * dropped within the grace period; the other members of the channel keep getting every frame.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { WsClose } from "../../core/protocol/index.ts";
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

test("a socket that fell behind the cap and reads again is closed with 4408; the others keep getting frames", async () => {
  const [a, b] = await Promise.all([person(t.url, "slow"), person(t.url, "fast")]);
  const { channel } = await createChannel(t.url, a, "public");
  const fast = await TestSocket.connect(t.wsUrl, b.token);
  expect((await fast.request("channel:join", { channelUri: channel.uri })).type).toBe("ack");
  const slow = await subscribed(a.token, channel.uri);
  const before = t.services.hub.connectionCount;
  expect(before).toBe(2);

  slow.pause();
  const passed = () => t.logs.some((l) => l.includes("backlog cap"));
  const { frames } = await flood(channel.id, passed);
  // Its backlog passed the cap (kernel buffers on loopback absorb a few MiB first): from now on it
  // gets nothing more, and it reads again at once.
  expect(passed()).toBe(true);
  slow.resume();
  await slow.until(() => slow.closeCode !== null || slow.ended, 5_000);
  // What was queued ends with close 4408, and the socket left the hub.
  expect(slow.closeCode).toBe(WsClose.backpressure);
  expect(t.services.hub.connectionCount).toBe(1);

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

test("a socket that never reads again has its TCP connection dropped within the grace period", async () => {
  const a = await person(t.url, "stuck");
  const { channel } = await createChannel(t.url, a, "public");
  const stuck = await subscribed(a.token, channel.uri);
  stuck.pause();
  await flood(channel.id, () => t.services.hub.connectionCount === 0);
  expect(t.services.hub.connectionCount).toBe(0);
  // Without it reading a byte, the server lets go of the connection within the grace period: its
  // end leaves ESTABLISHED (the kernel still owes the stalled client what it had accepted).
  const serverPort = Number(new URL(t.url).port);
  const clientPort = stuck.sock.localPort as number;
  const deadline = Date.now() + SocketLimits.closeGraceMs + 1_000;
  while (serverSideTcpState(serverPort, clientPort) === "01" && Date.now() < deadline) await Bun.sleep(20);
  expect(serverSideTcpState(serverPort, clientPort)).not.toBe("01");
  stuck.resume();
  await stuck.until(() => stuck.ended, 5_000);
  expect(stuck.ended).toBe(true);
  // A client that read nothing cannot have been sent a close frame it could read: the bytes end.
  expect(stuck.closeCode).toBeNull();
  // Everything it was sent fits in the cap plus what the kernel buffers held: nothing grew unbounded.
  const received = stuck.frames.reduce((n, f) => n + f.payload.length, 0);
  expect(received).toBeLessThan(64 * 1024 * 1024);
});
