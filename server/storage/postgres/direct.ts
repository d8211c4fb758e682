import type { Admission, DirectKind } from "../../../core/protocol/index.ts";
import type { ConversationRef, DirectState, DirectStore, NewConversation } from "../direct-types.ts";
import { type Int8, num, numOrNull } from "../rows.ts";
import type { PgClient } from "./client.ts";

interface RefColumns {
  channel_id: string;
  direct_kind: DirectKind;
  creator_did: string;
  state: DirectState | null;
  hidden_seq: Int8 | null;
  last_seq: Int8;
}

const REF = `
  SELECT c.id AS channel_id, c.direct_kind, c.creator_did, s.state, s.hidden_seq, c.last_seq
  FROM members m
  JOIN channels c ON c.id = m.channel_id AND c.direct_kind IS NOT NULL
  LEFT JOIN direct_states s ON s.channel_id = m.channel_id AND s.did = m.did`;

// As in SQLite: a member without a state row counts as a request.
const toRef = (r: RefColumns): ConversationRef => ({
  channelId: r.channel_id,
  kind: r.direct_kind,
  creatorDid: r.creator_did,
  state: r.state ?? "request",
  hiddenSeq: numOrNull(r.hidden_seq),
  lastSeq: num(r.last_seq),
});

export class PostgresDirect implements DirectStore {
  constructor(private readonly db: PgClient) {}

  async open(c: NewConversation): Promise<{ channelId: string; created: boolean }> {
    return this.db.tx(async (tx) => {
      // The unique index on direct_key decides between two concurrent opens of one pair: the second
      // insert waits for the first to commit, does nothing, and then reads the first's row.
      const inserted: { id: string }[] = await tx`
        INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at,
          join_token_hash, link_voided, member_version, direct_kind, direct_key)
        VALUES (${c.id}, ${c.name}, '', 'invite', ${c.creatorDid}, ${c.creatorDid}, ${c.createdAt},
          NULL, 0, 1, ${c.kind}, ${c.key})
        ON CONFLICT (direct_key) DO NOTHING
        RETURNING id`;
      if (inserted.length === 0) {
        const found: { id: string }[] = await tx`SELECT id FROM channels WHERE direct_key = ${c.key}`;
        const id = found[0]?.id;
        if (!id) throw new Error("direct conversation: conflict without a row");
        return { channelId: id, created: false };
      }
      for (const m of c.members) {
        await tx`INSERT INTO members (channel_id, did, role, joined_at) VALUES (${c.id}, ${m.did}, 'member', ${c.createdAt})`;
        await tx`INSERT INTO direct_states (channel_id, did, state) VALUES (${c.id}, ${m.did}, ${m.state})`;
      }
      return { channelId: c.id, created: true };
    });
  }

  async conversationsOf(did: string): Promise<ConversationRef[]> {
    const rows: RefColumns[] = await this.db.run((sql) =>
      sql.unsafe(`${REF} WHERE m.did = $1 ORDER BY c.created_at, c.id COLLATE "C"`, [did]),
    );
    return rows.map(toRef);
  }

  async conversation(channelId: string, did: string): Promise<ConversationRef | null> {
    const rows: RefColumns[] = await this.db.run((sql) =>
      sql.unsafe(`${REF} WHERE m.did = $1 AND m.channel_id = $2`, [did, channelId]),
    );
    const r = rows[0];
    return r ? toRef(r) : null;
  }

  async setState(channelId: string, did: string, state: DirectState): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO direct_states (channel_id, did, state) VALUES (${channelId}, ${did}, ${state})
        ON CONFLICT (channel_id, did) DO UPDATE SET state = excluded.state, hidden_seq = NULL`,
    );
  }

  async hide(channelId: string, did: string, seq: number): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO direct_states (channel_id, did, state, hidden_seq) VALUES (${channelId}, ${did}, 'request', ${seq})
        ON CONFLICT (channel_id, did) DO UPDATE SET hidden_seq = excluded.hidden_seq`,
    );
  }

  async setAdmission(channelId: string, did: string, admission: Admission): Promise<boolean> {
    const rows: unknown[] = await this.db.run(
      (sql) => sql`
        UPDATE members SET admission_json = ${JSON.stringify(admission)}
        WHERE channel_id = ${channelId} AND did = ${did} AND admission_json IS NULL
        RETURNING did`,
    );
    return rows.length > 0;
  }

  async knows(a: string, b: string): Promise<boolean> {
    const rows: unknown[] = await this.db.run(
      (sql) => sql`
        SELECT 1 AS ok FROM members ma
        JOIN members mb ON mb.channel_id = ma.channel_id AND mb.did = ${b}
        JOIN channels c ON c.id = ma.channel_id
        LEFT JOIN direct_states s ON s.channel_id = ma.channel_id AND s.did = ma.did
        WHERE ma.did = ${a} AND (c.direct_kind IS NULL OR s.state = 'accepted')
        LIMIT 1`,
    );
    return rows.length > 0;
  }

  async block(blocker: string, blocked: string, at: number): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO blocks (blocker_did, blocked_did, created_at) VALUES (${blocker}, ${blocked}, ${at})
        ON CONFLICT DO NOTHING`,
    );
  }

  async unblock(blocker: string, blocked: string): Promise<void> {
    await this.db.run(
      (sql) => sql`DELETE FROM blocks WHERE blocker_did = ${blocker} AND blocked_did = ${blocked}`,
    );
  }

  async blockedBy(blocker: string): Promise<{ did: string; handle: string }[]> {
    return this.db.run(
      (sql) => sql`
        SELECT b.blocked_did AS did, a.handle FROM blocks b JOIN accounts a ON a.did = b.blocked_did
        WHERE b.blocker_did = ${blocker} ORDER BY b.created_at, b.blocked_did COLLATE "C"`,
    );
  }

  async isBlocked(blocker: string, blocked: string): Promise<boolean> {
    const rows: unknown[] = await this.db.run(
      (sql) => sql`SELECT 1 AS ok FROM blocks WHERE blocker_did = ${blocker} AND blocked_did = ${blocked}`,
    );
    return rows.length > 0;
  }
}
