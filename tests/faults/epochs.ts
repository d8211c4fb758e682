/**
 * Fault 5, epochs and sends at once: several members of one channel rotate (v2 epochs, as a client
 * does: tests/server/people.ts rotate) and send (v2 contents sealed under the newest epoch they
 * know) concurrently, over WebSocket and HTTP. Afterwards:
 * - no message is stored under an epoch that was not current when it was stored: along the seq
 *   order epoch numbers never go back, and no message sent after epoch N+1 was acknowledged to its
 *   creator is stored under epoch N or older;
 * - the channel's seqs have no gaps, and every ack matches the stored record (uri, seq, content).
 */
import type { MessageRecord } from "../../core/protocol/index.ts";
import { call, ok } from "../server/harness.ts";
import { allRecords, createChannel, type Person, person, rotate, seal } from "../server/people.ts";
import { type FaultResult, FaultSocket, result, SeededRng, ServerProcess, seqProblems } from "./lib.ts";

export interface EpochsOptions {
  members: number;
  /** Rotations each member attempts. */
  rotationsPerMember: number;
  seed?: number;
}

interface Epoch {
  epochId: string;
  epochNumber: number;
  epochKey: Uint8Array;
  /** performance.now() when its creator had the 200 (the epoch was committed before that). */
  committedBy: number;
}

export async function runEpochs(opts: EpochsOptions): Promise<FaultResult> {
  const r = result("epochs");
  const rng = new SeededRng(opts.seed ?? 0xe90c);
  const server = await ServerProcess.start();
  try {
    const people: Person[] = [];
    for (let i = 0; i < opts.members; i++) people.push(await person(server.url, `ep${i}`));
    const [owner, ...rest] = people as [Person, ...Person[]];
    const created = await createChannel(server.url, owner, "public", "epochs");
    const { channel } = created;
    for (const p of rest) await ok(server.url, "joinChannel", { channelUri: channel.uri }, p.token);
    // Shared knowledge of the epochs (in a real client each member unwraps the key; the server cannot tell).
    const epochs = new Map<string, Epoch>();
    let latest: Epoch = { ...created, epochNumber: 1, committedBy: performance.now() };
    epochs.set(latest.epochId, latest);
    const first = await rotate(server.url, rest.at(-1) ?? owner, channel);
    if (first.res.status !== 200) throw new Error(`rotation refused: ${JSON.stringify(first.res.body)}`);
    latest = { ...first, committedBy: performance.now() };
    epochs.set(latest.epochId, latest);

    const acks: { record: MessageRecord; sentAt: number; epochNumber: number }[] = [];
    let rotated = 0;
    let rotationConflicts = 0;
    let stale = 0;
    const other: string[] = [];
    let rotating = opts.members;

    const rotator = async (who: Person) => {
      for (let i = 0; i < opts.rotationsPerMember; i++) {
        await Bun.sleep(rng.int(40));
        const x = await rotate(server.url, who, channel);
        if (x.res.status === 200) {
          rotated++;
          const e: Epoch = { ...x, committedBy: performance.now() };
          epochs.set(e.epochId, e);
          if (e.epochNumber > latest.epochNumber) latest = e;
        } else if (x.res.body.error === "EpochConflict") rotationConflicts++;
        else other.push(`rotate ${x.res.status} ${x.res.body.error}: ${x.res.body.message}`);
      }
      rotating--;
    };

    const sender = async (who: Person, over: "ws" | "http") => {
      const socket = over === "ws" ? await FaultSocket.connect(server.wsUrl, who.token) : null;
      let n = 0;
      while (rotating > 0) {
        const epoch = latest;
        const body = await seal(who, channel, epoch, `${over} ${who.name} ${++n}`);
        const sentAt = performance.now();
        let record: MessageRecord | null = null;
        let error: string | undefined;
        let message: string | undefined;
        if (socket) {
          const f = await socket.request("channel:message", body);
          if (f.type === "ack") record = (f.data as { record: MessageRecord }).record;
          else ({ error, message } = f.data);
        } else {
          const res = await call(server.url, "send", body, who.token);
          if (res.status === 200) record = res.body.record as MessageRecord;
          else ({ error, message } = res.body);
        }
        if (record) acks.push({ record, sentAt, epochNumber: epoch.epochNumber });
        else if (error === "EpochConflict") stale++;
        else other.push(`send ${over} ${error}: ${message}`);
      }
      socket?.close();
    };

    await Promise.all(people.flatMap((p) => [rotator(p), sender(p, "ws"), sender(p, "http")]));

    const stored = await allRecords(server.url, owner, channel.uri);
    const messages = stored.filter((x): x is MessageRecord => x.value.$type === "chat.wsync.message");
    const ordered = [...epochs.values()].sort((a, b) => a.epochNumber - b.epochNumber);
    let nonCurrent = 0;
    let unknownEpoch = 0;
    let lastEpoch = 0;
    const ackByUri = new Map(acks.map((a) => [a.record.uri, a]));
    for (const m of messages) {
      const content = JSON.parse(m.value.content) as { epochId: string };
      const e = epochs.get(content.epochId);
      if (!e) {
        unknownEpoch++;
        continue;
      }
      // Along the seq order epoch numbers never go back…
      if (e.epochNumber < lastEpoch) nonCurrent++;
      lastEpoch = Math.max(lastEpoch, e.epochNumber);
      // …and nothing sent after the next epoch was committed is stored under this one.
      const next = ordered.find((x) => x.epochNumber === e.epochNumber + 1);
      const a = ackByUri.get(m.uri);
      if (next && a && a.sentAt > next.committedBy) nonCurrent++;
    }
    let mismatched = 0;
    const byUri = new Map(messages.map((m) => [m.uri, m]));
    for (const a of acks) {
      const got = byUri.get(a.record.uri);
      if (!got || got.seq !== a.record.seq || got.value.content !== a.record.value.content) mismatched++;
    }
    const seq = seqProblems(stored.map((x) => x.seq));
    const info = await ok(server.url, "getEpochInfo", { channelUri: channel.uri }, owner.token);
    r.figures = {
      members: opts.members,
      rotations: rotated,
      rotation_conflicts: rotationConflicts,
      final_epoch: info.epochInfo.epochNumber,
      acked: acks.length,
      stored: messages.length,
      stale_refused: stale,
      non_current: nonCurrent,
      unknown_epoch: unknownEpoch,
      ack_mismatch: mismatched,
      gaps: seq.gaps,
    };
    if (info.epochInfo.epochId !== latest.epochId)
      r.fail("the server's current epoch is not the newest committed");
    if (nonCurrent) r.fail(`${nonCurrent} messages stored under a non-current epoch`);
    if (unknownEpoch) r.fail(`${unknownEpoch} messages under an epoch nobody committed`);
    if (mismatched) r.fail(`${mismatched} acks do not match a stored record`);
    if (messages.length !== acks.length) r.fail(`${acks.length} acked but ${messages.length} stored`);
    if (seq.gaps || seq.dup) r.fail(`seq gaps ${seq.gaps}, repeated ${seq.dup}`);
    if (other.length) r.fail(`${other.length} unexpected refusals: ${other.slice(0, 3).join(" | ")}`);
    if (rotated < 2) r.fail(`only ${rotated} rotations succeeded: no concurrency was exercised`);
    return r;
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const { formatResult } = await import("./lib.ts");
  console.log(
    formatResult(await runEpochs({ members: 4, rotationsPerMember: Number(process.argv[2] ?? 10) })),
  );
}
