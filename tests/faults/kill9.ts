/**
 * Fault 1, kill -9 under load: senders keep sending over WebSocket and HTTP while the server is
 * killed with SIGKILL several times and started again on the same data dir and port. Each sender
 * retries its current message (same clientMsgId) until it is acknowledged, as a client does, so at
 * the end every message ever sent must be stored exactly once: acked vs stored gives 0 lost, 0
 * duplicated, 0 extra, and the channel's seqs have no gaps.
 */
import type { MessageRecord } from "../../core/protocol/index.ts";
import { call, ok } from "../server/harness.ts";
import { allRecords, createChannel, type Person, person, rotate, seal } from "../server/people.ts";
import {
  debug,
  type FaultResult,
  FaultSocket,
  result,
  SeededRng,
  ServerProcess,
  seqProblems,
} from "./lib.ts";

export interface Kill9Options {
  kills: number;
  /** Uptime between restart and the next kill is uniform in [minUpMs, maxUpMs) (fixed seed). */
  minUpMs?: number;
  maxUpMs?: number;
  seed?: number;
}

type Body = Awaited<ReturnType<typeof seal>>;

export async function runKill9(opts: Kill9Options): Promise<FaultResult> {
  const r = result("kill9");
  const rng = new SeededRng(opts.seed ?? 0x9_1111);
  const server = await ServerProcess.start();
  try {
    const people = [
      await person(server.url, "k9a"),
      await person(server.url, "k9b"),
      await person(server.url, "k9c"),
    ];
    const [owner, ...rest] = people as [Person, ...Person[]];
    const { channel } = await createChannel(server.url, owner, "public", "kill9");
    for (const p of rest) await ok(server.url, "joinChannel", { channelUri: channel.uri }, p.token);
    const e = await rotate(server.url, rest.at(-1) as Person, channel);
    if (e.res.status !== 200) throw new Error(`rotation refused: ${JSON.stringify(e.res.body)}`);
    const epoch = { epochId: e.epochId, epochNumber: e.epochNumber, epochKey: e.epochKey };

    /** clientMsgId → the record its (last) ack carried. */
    const acked = new Map<string, MessageRecord>();
    let ackMismatch = 0;
    let refused = 0;
    let attempts = 0;
    const refusals: string[] = [];
    const onAck = (body: Body, record: MessageRecord) => {
      const prev = acked.get(body.clientMsgId);
      if (prev && (prev.seq !== record.seq || prev.uri !== record.uri)) ackMismatch++;
      acked.set(body.clientMsgId, record);
    };
    const onRefused = (how: string) => {
      refused++;
      if (refusals.length < 5) refusals.push(how);
    };
    let stopping = false;
    let counter = 0;

    const wsSender = async (who: Person) => {
      let socket: FaultSocket | null = null;
      let body: Body | null = null;
      while (!stopping || body) {
        body ??= await seal(who, channel, epoch, `ws ${who.name} ${++counter}`);
        try {
          socket ??= await FaultSocket.connect(server.wsUrl, who.token, { timeoutMs: 5000 });
          attempts++;
          const f = await socket.request("channel:message", body, 5000);
          if (f.type === "ack") {
            onAck(body, (f.data as { record: MessageRecord }).record);
            body = null;
          } else {
            onRefused(`ws ${f.data.error}: ${f.data.message}`);
            await Bun.sleep(50);
          }
        } catch {
          // The server is down or restarting: reconnect and send the same message again.
          socket?.close();
          socket = null;
          await Bun.sleep(30);
        }
      }
      socket?.close();
    };

    const httpSender = async (who: Person) => {
      let body: Body | null = null;
      while (!stopping || body) {
        body ??= await seal(who, channel, epoch, `http ${who.name} ${++counter}`);
        try {
          attempts++;
          const res = await call(server.url, "send", body, who.token);
          if (res.status === 200) {
            onAck(body, res.body.record as MessageRecord);
            body = null;
          } else {
            onRefused(`http ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
            await Bun.sleep(50);
          }
        } catch {
          await Bun.sleep(30);
        }
      }
    };

    debug("kill9: setup done");
    const senders = people.flatMap((p) => [wsSender(p), httpSender(p)]);
    const restartMs: number[] = [];
    const minUp = opts.minUpMs ?? 400;
    const maxUp = opts.maxUpMs ?? 1500;
    for (let k = 0; k < opts.kills; k++) {
      await Bun.sleep(minUp + rng.int(maxUp - minUp));
      const ackedBefore = acked.size;
      await server.kill("SIGKILL");
      debug(`kill9: killed (${acked.size} acked)`);
      const t0 = performance.now();
      await server.restart();
      restartMs.push(performance.now() - t0);
      if (k === 0 && ackedBefore === 0) r.fail("nothing was acknowledged before the first kill");
    }
    await Bun.sleep(minUp);
    stopping = true;
    await Promise.all(senders);
    debug("kill9: senders done");

    const stored = await allRecords(server.url, owner, channel.uri);
    const messages = stored.filter((x): x is MessageRecord => x.value.$type === "chat.wsync.message");
    const byMsgId = new Map<string, MessageRecord[]>();
    for (const m of messages) {
      const id = (JSON.parse(m.value.content) as { clientMsgId: string }).clientMsgId;
      byMsgId.set(id, [...(byMsgId.get(id) ?? []), m]);
    }
    let lost = 0;
    for (const [id, rec] of acked) {
      const got = byMsgId.get(id)?.[0];
      if (!got || got.seq !== rec.seq || got.uri !== rec.uri || got.value.content !== rec.value.content)
        lost++;
    }
    const dup = [...byMsgId.values()].reduce((n, list) => n + list.length - 1, 0) + ackMismatch;
    const extra = [...byMsgId.keys()].filter((id) => !acked.has(id)).length;
    const seq = seqProblems(stored.map((x) => x.seq));
    r.figures = {
      kills: opts.kills,
      acked: acked.size,
      found: messages.length,
      lost,
      dup,
      extra,
      gaps: seq.gaps,
      attempts,
      refused,
      restart_ms_avg: Math.round(restartMs.reduce((a, b) => a + b, 0) / Math.max(1, restartMs.length)),
    };
    if (lost) r.fail(`${lost} acknowledged messages lost`);
    if (dup) r.fail(`${dup} duplicated messages`);
    if (extra) r.fail(`${extra} stored messages never acknowledged (a sender retries until acked)`);
    if (seq.gaps || seq.dup) r.fail(`seq gaps ${seq.gaps}, repeated seqs ${seq.dup}`);
    if (refused) r.fail(`${refused} sends refused: ${refusals.join(" | ")}`);
    if (acked.size < opts.kills * 5) r.fail(`only ${acked.size} messages acknowledged`);
    return r;
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(formatResult(await runKill9({ kills: Number(process.argv[2] ?? 2) })));
}
