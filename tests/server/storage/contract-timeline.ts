import { describe, expect, test } from "bun:test";
import type { TimelineRow } from "../../../server/storage/types.ts";
import { newClientMsgId, newEpochId, newRkey, signedDeletion, type World } from "./fixtures.ts";

const seqs = (rows: TimelineRow[]) => rows.map((r) => r.seq);

function expectConsecutive(values: number[]): void {
  for (let i = 1; i < values.length; i++) expect(values[i]).toBe((values[i - 1] as number) + 1);
}

export function timelineContract(w: () => World): void {
  describe("timeline", () => {
    test("appendMessage stores the row as given and assigns strictly increasing seqs", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const input = w().messageInput(channel, owner, epochId);
      const r = await s.timeline.appendMessage(input, epochId);
      expect(r.kind).toBe("ok");
      if (r.kind !== "ok") return;
      expect(r.row).toEqual({ ...input, kind: "message", seq: r.row.seq });
      expect(Number.isSafeInteger(r.row.seq)).toBe(true);
      const more = [];
      for (let i = 0; i < 5; i++) more.push(await w().message(channel, i % 2 ? owner : other, epochId));
      expectConsecutive([r.row.seq, ...more.map((m) => m.seq)]);
      expect(await s.timeline.byRkey(input.rkey)).toEqual(r.row);
      expect(await s.timeline.byClientMsgId(owner.did, input.clientMsgId)).toEqual(r.row);
    });

    test("each channel has its own sequence", async () => {
      const a = await w().room();
      const b = await w().room();
      const aSeqs: number[] = [];
      const bSeqs: number[] = [];
      for (let i = 0; i < 4; i++) {
        aSeqs.push((await w().message(a.channel, a.owner, a.epochId)).seq);
        aSeqs.push((await w().message(a.channel, a.other, a.epochId)).seq);
        bSeqs.push((await w().message(b.channel, b.owner, b.epochId)).seq);
      }
      expectConsecutive(aSeqs);
      expectConsecutive(bSeqs);
      expect(bSeqs[0]).toBe(aSeqs[0]);
    });

    test("appendNotify shares the channel's sequence, is not a message, and is allowed while rotation is pending", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const m1 = await w().message(channel, owner, epochId);
      const carol = await w().user();
      await w().join(channel, carol);
      expect((await s.epochs.state(channel.id)).rotationRequired).toBe(true);
      const rkey = newRkey();
      const at = w().now();
      const n = await s.timeline.appendNotify({
        channelId: channel.id,
        rkey,
        subjectDid: carol.did,
        subjectHandle: carol.handle,
        action: "joined",
        createdAt: at,
      });
      expect(n).toEqual({
        kind: "notify",
        channelId: channel.id,
        seq: m1.seq + 1,
        rkey,
        subjectDid: carol.did,
        subjectHandle: carol.handle,
        action: "joined",
        createdAt: at,
      });
      expect(await s.timeline.byRkey(rkey)).toEqual(n);
      for (const action of ["left", "kicked", "key-changed"] as const) {
        expect((await w().notify(channel, carol, action)).action).toBe(action);
      }
      const e = await w().epoch(channel, carol);
      const m2 = await w().message(channel, carol, e.row.epochId);
      expect(m2.seq).toBe(n.seq + 4);
      expect((await s.channels.summary(channel.id, owner.did))?.messageCount).toBe(2);
    });

    test("a retry of (author, clientMsgId) returns the first row unchanged, even after a rotation", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const first = await w().message(channel, owner, epochId);
      const retry = w().messageInput(channel, owner, epochId, { clientMsgId: first.clientMsgId });
      expect(await s.timeline.appendMessage(retry, epochId)).toEqual({ kind: "duplicate", row: first });

      // The member set changes and a new epoch is made: the ack of the first send was lost, the
      // client retries with the old epoch id; it must get the committed record, not an error.
      const carol = await w().user();
      await w().join(channel, carol);
      const pending = w().messageInput(channel, owner, epochId, { clientMsgId: first.clientMsgId });
      expect(await s.timeline.appendMessage(pending, epochId)).toEqual({ kind: "duplicate", row: first });
      const e2 = await w().epoch(channel, carol);
      const later = w().messageInput(channel, owner, e2.row.epochId, { clientMsgId: first.clientMsgId });
      expect(await s.timeline.appendMessage(later, e2.row.epochId)).toEqual({
        kind: "duplicate",
        row: first,
      });
      expect(await s.timeline.appendMessage(later, epochId)).toEqual({ kind: "duplicate", row: first });

      // Idempotency is per author: someone else's message with the same clientMsgId is its own.
      const theirs = await w().message(channel, other, e2.row.epochId, { clientMsgId: first.clientMsgId });
      expect(theirs.seq).toBe(first.seq + 1);
      expect(await s.timeline.byClientMsgId(owner.did, first.clientMsgId)).toEqual(first);
      expect(await s.timeline.byClientMsgId(other.did, first.clientMsgId)).toEqual(theirs);
      expect(seqs(await s.timeline.page(channel.id, 100, null))).toEqual([theirs.seq, first.seq]);
    });

    test("a clientMsgId is the author's across channels: reuse elsewhere answers the first row", async () => {
      const { s } = w();
      const a = await w().room();
      const b = await w().channel(a.owner);
      const eb = await w().epoch(b, a.owner);
      const first = await w().message(a.channel, a.owner, a.epochId);
      const elsewhere = w().messageInput(b, a.owner, eb.row.epochId, { clientMsgId: first.clientMsgId });
      expect(await s.timeline.appendMessage(elsewhere, eb.row.epochId)).toEqual({
        kind: "duplicate",
        row: first,
      });
      expect(await s.timeline.page(b.id, 10, null)).toEqual([]);
    });

    test("rotation-required before the first epoch; nothing is stored", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const input = w().messageInput(ch, owner, newEpochId());
      expect(await s.timeline.appendMessage(input, newEpochId())).toEqual({ kind: "rotation-required" });
      expect(await s.timeline.page(ch.id, 10, null)).toEqual([]);
      expect(await s.timeline.byRkey(input.rkey)).toBeNull();
      expect(await s.timeline.byClientMsgId(owner.did, input.clientMsgId)).toBeNull();
    });

    for (const change of ["join", "leave", "key change"] as const) {
      test(`rotation-required after a ${change} until the next epoch; the clientMsgId is not used up`, async () => {
        const { s } = w();
        const { owner, other, channel, epochId } = await w().room();
        const before = await w().message(channel, owner, epochId);
        if (change === "join") await w().join(channel, await w().user());
        if (change === "leave") await s.channels.removeMember(channel.id, other.did);
        if (change === "key change") await s.accounts.replacePublicKey(other.did, "bmV3", "ab".repeat(16));
        const input = w().messageInput(channel, owner, epochId);
        expect(await s.timeline.appendMessage(input, epochId)).toEqual({ kind: "rotation-required" });
        expect(await s.timeline.byRkey(input.rkey)).toBeNull();
        expect(seqs(await s.timeline.page(channel.id, 10, null))).toEqual([before.seq]);

        const e2 = await w().epoch(channel, owner);
        const retried = { ...input, rkey: newRkey() };
        const r = await s.timeline.appendMessage(retried, e2.row.epochId);
        expect(r.kind).toBe("ok");
        if (r.kind === "ok") expect(r.row.seq).toBeGreaterThan(before.seq);
      });
    }

    test("stale-epoch when the epoch id is not the current one; nothing is stored", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const e2 = await w().epoch(channel, owner);
      const old = w().messageInput(channel, owner, epochId);
      expect(await s.timeline.appendMessage(old, epochId)).toEqual({
        kind: "stale-epoch",
        currentEpochId: e2.row.epochId,
      });
      const unknown = w().messageInput(channel, owner, epochId);
      expect(await s.timeline.appendMessage(unknown, newEpochId())).toEqual({
        kind: "stale-epoch",
        currentEpochId: e2.row.epochId,
      });
      expect(await s.timeline.page(channel.id, 10, null)).toEqual([]);
      expect(await s.timeline.byClientMsgId(owner.did, old.clientMsgId)).toBeNull();
      expect((await s.timeline.appendMessage(old, e2.row.epochId)).kind).toBe("ok");
    });

    test("page: newest first, below beforeSeq, at most limit rows, messages and notifications", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const rows: TimelineRow[] = [];
      for (let i = 0; i < 7; i++) {
        rows.push(i === 3 ? await w().notify(channel, other) : await w().message(channel, owner, epochId));
      }
      const all = seqs(rows);
      const desc = [...all].reverse();
      expect(await s.timeline.page(channel.id, 100, null)).toEqual([...rows].reverse());
      expect(seqs(await s.timeline.page(channel.id, 3, null))).toEqual(desc.slice(0, 3));
      expect(seqs(await s.timeline.page(channel.id, 3, all[4] as number))).toEqual(desc.slice(3, 6));
      expect(seqs(await s.timeline.page(channel.id, 3, all[1] as number))).toEqual([all[0] as number]);
      expect(await s.timeline.page(channel.id, 3, all[0] as number)).toEqual([]);
      const other2 = await w().room();
      expect(await s.timeline.page(other2.channel.id, 10, null)).toEqual([]);
    });

    test("since: oldest first, above sinceSeq, at most limit rows", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const rows: TimelineRow[] = [];
      for (let i = 0; i < 7; i++) {
        rows.push(i === 2 ? await w().notify(channel, other) : await w().message(channel, owner, epochId));
      }
      const all = seqs(rows);
      expect(await s.timeline.since(channel.id, 0, 100)).toEqual(rows);
      expect(seqs(await s.timeline.since(channel.id, 0, 3))).toEqual(all.slice(0, 3));
      expect(seqs(await s.timeline.since(channel.id, all[2] as number, 3))).toEqual(all.slice(3, 6));
      expect(seqs(await s.timeline.since(channel.id, all[5] as number, 3))).toEqual([all[6] as number]);
      expect(await s.timeline.since(channel.id, all[6] as number, 3)).toEqual([]);
    });

    test("deleteMessage: true once, then false; the row stays as a tombstone with its signed deletion", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const a = await w().message(channel, owner, epochId);
      const doomed = await w().message(channel, owner, epochId);
      const c = await w().message(channel, owner, epochId);
      const signed = signedDeletion(channel.id, doomed.rkey, owner.did, w().now());
      expect(await s.timeline.deleteMessage(doomed.rkey, signed)).toBe(true);
      expect(await s.timeline.deleteMessage(doomed.rkey, signed)).toBe(false);
      expect(await s.timeline.deleteMessage(newRkey(), signed)).toBe(false);
      const tombstone = { ...doomed, content: "", deletion: signed };
      expect(await s.timeline.byRkey(doomed.rkey)).toEqual(tombstone);
      // Every seq stays accounted for: reads return the tombstone in its place.
      expect(await s.timeline.page(channel.id, 10, null)).toEqual([c, tombstone, a]);
      expect(seqs(await s.timeline.page(channel.id, 1, c.seq))).toEqual([doomed.seq]);
      expect(await s.timeline.since(channel.id, 0, 10)).toEqual([a, tombstone, c]);
      expect(seqs(await s.timeline.since(channel.id, a.seq, 1))).toEqual([doomed.seq]);
      expect((await s.channels.summary(channel.id, owner.did))?.messageCount).toBe(2);
      // The content is gone, not just hidden.
      const left = await s.timeline.byClientMsgId(owner.did, doomed.clientMsgId);
      expect(left?.content).toBe("");
      expect(left?.deletion).toEqual(signed);
      // A seq is never handed out twice.
      expect((await w().message(channel, owner, epochId)).seq).toBe(c.seq + 1);
    });

    test("deleteMessage without a signed deletion leaves a tombstone without one", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const m = await w().message(channel, owner, epochId);
      expect(await s.timeline.deleteMessage(m.rkey)).toBe(true);
      const row = await s.timeline.byRkey(m.rkey);
      expect(row).toEqual({ ...m, content: "" });
      expect(row && "deletion" in row).toBe(false);
    });

    test("a retry of a deleted message does not bring it back", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const m = await w().message(channel, owner, epochId);
      await s.timeline.deleteMessage(m.rkey, signedDeletion(channel.id, m.rkey, owner.did, w().now()));
      const retry = w().messageInput(channel, owner, epochId, {
        clientMsgId: m.clientMsgId,
        content: m.content,
      });
      const r = await s.timeline.appendMessage(retry, epochId);
      expect(r.kind).not.toBe("ok");
      const rows = await s.timeline.page(channel.id, 10, null);
      expect(rows.map((x) => x.kind === "message" && x.content)).toEqual([""]);
      expect(await s.timeline.byRkey(retry.rkey)).toBeNull();
    });

    test("notifications are not deletable messages", async () => {
      const { s } = w();
      const { other, channel } = await w().room();
      const n = await w().notify(channel, other);
      expect(await s.timeline.deleteMessage(n.rkey)).toBe(false);
      expect(await s.timeline.byRkey(n.rkey)).toEqual(n);
    });

    test("byRkey and byClientMsgId of unknown keys answer null", async () => {
      const { s } = w();
      const { owner } = await w().room();
      expect(await s.timeline.byRkey(newRkey())).toBeNull();
      expect(await s.timeline.byClientMsgId(owner.did, newClientMsgId())).toBeNull();
    });
  });
}

