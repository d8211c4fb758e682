/**
 * Socket caps (issue "Server hardening" 1): one user holds at most 16 sockets and one address at most
 * 64; the next is closed with 4429 (tooManyConnections), and closing one makes room again.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { WsClose } from "../../core/protocol/index.ts";
import { SocketLimits } from "../../server/ws/socket.ts";
import { startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { person } from "./people.ts";
import { RawWs } from "./raw-ws.ts";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(() => t.stop());

test("one user: the socket past 16 is closed with 4429; closing one makes room", async () => {
  const p = await person(t.url, "many");
  const sockets: TestSocket[] = [];
  for (let i = 0; i < SocketLimits.maxSocketsPerUser; i++)
    sockets.push(await TestSocket.connect(t.wsUrl, p.token));
  const over = await TestSocket.open(t.wsUrl);
  over.sendRaw(JSON.stringify({ type: "auth", data: { token: p.token } }));
  expect(await over.waitClose()).toBe(WsClose.tooManyConnections);
  // Another user is unaffected.
  const q = await person(t.url, "other");
  const qs = await TestSocket.connect(t.wsUrl, q.token);
  sockets[0]?.close();
  await sockets[0]?.waitClose();
  const again = await TestSocket.connect(t.wsUrl, p.token);
  expect((await again.request("ping", {})).type).toBe("ack");
  for (const s of [...sockets.slice(1), qs, again]) s.close();
});

test("one address: the connection past 64 is closed with 4429; another address is unaffected", async () => {
  const raws: RawWs[] = [];
  for (let i = 0; i < SocketLimits.maxSocketsPerAddress; i++)
    raws.push(await RawWs.open(t.wsUrl, "127.0.0.1"));
  const over = await RawWs.open(t.wsUrl, "127.0.0.1");
  await over.until(() => over.closeCode !== null, 5000);
  expect(over.closeCode).toBe(WsClose.tooManyConnections);
  const elsewhere = await RawWs.open(t.wsUrl, "127.0.0.2");
  const p = await person(t.url, "elsewhere");
  elsewhere.send(JSON.stringify({ type: "auth", data: { token: p.token } }));
  await elsewhere.until(() => elsewhere.json().some((f) => f.type === "ready"));
  for (const r of [...raws, over, elsewhere]) r.destroy();
});

test("WSYNC_MAX_SOCKETS_PER_ADDRESS raises the address cap (an office of 100 behind one NAT address)", async () => {
  const office = await startTestServer({
    env: { WSYNC_MAX_SOCKETS_PER_ADDRESS: "100", WSYNC_MAX_SOCKETS_PER_USER: "2" },
  });
  try {
    const raws: RawWs[] = [];
    for (let i = 0; i < 100; i++) raws.push(await RawWs.open(office.wsUrl, "127.0.0.1"));
    const p = await person(office.url, "last");
    raws[99]?.send(JSON.stringify({ type: "auth", data: { token: p.token } }));
    await raws[99]?.until(() => (raws[99]?.json() ?? []).some((f) => f.type === "ready"));
    const over = await RawWs.open(office.wsUrl, "127.0.0.1");
    await over.until(() => over.closeCode !== null, 5000);
    expect(over.closeCode).toBe(WsClose.tooManyConnections);
    for (const r of [...raws, over]) r.destroy();
    // The per-user cap follows its setting too: a third socket of one user is refused.
    const a = await TestSocket.connect(office.wsUrl, p.token);
    const b = await TestSocket.connect(office.wsUrl, p.token);
    const third = await TestSocket.open(office.wsUrl);
    third.sendRaw(JSON.stringify({ type: "auth", data: { token: p.token } }));
    expect(await third.waitClose()).toBe(WsClose.tooManyConnections);
    a.close();
    b.close();
  } finally {
    await office.stop();
  }
}, 30_000);
