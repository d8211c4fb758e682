/**
 * Benchmark: messages persisted and fanned out per second by one server process.
 * A real server (SQLite file, default durability unless WSYNC_SQLITE_SYNC says otherwise) in a child
 * process; SENDERS sockets each send MESSAGES/SENDERS pre-sealed messages back to back (each waits
 * for its ack: an ack means committed), RECEIVERS more sockets subscribe, and the clock stops when
 * every subscriber has every message. Usage: npm run bench:server [-- messages receivers senders]
 */

import { TestSocket } from "../server/harness.ts";
import { createChannel, type Person, person, rotate, seal } from "../server/people.ts";
import { startServerProcess } from "./server-process.ts";

const [messages = 2000, receivers = 20, senders = 4] = process.argv.slice(2).map(Number);
const sync = process.env.WSYNC_SQLITE_SYNC ?? "full";

const server = await startServerProcess({ WSYNC_SQLITE_SYNC: sync });
const url = server.url;
const wsUrl = server.wsUrl;

try {
  const people: Person[] = [];
  for (let i = 0; i < Math.max(senders, receivers); i++) people.push(await person(url, `bench${i}`));
  const owner = people[0] as Person;
  const { channel } = await createChannel(url, owner, "public");
  for (const p of people.slice(1)) {
    const r = await fetch(`${url}/api/channel/join`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json" },
      body: JSON.stringify({ channelUri: channel.uri }),
    });
    if (!r.ok) throw new Error(`join ${r.status}`);
  }
  const epoch = await rotate(url, owner, channel);
  const perSender = Math.ceil(messages / senders);
  const sealed: { p: Person; msgs: Awaited<ReturnType<typeof seal>>[] }[] = [];
  for (let s = 0; s < senders; s++) {
    const p = people[s] as Person;
    const msgs = [];
    for (let i = 0; i < perSender; i++)
      msgs.push(await seal(p, channel, epoch, `bench message ${s}/${i} ${"x".repeat(100)}`));
    sealed.push({ p, msgs });
  }
  const total = perSender * senders;
  const recvSockets = await Promise.all(
    people.slice(0, receivers).map((p) => TestSocket.connect(wsUrl, p.token)),
  );
  const sendSockets = await Promise.all(sealed.map(({ p }) => TestSocket.connect(wsUrl, p.token)));
  for (const s of [...recvSockets, ...sendSockets])
    await s.request("channel:join", { channelUri: channel.uri });
  const counted = recvSockets.map(() => 0);
  const allDelivered = Promise.all(
    recvSockets.map(
      (s, i) =>
        new Promise<void>((resolve) => {
          s.ws.addEventListener("message", (ev) => {
            if (String(ev.data).startsWith('{"type":"channel:message"')) counted[i] = (counted[i] ?? 0) + 1;
            if (counted[i] === total) resolve();
          });
        }),
    ),
  );
  const ackTimes: number[] = [];
  const start = performance.now();
  await Promise.all(
    sealed.map(async ({ msgs }, s) => {
      const sock = sendSockets[s] as TestSocket;
      for (const m of msgs) {
        const t0 = performance.now();
        const ack = await sock.request("channel:message", m);
        if (ack.type !== "ack") throw new Error(JSON.stringify(ack));
        ackTimes.push(performance.now() - t0);
      }
    }),
  );
  const persistedMs = performance.now() - start;
  await allDelivered;
  const deliveredMs = performance.now() - start;
  ackTimes.sort((a, b) => a - b);
  const pct = (q: number) =>
    (ackTimes[Math.min(ackTimes.length - 1, Math.floor(q * ackTimes.length))] ?? 0).toFixed(2);
  console.log(
    `server-messages: ${total} messages, ${senders} senders, ${receivers} subscribers, sqlite synchronous=${sync}`,
  );
  console.log(`  persisted (acked):      ${(total / (persistedMs / 1000)).toFixed(0)} messages/s`);
  console.log(
    `  persisted + fanned out: ${(total / (deliveredMs / 1000)).toFixed(0)} messages/s (${((total * receivers) / (deliveredMs / 1000)).toFixed(0)} deliveries/s)`,
  );
  console.log(`  ack latency ms: p50 ${pct(0.5)}  p99 ${pct(0.99)}  max ${pct(1)}`);
  for (const s of [...recvSockets, ...sendSockets]) s.close();
} finally {
  await server.stop();
}
