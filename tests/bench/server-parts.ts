/**
 * Benchmark: where one message's and one join's server CPU goes, part by part, in one process
 * (issue 35 goal 1: "find where the ~70–120 µs go"). `npm run bench` measures the whole server
 * against the IRC servers; this takes the path apart without sockets, so each figure is the part's
 * own, with no fan-out, frames on the wire or load generator in it:
 *
 * 1. the message path of a socket's `channel:message` after its frame is parsed (MessageService.queue,
 *    the group commit on the SQLite writer thread, settle: record, JSON, publish to nobody), in
 *    batches of 100 as a busy server commits them; synchronous=FULL, the server's default;
 * 2. the storage's appendMessage alone (the writer thread, then the main thread's commit);
 * 3. the floor under both: a bare INSERT of the same row into a table shaped like `timeline`, with its
 *    indexes added one at a time (no checks, no sequence number, no thread);
 * 4. the frame's JavaScript: JSON.parse of the frame and of its content, the TypeBox checks,
 *    JSON.stringify of the record;
 * 5. the join of a channel of 10 by a member (`channel:join` over a socket): each query it makes
 *    (`npm run bench:connect-parts` measures the same join over real sockets);
 * 6. the page writes under a busy timeline: the table as it is, 100 channels each with one author
 *    who already wrote 400 messages, 400 rows a commit (a busy server's batch), user and system CPU
 *    apart; with the WAL checkpointed every 1,000 pages (SQLite's default) and every 10,000 (the
 *    server's), and without the index on the client's random clientMsgId.
 *
 * CPU is the process's user + system time (every thread) per item. Usage:
 *   npm run bench:server-parts [-- messages=20000]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { countArg } from "../../bench/lib/args.ts";
import { toHex } from "../../core/crypto/bytes.ts";
import { randomBytes } from "../../core/crypto/random.ts";
import { ClientFrames, EncryptedContent, Frame, WsEvent } from "../../core/protocol/index.ts";
import type { ChannelRef } from "../../server/services/message-service.ts";
import { guardStorage } from "../../server/storage/faults.ts";
import { openSqliteStorage } from "../../server/storage/sqlite/index.ts";
import { ok, startTestServer } from "../server/harness.ts";
import { createChannel, type Person, person, rotate, seal } from "../server/people.ts";

const MESSAGES = countArg("messages", 20_000, 1000);
const BATCH = 100;

const report = (part: string, value: string) => console.log(`${part.padEnd(64)} ${value}`);

/** CPU (all threads) and wall time per item of `items` calls of `run` in batches. */
async function perItem(items: number, run: (n: number) => Promise<void>): Promise<string> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run(items);
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / items;
  const wall = ((performance.now() - t0) * 1000) / items;
  return `${cpu.toFixed(1)} µs CPU, ${wall.toFixed(1)} µs wall`;
}

/** The median of 5 runs of `run`, each the µs per call of `n` calls (after a warm-up run). */
async function medianOf5(
  run: (n: number) => Promise<void> | void,
  n: number,
  digits: number,
): Promise<string> {
  await run(n / 10);
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    await run(n);
    runs.push(((performance.now() - t) * 1000) / n);
  }
  runs.sort((a, b) => a - b);
  return `${(runs[2] as number).toFixed(digits)} µs`;
}

/** µs per call of a synchronous `f` (median of 5 runs). */
const perCall = (f: () => unknown, n = 20_000) =>
  medianOf5(
    (k) => {
      for (let i = 0; i < k; i++) f();
    },
    n,
    2,
  );

/** µs per call of an async `f`, awaited one at a time (median of 5 runs). */
const perAwait = (f: (i: number) => Promise<unknown>, n = 5000) =>
  medianOf5(
    async (k) => {
      for (let i = 0; i < k; i++) await f(i);
    },
    n,
    1,
  );

