import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageRecord } from "../../core/protocol/index.ts";
import { ok, TestSocket } from "./harness.ts";
import { allRecords, createChannel, deletionBody, type Person, person, rotate, seal } from "./people.ts";

/**
 * An acknowledged message is a promise to the sender: it survives `kill -9` of the server. This runs
 * the real entry point (server/main.ts) as a child process with the default durability
 * (WSYNC_SQLITE_SYNC unset, so "full"), kills it without warning right after the last ack, restarts it
 * on the same data directory and reads everything back.
 */

const repoRoot = join(import.meta.dir, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "wsync-crash-"));
const running = new Set<Bun.Subprocess>();

afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

interface Server {
  url: string;
  wsUrl: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
}

async function startServer(): Promise<Server> {
  const port = freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
  };
  // The defaults under test: full sync, SQLite storage, the JWT secret kept in the data dir.
  for (const k of [
    "WSYNC_SQLITE_SYNC",
    "WSYNC_JWT_SECRET",
    "WSYNC_DATABASE_URL",
    "WSYNC_REDIS_URL",
    "WSYNC_PUBLIC_URL",
  ])
    delete env[k];
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: repoRoot,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(proc);
  const url = `http://127.0.0.1:${port}`;
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!out.includes(`wsync listening on ${url}`)) {
    const timeout = Bun.sleep(Math.max(0, deadline - Date.now())).then(() => "timeout" as const);
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk === "timeout" || chunk.done) {
      proc.kill("SIGKILL");
      const err = await new Response(proc.stderr).text();
      throw new Error(`server did not start: stdout ${JSON.stringify(out)} stderr ${JSON.stringify(err)}`);
    }
    out += decoder.decode(chunk.value, { stream: true });
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => {});
  return { url, wsUrl: `ws://127.0.0.1:${port}/api/ws`, proc };
}

async function kill9(server: Server): Promise<void> {
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  running.delete(server.proc);
  expect(server.proc.signalCode).toBe("SIGKILL");
}

test("every acknowledged message survives kill -9, and the server carries on after a restart", async () => {
  let server = await startServer();
  const alice = await person(server.url, "alice");
  const bob = await person(server.url, "bob");
  const { channel } = await createChannel(server.url, alice, "public");
  await ok(server.url, "joinChannel", { channelUri: channel.uri }, bob.token);
  const r = await rotate(server.url, bob, channel);
  expect(r.res.status).toBe(200);
  const epoch = { epochId: r.epochId, epochNumber: r.epochNumber, epochKey: r.epochKey };

  const sockets = [
    await TestSocket.connect(server.wsUrl, alice.token),
    await TestSocket.connect(server.wsUrl, bob.token),
  ];
  const acked: MessageRecord[] = [];
  const send = async (who: Person, socket: TestSocket, text: string) => {
    const frame = await socket.request("channel:message", await seal(who, channel, epoch, text));
    if (frame.type !== "ack") throw new Error(`send refused: ${JSON.stringify(frame.data)}`);
    const record = (frame.data as { record: MessageRecord }).record;
    acked.push(record);
    return record;
  };

  // One at a time, alternating senders…
  for (let i = 0; i < 10; i++)
    await send(i % 2 ? bob : alice, sockets[i % 2] as TestSocket, `one by one ${i}`);
  // …one the owner deletes…
  const deleted = await send(alice, sockets[0] as TestSocket, "delete me");
  await ok(server.url, "deleteMessage", await deletionBody(alice, channel, deleted.uri), alice.token);
  acked.pop();
  // …then a burst in flight on both sockets, and the kill the moment the last ack is in.
  const sealed = await Promise.all(
    Array.from({ length: 30 }, (_, i) => seal(i % 2 ? bob : alice, channel, epoch, `burst ${i}`)),
  );
  const frames = await Promise.all(
    sealed.map((body, i) => (sockets[i % 2] as TestSocket).request("channel:message", body)),
  );
  await kill9(server);
  for (const f of frames) {
    expect(f.type).toBe("ack");
    acked.push((f.data as { record: MessageRecord }).record);
  }
  expect(acked).toHaveLength(40);
  expect(new Set(acked.map((m) => m.seq)).size).toBe(40);

  server = await startServer();
  // Tokens issued before the crash still work: sessions and the signing secret were on disk too.
  const stored = await allRecords(server.url, alice, channel.uri);
  const byUri = new Map(stored.map((rec) => [rec.uri, rec]));
  for (const m of acked) {
    const got = byUri.get(m.uri) as MessageRecord | undefined;
    expect(got?.seq).toBe(m.seq);
    expect(got?.value.content).toBe(m.value.content);
    expect(got?.value.author).toEqual(m.value.author);
  }
  // The deleted message survives only as its tombstone, with the signed deletion (protocol §7).
  const tombstone = byUri.get(deleted.uri) as MessageRecord | undefined;
  expect(tombstone?.value.content).toBe("");
  expect((tombstone?.value.deletion?.deletion as { uri?: string } | undefined)?.uri).toBe(deleted.uri);
  // Nothing that was not acknowledged appeared either: the acked messages, the tombstone and the join notice.
  const messages = stored.filter(
    (rec) => rec.value.$type === "chat.wsync.message" && rec.uri !== deleted.uri,
  );
  expect(messages).toHaveLength(acked.length);
  const since = await ok(
    server.url,
    "getMessages",
    { channelUri: channel.uri, since: 0, limit: 100 },
    bob.token,
  );
  expect(since.records.map((rec) => rec.seq)).toEqual(stored.map((rec) => rec.seq)); // both oldest first

  // The server works normally: no rotation needed, and the sequence carries on where it stopped.
  const info = await ok(server.url, "getEpochInfo", { channelUri: channel.uri }, alice.token);
  expect(info.epochInfo).toMatchObject({ epochId: epoch.epochId, rotationRequired: false });
  const lastSeq = Math.max(...stored.map((rec) => rec.seq));
  const aliceAgain = await TestSocket.connect(server.wsUrl, alice.token);
  const bobAgain = await TestSocket.connect(server.wsUrl, bob.token);
  await bobAgain.request("channel:join", { channelUri: channel.uri });
  const after = await aliceAgain.request(
    "channel:message",
    await seal(alice, channel, epoch, "after the crash"),
  );
  expect(after.type).toBe("ack");
  const record = (after.data as { record: MessageRecord }).record;
  expect(record.seq).toBe(lastSeq + 1);
  const echoed = await bobAgain.waitFor(
    (f) => f.type === "channel:message" && (f.data.record as MessageRecord).uri === record.uri,
  );
  expect((echoed.data.record as MessageRecord).value.content).toBe(record.value.content);
  // A retry of a message acknowledged before the crash is still recognised as the same message.
  const first = acked[0] as MessageRecord;
  const retry = await ok(
    server.url,
    "send",
    {
      channelUri: channel.uri,
      content: first.value.content,
      clientMsgId: JSON.parse(first.value.content).clientMsgId,
    },
    alice.token,
  );
  expect(retry.record).toMatchObject({ uri: first.uri, seq: first.seq });

  for (const s of [...sockets, aliceAgain, bobAgain]) s.close();
  await kill9(server);
}, 60_000);
