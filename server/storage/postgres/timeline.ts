import type { TransactionSQL } from "bun";
import type { SignedDeletion } from "../../../core/protocol/index.ts";
import { type Int8, num, type TimelineColumns, toMessage, toRow } from "../rows.ts";
import type {
  AppendMessageResult,
  MessageRow,
  MessageTombstone,
  NotifyRow,
  TimelineRow,
  TimelineStore,
} from "../types.ts";
import { constraintOf, type PgClient, sqlState } from "./client.ts";

/**
 * A unique violation on (author, clientMsgId): a concurrent send of the same message committed first
 * (in another channel, so it held no lock this one waited on). Running the transaction again finds it.
 */
const isClientMsgRace = (e: unknown) => sqlState(e) === "23505" && constraintOf(e) === "timeline_client_msg";

/** Messages appended in one transaction at most, and transactions of them running at once. */
const GROUP_MAX = 512;
const GROUPS_IN_FLIGHT = 4;

export class PostgresTimeline implements TimelineStore {
  constructor(private readonly db: PgClient) {}

  /**
   * The next seq of the channel, under the channel's row lock until the transaction ends: concurrent
   * writers, in this process or any other, take turns, and a rolled-back append gives its seq back,
   * so the sequence has no gap and no repeat.
   */
  private async nextSeq(
    tx: TransactionSQL,
    channelId: string,
    at: number,
    isMessage: boolean,
  ): Promise<number> {
    const [r]: { last_seq: Int8 }[] = await tx`
      UPDATE channels SET last_seq = last_seq + 1, last_activity = ${at}, message_count = message_count + ${isMessage ? 1 : 0}
      WHERE id = ${channelId} RETURNING last_seq`;
    if (!r) throw new Error("channel vanished during append");
    return num(r.last_seq);
  }

  private async findClientMsg(sql: TransactionSQL | PgClient["sql"], authorDid: string, clientMsgId: string) {
    const [r]: TimelineColumns[] = await sql`
      SELECT * FROM timeline WHERE kind = 'message' AND author_did = ${authorDid} AND client_msg_id = ${clientMsgId}`;
    return r ? toMessage(r) : null;
  }

  /** Appends waiting for the next group commit, and how many group commits are running. */
  private queue: {
    m: Omit<MessageRow, "seq" | "kind">;
    epochId: string;
    done: (r: AppendMessageResult) => void;
    fail: (e: unknown) => void;
  }[] = [];
  private inFlight = 0;
  private observer: ((size: number, seconds: number) => void) | null = null;

  observeCommits(fn: (size: number, seconds: number) => void): void {
    this.observer = fn;
  }

  /**
   * Group commit: every message that arrives while a commit is running waits for the next one, and up
   * to GROUP_MAX of them are appended in one transaction (one round trip and one WAL flush for the
   * whole group: commitGroup), up to GROUPS_IN_FLIGHT groups at once over disjoint channels. Each message still gets its own
   * checks (duplicate, membership, rotation, epoch) against the state its channel's row lock
   * guarantees, and its own result; a group that fails for a reason of its own (a concurrent
   * duplicate in another process) is run again, where the duplicate is found.
   */
  appendMessage(m: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult> {
    // Tracked from now, not from its group's start: close() waits for queued appends too.
    return this.db.track(
      new Promise((done, fail) => {
        this.queue.push({ m, epochId, done, fail });
        this.pump();
      }),
    );
  }

  /** Channels that a running group commit appends to: the next groups leave their messages queued. */
  private readonly busy = new Set<string>();

  /**
   * The next group: queued messages, in order, of channels no running group appends to, up to
   * GROUP_MAX. Groups running at once then lock disjoint channels, so they do not wait on each
   * other's row locks, and a channel's messages commit in the order they came. A second message
   * with the same (author, clientMsgId) waits for a later group (where it is found as a duplicate),
   * and so does the rest of its channel.
   */
  private nextGroup(): typeof this.queue {
    const group: typeof this.queue = [];
    const rest: typeof this.queue = [];
    const held = new Set<string>();
    const keys = new Set<string>();
    for (const item of this.queue) {
      const id = item.m.channelId;
      const key = `${item.m.authorDid} ${item.m.clientMsgId}`;
      if (group.length >= GROUP_MAX || this.busy.has(id) || held.has(id) || keys.has(key)) {
        held.add(id);
        rest.push(item);
        continue;
      }
      keys.add(key);
      group.push(item);
    }
    this.queue = rest;
    for (const g of group) this.busy.add(g.m.channelId);
    return group;
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < GROUPS_IN_FLIGHT) {
      const group = this.nextGroup();
      if (group.length === 0) return;
      this.inFlight++;
      const t0 = performance.now();
      this.commitGroup(group.map((g) => ({ m: g.m, epochId: g.epochId })))
        .then(
          (results) => {
            this.observer?.(group.length, (performance.now() - t0) / 1000);
            for (const [i, g] of group.entries()) g.done(results[i] as AppendMessageResult);
          },
          (e) => {
            for (const g of group) g.fail(e);
          },
        )
        .finally(() => {
          for (const g of group) this.busy.delete(g.m.channelId);
          this.inFlight--;
          this.pump();
        });
    }
  }

