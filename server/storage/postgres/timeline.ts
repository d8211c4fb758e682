import type { TransactionSQL } from "bun";
import type { NotifyAction, SignedDeletion } from "../../../core/protocol/index.ts";
import type { AppendMessageResult, MessageRow, NotifyRow, TimelineRow, TimelineStore } from "../types.ts";
import { constraintOf, type Int8, num, type PgClient, sqlState } from "./client.ts";

interface Row {
  channel_id: string;
  seq: Int8;
  rkey: string;
  kind: "message" | "notify";
  author_did: string;
  author_handle: string;
  client_msg_id: string | null;
  content: string | null;
  action: NotifyAction | null;
  created_at: Int8;
  deletion_json: string | null;
}

function toMessage(r: Row): MessageRow {
  const row: MessageRow = {
    kind: "message",
    channelId: r.channel_id,
    seq: num(r.seq),
    rkey: r.rkey,
    authorDid: r.author_did,
    authorHandle: r.author_handle,
    clientMsgId: r.client_msg_id ?? "",
    content: r.content ?? "",
    createdAt: num(r.created_at),
  };
  if (r.deletion_json !== null) row.deletion = JSON.parse(r.deletion_json) as SignedDeletion;
  return row;
}

const toRow = (r: Row): TimelineRow =>
  r.kind === "message"
    ? toMessage(r)
    : {
        kind: "notify",
        channelId: r.channel_id,
        seq: num(r.seq),
        rkey: r.rkey,
        subjectDid: r.author_did,
        subjectHandle: r.author_handle,
        action: r.action ?? "joined",
        createdAt: num(r.created_at),
      };

/**
 * A unique violation on (author, clientMsgId): a concurrent send of the same message committed first
 * (in another channel, so it held no lock this one waited on). Running the transaction again finds it.
 */
const isClientMsgRace = (e: unknown) => sqlState(e) === "23505" && constraintOf(e) === "timeline_client_msg";