/** What one transaction per method must guarantee when calls overlap (the server does not serialize them). */
export function concurrencyContract(w: () => World): void {
  describe("concurrency", () => {
    test("50 concurrent appendMessage calls on one channel get 50 distinct consecutive seqs", async () => {
      const { s } = w();
      const { owner, other, channel, epochId } = await w().room();
      const inputs = Array.from({ length: 50 }, (_, i) =>
        w().messageInput(channel, i % 2 ? owner : other, epochId),
      );
      const results = await Promise.all(inputs.map((m) => s.timeline.appendMessage(m, epochId)));
      const got: number[] = [];
      for (const r of results) {
        expect(r.kind).toBe("ok");
        if (r.kind === "ok") got.push(r.row.seq);
      }
      const sorted = [...got].sort((a, b) => a - b);
      expect(new Set(got).size).toBe(50);
      expectConsecutive(sorted);
      expect(seqs(await s.timeline.since(channel.id, 0, 100))).toEqual(sorted);
      expect((await s.channels.summary(channel.id, owner.did))?.messageCount).toBe(50);
    });

    test("concurrent appends on two channels keep each sequence consecutive", async () => {
      const { s } = w();
      const a = await w().room();
      const b = await w().room();
      const calls = Array.from({ length: 40 }, (_, i) => {
        const r = i % 2 ? a : b;
        return s.timeline.appendMessage(w().messageInput(r.channel, r.owner, r.epochId), r.epochId);
      });
      const results = await Promise.all(calls);
      expect(results.every((r) => r.kind === "ok")).toBe(true);
      for (const r of [a, b]) {
        const got = seqs(await s.timeline.since(r.channel.id, 0, 100));
        expect(got).toHaveLength(20);
        expectConsecutive(got);
      }
    });

    test("concurrent retries of one clientMsgId store it once and all answer that row", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const clientMsgId = newClientMsgId();
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          s.timeline.appendMessage(w().messageInput(channel, owner, epochId, { clientMsgId }), epochId),
        ),
      );
      const oks = results.filter((r) => r.kind === "ok");
      expect(oks).toHaveLength(1);
      const winner = oks[0]?.kind === "ok" ? oks[0].row : null;
      for (const r of results)
        if (r.kind !== "ok") expect(r).toEqual({ kind: "duplicate", row: winner as never });
      expect(await s.timeline.page(channel.id, 100, null)).toHaveLength(1);
    });

    test("one burst over three channels mixing every verdict: each message its own answer, each channel's accepted ones in the order sent", async () => {
      const { s } = w();
      const a = await w().room();
      const b = await w().room();
      const c = await w().room();
      const stranger = await w().user();
      const earlier = await w().message(a.channel, a.owner, a.epochId);
      const calls: {
        room: typeof a;
        expect: string;
        input: ReturnType<ReturnType<typeof w>["messageInput"]>;
        epochId: string;
      }[] = [];
      for (let i = 0; i < 30; i++) {
        const room = [a, b, c][i % 3] as typeof a;
        const kind =
          i % 10 === 4 ? "stale-epoch" : i % 10 === 7 ? "not-member" : i === 9 ? "duplicate" : "ok";
        const input =
          kind === "not-member"
            ? w().messageInput(room.channel, stranger, room.epochId)
            : kind === "duplicate"
              ? w().messageInput(a.channel, a.owner, a.epochId, { clientMsgId: earlier.clientMsgId })
              : w().messageInput(room.channel, i % 2 ? room.owner : room.other, room.epochId);
        calls.push({
          room: kind === "duplicate" ? a : room,
          expect: kind,
          input,
          epochId: kind === "stale-epoch" ? "no-such-epoch" : room.epochId,
        });
      }
      const results = await Promise.all(calls.map((x) => s.timeline.appendMessage(x.input, x.epochId)));
      expect(results.map((r) => r.kind)).toEqual(calls.map((x) => x.expect) as never);
      for (const [i, r] of results.entries()) {
        if (r.kind === "duplicate") expect(r.row.seq).toBe(earlier.seq);
        if (r.kind === "stale-epoch") expect(r.currentEpochId).toBe(calls[i]?.room.epochId as string);
      }
      for (const room of [a, b, c]) {
        const sent = calls
          .filter((x) => x.room === room && x.expect === "ok")
          .map((x) => x.input.clientMsgId);
        const stored = (await s.timeline.since(room.channel.id, room === a ? earlier.seq : 0, 100)).flatMap(
          (r) => (r.kind === "message" ? [r.clientMsgId] : []),
        );
        expect(stored).toEqual(sent);
      }
    });

    test("concurrent inserts of the same epoch number: exactly one wins", async () => {
      const { s } = w();
      const { owner, other, channel } = await w().room();
      const candidates = [];
      for (let i = 0; i < 6; i++)
        candidates.push(await w().nextEpoch(channel.id, i % 2 ? owner.did : other.did));
      const results = await Promise.all(candidates.map((e) => s.epochs.insert(e.row, e.keys)));
      expect(results.filter((r) => r === "ok")).toHaveLength(1);
      expect(results.filter((r) => r === "conflict")).toHaveLength(5);
      const winner = candidates[results.indexOf("ok")];
      expect((await s.epochs.state(channel.id)).current).toEqual(winner?.row ?? null);
      expect(await s.epochs.keysFor(channel.id, owner.did)).toHaveLength(2);
    });

    test("concurrent joins never pass the member limit", async () => {
      const { s } = w();
      const owner = await w().user();
      const ch = await w().channel(owner);
      const comers = [];
      for (let i = 0; i < 12; i++) comers.push(await w().user());
      const results = await Promise.all(comers.map((u) => s.channels.addMember(ch.id, u.did, w().now(), 5)));
      expect(results.filter((r) => r.kind === "joined")).toHaveLength(4);
      expect(results.filter((r) => r.kind === "channel-full")).toHaveLength(8);
      expect(await s.channels.members(ch.id)).toHaveLength(5);
      expect((await s.channels.get(ch.id))?.memberVersion).toBe(5);
    });

    test("a message racing a join is either committed before it or refused", async () => {
      const { s } = w();
      const { owner, channel, epochId } = await w().room();
      const comers = [];
      for (let i = 0; i < 5; i++) comers.push(await w().user());
      const ops: Promise<unknown>[] = [];
      const sends = [];
      for (let i = 0; i < 20; i++) {
        const p = s.timeline.appendMessage(w().messageInput(channel, owner, epochId), epochId);
        sends.push(p);
        ops.push(p);
        const comer = comers[i / 4];
        if (i % 4 === 0 && comer) ops.push(s.channels.addMember(channel.id, comer.did, w().now(), 5000));
      }
      await Promise.all(ops);
      const results = await Promise.all(sends);
      for (const r of results) expect(["ok", "rotation-required"]).toContain(r.kind);
      // Once the set has changed, no later message may be committed under the old epoch.
      expect((await s.timeline.appendMessage(w().messageInput(channel, owner, epochId), epochId)).kind).toBe(
        "rotation-required",
      );
      const stored = await s.timeline.since(channel.id, 0, 100);
      expect(stored).toHaveLength(results.filter((r) => r.kind === "ok").length);
    });
  });
}