const srv = await startTestServer({ env: { WSYNC_RATE_LIMIT_SCALE: "0" }, synchronous: "full" });
try {
  const s = srv.services;
  const people: Person[] = [];
  for (let i = 0; i < 10; i++) people.push(await person(srv.url, `parts${i}`));
  const owner = people[0] as Person;
  const made = await createChannel(srv.url, owner, "public");
  for (const p of people.slice(1))
    await ok(srv.url, "joinChannel", { channelUri: made.channel.uri }, p.token);
  const ctx = await s.auth.authenticate(`Bearer ${owner.token}`);
  const ctxs = await Promise.all(people.map((p) => s.auth.authenticate(`Bearer ${p.token}`)));
  const joined: ChannelRef = { id: made.channel.id, uri: made.channel.uri, direct: false };
  // The next epoch, for the members who joined after the first.
  const r = await rotate(srv.url, owner, made.channel);
  if (r.res.status !== 200) throw new Error(`epoch 2 refused: ${JSON.stringify(r.res.body)}`);
  const epoch = { epochId: r.epochId, epochNumber: r.epochNumber, epochKey: r.epochKey };
  // A 400-character message, as the suite sends (a 1.4 KB frame).
  const needed = MESSAGES * 3 + 3 * BATCH * 10 + 10;
  console.log(`sealing ${needed} messages…`);
  const bodies: Awaited<ReturnType<typeof seal>>[] = [];
  for (let i = 0; i < needed; i++)
    bodies.push(await seal(owner, made.channel, epoch, `${i} ${"x".repeat(392)}`));
  let next = 0;
  const body = () => bodies[next++] as (typeof bodies)[number];
  console.log(
    `${MESSAGES} messages per part, in batches of ${BATCH}; machine: ${navigator.hardwareConcurrency} cores\n`,
  );

  // 1. The message path without sockets.
  const queueRun = async (n: number) => {
    for (let done = 0; done < n; done += BATCH) {
      const sents = [];
      for (let j = 0; j < BATCH; j++) sents.push((await s.messages.queue(ctx, body(), joined)).sent);
      await Promise.all(sents);
    }
  };
  await queueRun(BATCH * 10);
  report("1. message path: queue + group commit + settle (no sockets)", await perItem(MESSAGES, queueRun));

  // 2. The storage's append alone, on the writer thread and on the main thread.
  let rk = 0;
  const appendRun = (storage: typeof srv.storage) => async (n: number) => {
    for (let done = 0; done < n; done += BATCH) {
      const all = [];
      for (let j = 0; j < BATCH; j++) {
        const b = body();
        all.push(
          storage.timeline.appendMessage(
            {
              channelId: joined.id,
              rkey: `bench${(rk++).toString(36).padStart(9, "0")}`,
              authorDid: ctx.did,
              authorHandle: ctx.handle,
              clientMsgId: b.clientMsgId,
              content: b.content,
              createdAt: Date.now(),
            },
            epoch.epochId,
          ),
        );
      }
      const results = await Promise.all(all);
      if (results.some((r) => r.kind !== "ok")) throw new Error("an append was refused");
    }
  };
  await appendRun(srv.storage)(BATCH * 10);
  report("2a. storage appendMessage, writer thread", await perItem(MESSAGES, appendRun(srv.storage)));
  const inThread = openSqliteStorage({
    path: srv.config.sqlitePath,
    synchronous: "full",
    writerThread: false,
  });
  try {
    await appendRun(inThread)(BATCH * 10);
    report("2b. storage appendMessage, main thread", await perItem(MESSAGES, appendRun(inThread)));
  } finally {
    await inThread.close();
  }

  // 3. The floor: a bare INSERT, the timeline's indexes added one at a time.
  const content = (bodies[0] as (typeof bodies)[number]).content;
  for (const [label, indexes] of [
    ["primary key (channel_id, seq) only", []],
    ["+ UNIQUE rkey", ["rkey"]],
    ["+ UNIQUE (author_did, client_msg_id): the table as it is", ["rkey", "cmid"]],
    ["+ (author_did): the table before migration 16", ["rkey", "cmid", "author"]],
  ] as [string, string[]][]) {
    const dir = mkdtempSync(join(tmpdir(), "wsync-parts-"));
    const db = new Database(join(dir, "t.db"));
    try {
      db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
      db.exec(`CREATE TABLE timeline (channel_id TEXT NOT NULL, seq INTEGER NOT NULL,
        rkey TEXT NOT NULL ${indexes.includes("rkey") ? "UNIQUE" : ""}, kind TEXT NOT NULL, author_did TEXT NOT NULL,
        author_handle TEXT NOT NULL, client_msg_id TEXT, content TEXT, created_at INTEGER NOT NULL,
        PRIMARY KEY (channel_id, seq))`);
      if (indexes.includes("cmid"))
        db.exec("CREATE UNIQUE INDEX tcm ON timeline(author_did, client_msg_id) WHERE kind = 'message'");
      if (indexes.includes("author")) db.exec("CREATE INDEX ta ON timeline(author_did)");
      const insert = db.prepare(
        `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at)
         VALUES (?, ?, ?, 'message', ?, ?, ?, ?, ?)`,
      );
      // The keys made beforehand: only the INSERT is timed.
      const keys = Array.from({ length: MESSAGES + BATCH * 10 }, (_, i) => ({
        channel: `channel${i % 100}`,
        rkey: `r${i.toString(36).padStart(9, "0")}`,
        did: `did:plc:bench${(i * 7919) % 1000}`,
        cmid: crypto.randomUUID().replaceAll("-", ""),
      }));
      let seq = 0;
      const insertRun = async (n: number) => {
        for (let done = 0; done < n; done += BATCH)
          db.transaction(() => {
            for (let j = 0; j < BATCH; j++) {
              const k = keys[seq] as (typeof keys)[number];
              seq++;
              insert.run(k.channel, seq, k.rkey, k.did, "user.test", k.cmid, content, Date.now());
            }
          }).immediate();
      };
      await insertRun(BATCH * 10);
      report(`3. bare INSERT, ${label}`, await perItem(MESSAGES, insertRun));
      insert.finalize();
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // 4. The frame's JavaScript.
  const b0 = bodies[0] as (typeof bodies)[number];
  const frameText = JSON.stringify({ type: WsEvent.channelMessage, id: "f1", data: b0 });
  const frameCheck = TypeCompiler.Compile(Frame);
  const dataCheck = TypeCompiler.Compile(ClientFrames[WsEvent.channelMessage]);
  const contentCheck = TypeCompiler.Compile(EncryptedContent);
  const parsedContent = JSON.parse(b0.content);
  const sent = await (await s.messages.queue(ctx, body(), joined)).sent;
  report(
    `4a. JSON.parse of the frame (${frameText.length} bytes)`,
    await perCall(() => JSON.parse(frameText)),
  );
  report(
    "4b. JSON.parse of the frame + TypeBox checks of it and its data",
    await perCall(() => {
      const f = JSON.parse(frameText);
      return frameCheck.Check(f) && dataCheck.Check(f.data);
    }),
  );
  report("4c. TypeBox: the frame's data only", await perCall(() => dataCheck.Check(b0)));
  report(
    "4d. JSON.parse of the content + its TypeBox check",
    await perCall(() => contentCheck.Check(JSON.parse(b0.content))),
  );
  report("4e. TypeBox: the content only", await perCall(() => contentCheck.Check(parsedContent)));
  report("4f. JSON.stringify of the record", await perCall(() => JSON.stringify(sent.record)));

  // 5. A member's join of a channel of 10, and each query it makes.
  const id = joined.id;
  const st = srv.storage;
  const who = (i: number) => ctxs[i % ctxs.length] as (typeof ctxs)[number];
  report(
    "5a. auth: access token checked, session and account read",
    await perAwait((i) => s.auth.authenticate(`Bearer ${(people[i % 10] as Person).token}`)),
  );
  report(
    "5b. channels.join by a member (summary, member list)",
    await perAwait((i) => s.channels.join(who(i), { channelUri: joined.uri })),
  );
  report("5c. epochs.info (the epoch info of channel:joined)", await perAwait(() => s.epochs.info(id)));
  report("5d.   storage channels.get", await perAwait(() => st.channels.get(id)));
  report("5e.   storage channels.member", await perAwait((i) => st.channels.member(id, who(i).did)));
  report("5f.   storage channels.summary", await perAwait((i) => st.channels.summary(id, who(i).did)));
  report(
    "5g.   storage channels.members (10 rows, ATProto marks)",
    await perAwait(() => st.channels.members(id)),
  );
  report(
    "5h.   storage atproto.linked (10 dids; not in a join now)",
    await perAwait(() => st.atproto.linked(ctxs.map((c) => c.did))),
  );
  report("5i.   storage epochs.state (one statement)", await perAwait(() => st.epochs.state(id)));
  const guarded = guardStorage(st, () => undefined);
  report(
    "5k.   storage channels.get through the storage-fault guard",
    await perAwait(() => guarded.channels.get(id)),
  );
  const answer = await s.channels.join(who(0), { channelUri: joined.uri });
  const info = await s.epochs.info(id);
  const joinedFrame = {
    type: WsEvent.channelJoined,
    data: { channelUri: joined.uri, ...answer, epochInfo: info },
  };
  report(
    `5j. JSON.stringify of channel:joined (${JSON.stringify(joinedFrame).length} bytes)`,
    await perCall(() => JSON.stringify(joinedFrame)),
  );

  // 6. The page writes of a busy timeline.
  for (const [label, checkpoint, cmid] of [
    ["checkpoint every 1,000 pages", 1000, true],
    ["checkpoint every 10,000 pages (the server's)", 10_000, true],
    ["10,000 pages, no clientMsgId index", 10_000, false],
  ] as [string, number, boolean][])
    report(`6. timeline, 400 rows a commit, ${label}`, busyTimeline(content, checkpoint, cmid));
} finally {
  await srv.stop();
}

/**
 * CPU per row of inserting MESSAGES rows in commits of 400 into a timeline shaped as the server's
 * (record keys in time order as `newRkey` makes them, clientMsgIds random as clients make them) that
 * already holds 400 rows for each of 100 channels, one author each; user and system time apart.
 */
function busyTimeline(content: string, checkpointPages: number, clientMsgIndex: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), "wsync-parts-"));
  const db = new Database(join(dir, "t.db"));
  try {
    db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
    db.exec(`PRAGMA wal_autocheckpoint=${checkpointPages}`);
    db.exec(`CREATE TABLE timeline (channel_id TEXT NOT NULL, seq INTEGER NOT NULL,
      rkey TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, author_did TEXT NOT NULL,
      author_handle TEXT NOT NULL, client_msg_id TEXT, content TEXT, created_at INTEGER NOT NULL,
      PRIMARY KEY (channel_id, seq))`);
    if (clientMsgIndex)
      db.exec("CREATE UNIQUE INDEX tcm ON timeline(author_did, client_msg_id) WHERE kind = 'message'");
    const insert = db.prepare(
      `INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at)
       VALUES (?, ?, ?, 'message', ?, ?, ?, ?, ?)`,
    );
    const seqs = new Array<number>(100).fill(0);
    let n = 0;
    const write = (rows: number) => {
      for (let done = 0; done < rows; done += 400)
        db.transaction(() => {
          for (let j = 0; j < 400; j++, n++) {
            const c = n % 100;
            seqs[c] = (seqs[c] as number) + 1;
            insert.run(
              `3lchannel${c}`,
              seqs[c] as number,
              `3l${(1e12 + n).toString(36)}${toHex(randomBytes(2))}`,
              `did:plc:author${c.toString().padStart(16, "0")}`,
              "user.test",
              toHex(randomBytes(16)),
              content,
              Date.now(),
            );
          }
        }).immediate();
    };
    write(400 * 100);
    const c0 = process.cpuUsage();
    write(MESSAGES);
    const c = process.cpuUsage(c0);
    insert.finalize();
    return `${((c.user + c.system) / MESSAGES).toFixed(1)} µs CPU (user ${(c.user / MESSAGES).toFixed(1)}, system ${(c.system / MESSAGES).toFixed(1)})`;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