/** Messages appended in one transaction at most, and transactions of them running at once. */
const GROUP_MAX = 256;
const GROUPS_IN_FLIGHT = 8;

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
    const [r]: Row[] = await sql`
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

  /**
   * Group commit: every message that arrives while a commit is running waits for the next one, and up
   * to GROUP_MAX of them are appended in one transaction (a handful of statements for the whole group,
   * one WAL flush), several groups at once on the pool's connections. Each message still gets its own
   * checks (duplicate, membership, rotation, epoch) against the state its channel's row lock
   * guarantees, and its own result; a group that fails for a reason of its own (a concurrent
   * duplicate in another process) is run again, where the duplicate is found.
   */
  appendMessage(m: Omit<MessageRow, "seq" | "kind">, epochId: string): Promise<AppendMessageResult> {
    return new Promise((done, fail) => {
      this.queue.push({ m, epochId, done, fail });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < GROUPS_IN_FLIGHT) {
      const group = this.queue.splice(0, GROUP_MAX);
      this.inFlight++;
      this.commitGroup(group.map((g) => ({ m: g.m, epochId: g.epochId })))
        .then(
          (results) => {
            for (const [i, g] of group.entries()) g.done(results[i] as AppendMessageResult);
          },
          (e) => {
            for (const g of group) g.fail(e);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  private commitGroup(
    items: { m: Omit<MessageRow, "seq" | "kind">; epochId: string }[],
  ): Promise<AppendMessageResult[]> {
    return this.db.tx(async (tx): Promise<AppendMessageResult[]> => {
      const channelIds = [...new Set(items.map((i) => i.m.channelId))].sort();
      // Row locks in id order (no deadlock between groups), held to the commit.
      const channels: { id: string; member_version: Int8; last_seq: Int8 }[] = await tx`
        SELECT id, member_version, last_seq FROM channels WHERE id IN ${tx(channelIds)}
        ORDER BY id FOR NO KEY UPDATE`;
      const epochs: { channel_id: string; epoch_id: string; member_version: Int8 }[] = await tx`
        SELECT DISTINCT ON (channel_id) channel_id, epoch_id, member_version FROM epochs
        WHERE channel_id IN ${tx(channelIds)} ORDER BY channel_id, epoch_number DESC`;
      const authors = [...new Set(items.map((i) => i.m.authorDid))];
      const members: { channel_id: string; did: string }[] = await tx`
        SELECT channel_id, did FROM members WHERE channel_id IN ${tx(channelIds)} AND did IN ${tx(authors)}`;
      const ids = [...new Set(items.map((i) => i.m.clientMsgId))];
      const dups: Row[] = await tx`
        SELECT * FROM timeline WHERE kind = 'message' AND client_msg_id IN ${tx(ids)} AND author_did IN ${tx(authors)}`;
      const channelOf = new Map(channels.map((c) => [c.id, c]));
      const epochOf = new Map(epochs.map((e) => [e.channel_id, e]));
      const memberSet = new Set(members.map((x) => `${x.channel_id} ${x.did}`));
      const seen = new Map<string, MessageRow>();
      for (const r of dups) seen.set(`${r.author_did} ${r.client_msg_id}`, toMessage(r));
      const next = new Map(channels.map((c) => [c.id, num(c.last_seq)]));
      const inserts: MessageRow[] = [];
      const results = items.map(({ m, epochId }): AppendMessageResult => {
        const dup = seen.get(`${m.authorDid} ${m.clientMsgId}`);
        if (dup) return { kind: "duplicate", row: dup };
        if (!memberSet.has(`${m.channelId} ${m.authorDid}`)) return { kind: "not-member" };
        const channel = channelOf.get(m.channelId);
        if (!channel) throw new Error("channel vanished during append");
        const epoch = epochOf.get(m.channelId);
        // Rotation is enforced here, in the same transaction as the insert (protocol §5).
        if (!epoch || num(epoch.member_version) !== num(channel.member_version))
          return { kind: "rotation-required" };
        if (epoch.epoch_id !== epochId) return { kind: "stale-epoch", currentEpochId: epoch.epoch_id };
        const seq = (next.get(m.channelId) ?? 0) + 1;
        next.set(m.channelId, seq);
        const row: MessageRow = { ...m, kind: "message", seq };
        seen.set(`${m.authorDid} ${m.clientMsgId}`, row);
        inserts.push(row);
        return { kind: "ok", row };
      });
      if (inserts.length > 0) {
        await tx`INSERT INTO timeline ${tx(
          inserts.map((r) => ({
            channel_id: r.channelId,
            seq: r.seq,
            rkey: r.rkey,
            kind: "message",
            author_did: r.authorDid,
            author_handle: r.authorHandle,
            client_msg_id: r.clientMsgId,
            content: r.content,
            created_at: r.createdAt,
          })),
        )}`;
        // Each channel's counters in one statement: its new last seq, messages added, newest activity.
        const params: unknown[] = [];
        const values: string[] = [];
        for (const id of channelIds) {
          const added = inserts.filter((r) => r.channelId === id);
          if (added.length === 0) continue;
          params.push(id, next.get(id) ?? 0, added.length, Math.max(...added.map((r) => r.createdAt)));
          const n = params.length;
          values.push(`($${n - 3}::text, $${n - 2}::bigint, $${n - 1}::bigint, $${n}::bigint)`);
        }
        await tx.unsafe(
          `UPDATE channels AS c SET last_seq = v.seq, message_count = c.message_count + v.n, last_activity = v.at
           FROM (VALUES ${values.join(", ")}) AS v(id, seq, n, at) WHERE c.id = v.id`,
          params,
        );
      }
      return results;
    }, isClientMsgRace);
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
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM timeline WHERE channel_id = ${channelId} AND seq < ${beforeSeq ?? Number.MAX_SAFE_INTEGER}::bigint
        ORDER BY seq DESC LIMIT ${limit}`,
    );
    return rows.map(toRow);
  }

  async since(channelId: string, sinceSeq: number, limit: number): Promise<TimelineRow[]> {
    const rows: Row[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM timeline WHERE channel_id = ${channelId} AND seq > ${sinceSeq}::bigint
        ORDER BY seq ASC LIMIT ${limit}`,
    );
    return rows.map(toRow);
  }

  async byRkey(rkey: string): Promise<TimelineRow | null> {
    const [r]: Row[] = await this.db.run((sql) => sql`SELECT * FROM timeline WHERE rkey = ${rkey}`);
    return r ? toRow(r) : null;
  }

  async deleteMessage(rkey: string, deletion: SignedDeletion | null = null): Promise<boolean> {
    return this.db.tx(async (tx): Promise<boolean> => {
      // The row stays as a tombstone so seq never repeats; its ciphertext is wiped. (PostgreSQL keeps
      // the old row version until VACUUM reclaims it; autovacuum does, there is no checkpoint to force.)
      const [r]: { channel_id: string }[] = await tx`
        UPDATE timeline SET deleted = 1, content = NULL,
          deletion_json = ${deletion === null ? null : JSON.stringify(deletion)}
        WHERE rkey = ${rkey} AND kind = 'message' AND deleted = 0 RETURNING channel_id`;
      if (!r) return false;
      await tx`UPDATE channels SET message_count = message_count - 1 WHERE id = ${r.channel_id}`;
      return true;
    });
  }
}