  /**
   * One group in one round trip (PgClient.pipelineTx): the channels' row locks in id order (no
   * deadlock between groups; held to the commit), then one statement that judges every message
   * against the state those locks guarantee (duplicate, membership, rotation, epoch), numbers the
   * accepted ones per channel after the channel's last seq, inserts them and moves the channels'
   * counters. Duplicates (retries whose ack was lost: rare) are read after the commit.
   */
  private async commitGroup(
    items: { m: Omit<MessageRow, "seq" | "kind">; epochId: string }[],
  ): Promise<AppendMessageResult[]> {
    const channelIds = JSON.stringify([...new Set(items.map((i) => i.m.channelId))].sort());
    const batch = JSON.stringify(
      items.map(({ m, epochId }, o) => ({
        o,
        c: m.channelId,
        r: m.rkey,
        a: m.authorDid,
        h: m.authorHandle,
        m: m.clientMsgId,
        t: m.content,
        at: m.createdAt,
        e: epochId,
      })),
    );
    const [, verdicts] = (await this.db.pipelineTx(
      (c) => [
        c`SELECT id FROM channels WHERE id IN (SELECT jsonb_array_elements_text(${channelIds}::text::jsonb))
          ORDER BY id FOR NO KEY UPDATE`,
        c`WITH items AS (
            SELECT * FROM jsonb_to_recordset(${batch}::text::jsonb)
              AS i(o int, c text, r text, a text, h text, m text, t text, at bigint, e text)
          ), judged AS (
            SELECT i.*, ch.last_seq, ep.epoch_id AS current_epoch,
              CASE
                WHEN dup.found THEN 'duplicate'
                WHEN mb.found IS NULL THEN 'not-member'
                WHEN ep.epoch_id IS NULL OR ep.member_version <> ch.member_version THEN 'rotation-required'
                WHEN ep.epoch_id <> i.e THEN 'stale-epoch'
                ELSE 'ok'
              END AS verdict
            FROM items i JOIN channels ch ON ch.id = i.c
            -- Index lookups per message (LATERAL … LIMIT 1), never a scan of a whole table.
            LEFT JOIN LATERAL (SELECT epoch_id, member_version FROM epochs e
              WHERE e.channel_id = i.c ORDER BY epoch_number DESC LIMIT 1) ep ON true
            LEFT JOIN LATERAL (SELECT true AS found FROM timeline t
              WHERE t.kind = 'message' AND t.author_did = i.a AND t.client_msg_id = i.m LIMIT 1) dup ON true
            LEFT JOIN LATERAL (SELECT true AS found FROM members m
              WHERE m.channel_id = i.c AND m.did = i.a LIMIT 1) mb ON true
          ), numbered AS (
            SELECT o, c, r, a, h, m, t, at, last_seq + row_number() OVER (PARTITION BY c ORDER BY o) AS seq
            FROM judged WHERE verdict = 'ok'
          ), ins AS (
            INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, client_msg_id, content, created_at)
            SELECT c, seq, r, 'message', a, h, m, t, at FROM numbered
          ), upd AS (
            UPDATE channels ch SET last_seq = v.seq, message_count = ch.message_count + v.n, last_activity = v.at
            FROM (SELECT c, max(seq) AS seq, count(*) AS n, max(at) AS at FROM numbered GROUP BY c) v
            WHERE ch.id = v.c
          )
          SELECT j.o, j.verdict, j.current_epoch, n.seq FROM judged j LEFT JOIN numbered n ON n.o = j.o`,
      ],
      isClientMsgRace,
    )) as [unknown, { o: number; verdict: string; current_epoch: string | null; seq: Int8 | null }[]];
    const byOrder = new Map(verdicts.map((v) => [v.o, v]));
    return Promise.all(
      items.map(async ({ m }, o): Promise<AppendMessageResult> => {
        const v = byOrder.get(o);
        if (!v) throw new Error("channel vanished during append");
        switch (v.verdict) {
          case "ok":
            return { kind: "ok", row: { ...m, kind: "message", seq: num(v.seq ?? 0) } };
          case "duplicate": {
            const row = await this.db.run((sql) => this.findClientMsg(sql, m.authorDid, m.clientMsgId));
            if (!row) throw new Error("duplicate message vanished");
            return { kind: "duplicate", row };
          }
          case "not-member":
            return { kind: "not-member" };
          case "rotation-required":
            return { kind: "rotation-required" };
          default:
            return { kind: "stale-epoch", currentEpochId: v.current_epoch ?? "" };
        }
      }),
    );
  }

