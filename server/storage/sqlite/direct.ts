import type { Database } from "bun:sqlite";
import type { Admission, DirectKind } from "../../../core/protocol/index.ts";
import type { ConversationRef, DirectState, DirectStore, NewConversation } from "../direct-types.ts";

interface RefColumns {
  channel_id: string;
  direct_kind: DirectKind;
  creator_did: string;
  state: DirectState | null;
  hidden_seq: number | null;
  last_seq: number;
}

const REF = `
  SELECT c.id AS channel_id, c.direct_kind, c.creator_did, s.state, s.hidden_seq, c.last_seq
  FROM members m
  JOIN channels c ON c.id = m.channel_id AND c.direct_kind IS NOT NULL
  LEFT JOIN direct_states s ON s.channel_id = m.channel_id AND s.did = m.did`;

// A member without a state row (added to a group by someone whose write stopped half way) counts as
// a request: the safe side.
const toRef = (r: RefColumns): ConversationRef => ({
  channelId: r.channel_id,
  kind: r.direct_kind,
  creatorDid: r.creator_did,
  state: r.state ?? "request",
  hiddenSeq: r.hidden_seq,
  lastSeq: r.last_seq,
});

export class SqliteDirect implements DirectStore {
  constructor(private readonly db: Database) {}

  async open(c: NewConversation): Promise<{ channelId: string; created: boolean }> {
    return this.db
      .transaction(() => {
        // Under the write lock (immediate): of two opens of one pair, the second finds the first.
        if (c.key !== null) {
          const found = this.db.query("SELECT id FROM channels WHERE direct_key = ?").get(c.key) as {
            id: string;
          } | null;
          if (found) return { channelId: found.id, created: false };
        }
        // owner_did is the opener so the channel never looks ownerless (an ownerless channel hands
        // ownership to whoever joins next); every member's role is 'member': no owner powers.
        this.db
          .query(
            `INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at,
               join_token_hash, link_voided, member_version, direct_kind, direct_key)
             VALUES (?, ?, '', 'invite', ?, ?, ?, NULL, 0, 1, ?, ?)`,
          )
          .run(c.id, c.name, c.creatorDid, c.creatorDid, c.createdAt, c.kind, c.key);
        for (const m of c.members) {
          this.db
            .query("INSERT INTO members (channel_id, did, role, joined_at) VALUES (?, ?, 'member', ?)")
            .run(c.id, m.did, c.createdAt);
          this.db
            .query("INSERT INTO direct_states (channel_id, did, state) VALUES (?, ?, ?)")
            .run(c.id, m.did, m.state);
        }
        return { channelId: c.id, created: true };
      })
      .immediate();
  }

  async conversationsOf(did: string): Promise<ConversationRef[]> {
    const rows = this.db.query(`${REF} WHERE m.did = ? ORDER BY c.created_at, c.id`).all(did) as RefColumns[];
    return rows.map(toRef);
  }

  async conversation(channelId: string, did: string): Promise<ConversationRef | null> {
    const r = this.db
      .query(`${REF} WHERE m.did = ? AND m.channel_id = ?`)
      .get(did, channelId) as RefColumns | null;
    return r ? toRef(r) : null;
  }

  async setState(channelId: string, did: string, state: DirectState): Promise<void> {
    this.db
      .query(
        `INSERT INTO direct_states (channel_id, did, state) VALUES (?, ?, ?)
         ON CONFLICT (channel_id, did) DO UPDATE SET state = excluded.state, hidden_seq = NULL`,
      )
      .run(channelId, did, state);
  }

  async hide(channelId: string, did: string, seq: number): Promise<void> {
    this.db
      .query(
        `INSERT INTO direct_states (channel_id, did, state, hidden_seq) VALUES (?, ?, 'request', ?)
         ON CONFLICT (channel_id, did) DO UPDATE SET hidden_seq = excluded.hidden_seq`,
      )
      .run(channelId, did, seq);
  }

  async setAdmission(channelId: string, did: string, admission: Admission): Promise<boolean> {
    const res = this.db
      .query(
        "UPDATE members SET admission_json = ? WHERE channel_id = ? AND did = ? AND admission_json IS NULL",
      )
      .run(JSON.stringify(admission), channelId, did);
    return res.changes > 0;
  }

  async knows(a: string, b: string): Promise<boolean> {
    const row = this.db
      .query(
        `SELECT 1 AS ok FROM members ma
         JOIN members mb ON mb.channel_id = ma.channel_id AND mb.did = ?2
         JOIN channels c ON c.id = ma.channel_id
         LEFT JOIN direct_states s ON s.channel_id = ma.channel_id AND s.did = ma.did
         WHERE ma.did = ?1 AND (c.direct_kind IS NULL OR s.state = 'accepted')
         LIMIT 1`,
      )
      .get(a, b);
    return row !== null;
  }

  async block(blocker: string, blocked: string, at: number): Promise<void> {
    this.db
      .query(
        "INSERT INTO blocks (blocker_did, blocked_did, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
      .run(blocker, blocked, at);
  }

  async unblock(blocker: string, blocked: string): Promise<void> {
    this.db.query("DELETE FROM blocks WHERE blocker_did = ? AND blocked_did = ?").run(blocker, blocked);
  }

  async blockedBy(blocker: string): Promise<{ did: string; handle: string }[]> {
    return this.db
      .query(
        `SELECT b.blocked_did AS did, a.handle FROM blocks b JOIN accounts a ON a.did = b.blocked_did
         WHERE b.blocker_did = ? ORDER BY b.created_at, b.blocked_did`,
      )
      .all(blocker) as { did: string; handle: string }[];
  }

  async isBlocked(blocker: string, blocked: string): Promise<boolean> {
    return (
      this.db
        .query("SELECT 1 AS ok FROM blocks WHERE blocker_did = ? AND blocked_did = ?")
        .get(blocker, blocked) !== null
    );
  }
}