  async appendNotify(n: Omit<NotifyRow, "seq" | "kind">): Promise<NotifyRow> {
    return this.db.tx(async (tx): Promise<NotifyRow> => {
      const seq = await this.nextSeq(tx, n.channelId, n.createdAt, false);
      await tx`
        INSERT INTO timeline (channel_id, seq, rkey, kind, author_did, author_handle, action, created_at)
        VALUES (${n.channelId}, ${seq}, ${n.rkey}, 'notify', ${n.subjectDid}, ${n.subjectHandle}, ${n.action}, ${n.createdAt})`;
      return { ...n, kind: "notify", seq };
    });
  }

  async byClientMsgId(authorDid: string, clientMsgId: string): Promise<MessageRow | null> {
    return this.db.run((sql) => this.findClientMsg(sql, authorDid, clientMsgId));
  }

  // Tombstones are returned (protocol §7): a seq the server leaves out is shown as withheld.
  async page(channelId: string, limit: number, beforeSeq: number | null): Promise<TimelineRow[]> {
    const rows: TimelineColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM timeline WHERE channel_id = ${channelId} AND seq < ${beforeSeq ?? Number.MAX_SAFE_INTEGER}::bigint
        ORDER BY seq DESC LIMIT ${limit}`,
    );
    return rows.map(toRow);
  }

  async since(channelId: string, sinceSeq: number, limit: number): Promise<TimelineRow[]> {
    const rows: TimelineColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM timeline WHERE channel_id = ${channelId} AND seq > ${sinceSeq}::bigint
        ORDER BY seq ASC LIMIT ${limit}`,
    );
    return rows.map(toRow);
  }

  async byRkey(rkey: string): Promise<TimelineRow | null> {
    const [r]: TimelineColumns[] = await this.db.run(
      (sql) => sql`SELECT * FROM timeline WHERE rkey = ${rkey}`,
    );
    return r ? toRow(r) : null;
  }

  async deleteMessage(
    rkey: string,
    deletion: SignedDeletion | null = null,
    tombstone: MessageTombstone | null = null,
  ): Promise<boolean> {
    return this.db.tx(async (tx): Promise<boolean> => {
      // The row stays as a tombstone so seq never repeats; its ciphertext is wiped. (PostgreSQL keeps
      // the old row version until VACUUM reclaims it; autovacuum does, there is no checkpoint to force.)
      const [r]: { channel_id: string }[] = await tx`
        UPDATE timeline SET deleted = 1, content = NULL,
          deletion_json = ${deletion === null ? null : JSON.stringify(deletion)},
          tombstone_json = ${tombstone === null ? null : JSON.stringify(tombstone)}
        WHERE rkey = ${rkey} AND kind = 'message' AND deleted = 0 RETURNING channel_id`;
      if (!r) return false;
      await tx`UPDATE channels SET message_count = message_count - 1 WHERE id = ${r.channel_id}`;
      return true;
    });
  }
}
