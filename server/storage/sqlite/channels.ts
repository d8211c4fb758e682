import type { Database } from "bun:sqlite";
import type { Admission, SignedReadMarker } from "../../../core/protocol/index.ts";
import {
  type ChannelColumns,
  type ChannelSummaryColumns,
  type InviteColumns,
  LISTED_MEMBER_SELECT,
  type ListedMemberColumns,
  MEMBER_SELECT,
  type MemberColumns,
  type ReadMarkerColumns,
  toChannel,
  toInvite,
  toListedMember,
  toMarker,
  toMember,
  toSummary,
} from "../rows.ts";
import type {
  ChannelRow,
  ChannelStore,
  ChannelSummary,
  InviteRow,
  ListedMember,
  MemberRow,
  MembershipChange,
  NewInvite,
  ReadMarkerRow,
} from "../types.ts";

const SUMMARY = `
  SELECT c.*, o.handle AS owner_handle,
    (SELECT COUNT(*) FROM members m WHERE m.channel_id = c.id) AS member_count,
    me.role AS role
  FROM channels c
  LEFT JOIN accounts o ON o.did = c.owner_did
  LEFT JOIN members me ON me.channel_id = c.id AND me.did = $viewer`;

export class SqliteChannels implements ChannelStore {
  constructor(private readonly db: Database) {}

  async create(c: ChannelRow, owner: { did: string; at: number }): Promise<void> {
    this.db
      .transaction(() => {
        // owner_did always names the one member whose role is 'owner' (removeMember hands it on by
        // that column), and every channel starts at member version 1 with no epoch, whatever the row says.
        this.db
          .query(
            `INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at, join_token_hash, link_voided, member_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
          )
          .run(
            c.id,
            c.name,
            c.description,
            c.type,
            c.creatorDid,
            owner.did,
            c.createdAt,
            c.joinTokenHash,
            c.linkVoided ? 1 : 0,
          );
        this.db
          .query("INSERT INTO members (channel_id, did, role, joined_at) VALUES (?, ?, 'owner', ?)")
          .run(c.id, owner.did, owner.at);
      })
      .immediate();
  }

  async get(id: string): Promise<ChannelRow | null> {
    const r = this.db.query("SELECT * FROM channels WHERE id = ?").get(id) as ChannelColumns | null;
    return r ? toChannel(r) : null;
  }

  async summary(id: string, viewerDid: string): Promise<ChannelSummary | null> {
    const r = this.db
      .query(`${SUMMARY} WHERE c.id = $id`)
      .get({ viewer: viewerDid, id }) as ChannelSummaryColumns | null;
    return r ? toSummary(r) : null;
  }

  async listVisible(viewerDid: string): Promise<ChannelSummary[]> {
    // Secret channels appear only to their members (protocol §3); direct conversations never (they
    // are listed by /dm/list, to their members only).
    const rows = this.db
      .query(
        `${SUMMARY} WHERE (c.type != 'secret' OR me.did IS NOT NULL) AND c.direct_kind IS NULL ORDER BY c.created_at, c.id`,
      )
      .all({ viewer: viewerDid }) as ChannelSummaryColumns[];
    return rows.map(toSummary);
  }

  async member(channelId: string, did: string): Promise<MemberRow | null> {
    const r = this.db
      .query(`${MEMBER_SELECT} WHERE m.channel_id = ? AND m.did = ?`)
      .get(channelId, did) as MemberColumns | null;
    return r ? toMember(r) : null;
  }

  async members(channelId: string): Promise<ListedMember[]> {
    // Sorted here rather than by SQLite's temporary B-tree (a third of the query's time for a
    // channel of 10): joined_at, then did, whose characters are ASCII, so `<` orders them as
    // SQLite's BINARY collation would.
    const rows = this.db
      .query(`${LISTED_MEMBER_SELECT} WHERE m.channel_id = ?`)
      .all(channelId) as ListedMemberColumns[];
    return rows
      .map(toListedMember)
      .sort((a, b) => a.joinedAt - b.joinedAt || (a.did < b.did ? -1 : a.did > b.did ? 1 : 0));
  }

  async channelIdsOf(did: string): Promise<string[]> {
    const rows = this.db.query("SELECT channel_id FROM members WHERE did = ?").all(did) as {
      channel_id: string;
    }[];
    return rows.map((r) => r.channel_id);
  }

  async addMember(
    channelId: string,
    did: string,
    at: number,
    limit: number,
    admission: Admission | null = null,
    linkGate?: { joinTokenHash: string },
  ): Promise<MembershipChange> {
    return this.db
      .transaction((): MembershipChange => {
        const existing = this.db
          .query(`${MEMBER_SELECT} WHERE m.channel_id = ? AND m.did = ?`)
          .get(channelId, did) as MemberColumns | null;
        if (existing) return { kind: "already-member", member: toMember(existing) };
        const count = (
          this.db.query("SELECT COUNT(*) AS n FROM members WHERE channel_id = ?").get(channelId) as {
            n: number;
          }
        ).n;
        if (count >= limit) return { kind: "channel-full" };
        if (linkGate) {
          const live = this.db
            .query("SELECT 1 AS ok FROM channels WHERE id = ? AND join_token_hash = ? AND link_voided = 0")
            .get(channelId, linkGate.joinTokenHash);
          if (!live) return { kind: "link-gone" };
        }
        // An empty channel has no owner left; whoever comes back first takes it over.
        const ownerless =
          (
            this.db.query("SELECT owner_did FROM channels WHERE id = ?").get(channelId) as {
              owner_did: string | null;
            }
          ).owner_did === null;
        const role = ownerless ? "owner" : "member";
        this.db
          .query(
            "INSERT INTO members (channel_id, did, role, joined_at, admission_json) VALUES (?, ?, ?, ?, ?)",
          )
          .run(channelId, did, role, at, admission === null ? null : JSON.stringify(admission));
        if (ownerless) this.db.query("UPDATE channels SET owner_did = ? WHERE id = ?").run(did, channelId);
        this.db.query("DELETE FROM invites WHERE channel_id = ? AND invitee_did = ?").run(channelId, did);
        this.db.query("UPDATE channels SET member_version = member_version + 1 WHERE id = ?").run(channelId);
        const row = this.db
          .query(`${MEMBER_SELECT} WHERE m.channel_id = ? AND m.did = ?`)
          .get(channelId, did) as MemberColumns;
        return { kind: "joined", member: toMember(row) };
      })
      .immediate();
  }

  async removeMember(channelId: string, did: string, opts: { voidLink?: boolean } = {}): Promise<boolean> {
    return this.db
      .transaction((): boolean => {
        const res = this.db.query("DELETE FROM members WHERE channel_id = ? AND did = ?").run(channelId, did);
        if (res.changes === 0) return false;
        this.db.query("UPDATE channels SET member_version = member_version + 1 WHERE id = ?").run(channelId);
        // In the removal's transaction: there is no moment when the member is out but their link
        // still admits them (or anyone they gave it to).
        if (opts.voidLink) {
          this.db
            .query("UPDATE channels SET join_token_hash = NULL, link_voided = 1 WHERE id = ?")
            .run(channelId);
        }
        const owner = this.db.query("SELECT owner_did FROM channels WHERE id = ?").get(channelId) as {
          owner_did: string | null;
        };
        if (owner.owner_did === did) {
          const next = this.db
            .query("SELECT did FROM members WHERE channel_id = ? ORDER BY joined_at, did LIMIT 1")
            .get(channelId) as { did: string } | null;
          this.db.query("UPDATE channels SET owner_did = ? WHERE id = ?").run(next?.did ?? null, channelId);
          if (next) {
            this.db
              .query("UPDATE members SET role = 'owner' WHERE channel_id = ? AND did = ?")
              .run(channelId, next.did);
          }
        }
        return true;
      })
      .immediate();
  }

  async addInvite(i: NewInvite): Promise<void> {
    this.db
      .query(
        `INSERT INTO invites (channel_id, invitee_did, from_did, created_at, invite_json, invite_signature)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (channel_id, invitee_did) DO UPDATE SET from_did = excluded.from_did,
           created_at = excluded.created_at, invite_json = excluded.invite_json,
           invite_signature = excluded.invite_signature`,
      )
      .run(
        i.channelId,
        i.inviteeDid,
        i.fromDid,
        i.createdAt,
        i.signed ? JSON.stringify(i.signed.invite) : null,
        i.signed ? i.signed.signature : null,
      );
  }

  private invites(where: string, ...params: string[]): InviteRow[] {
    const rows = this.db
      .query(
        `SELECT i.channel_id, i.invitee_did, i.from_did, a.handle AS from_handle, i.created_at,
           i.invite_json, i.invite_signature
         FROM invites i JOIN accounts a ON a.did = i.from_did WHERE ${where} ORDER BY i.created_at`,
      )
      .all(...params) as InviteColumns[];
    return rows.map(toInvite);
  }

  async invite(channelId: string, did: string): Promise<InviteRow | null> {
    return this.invites("i.channel_id = ? AND i.invitee_did = ?", channelId, did)[0] ?? null;
  }

  async invitesFor(did: string): Promise<InviteRow[]> {
    return this.invites("i.invitee_did = ?", did);
  }

  async setReadMarker(
    did: string,
    channelId: string,
    seq: number,
    at: number,
    signed: SignedReadMarker | null = null,
  ): Promise<ReadMarkerRow> {
    // The signed marker goes with the seq it set: replaced only when the stored seq rises, or when
    // the stored one has none yet at the same seq (a marker from before v3).
    const row = this.db
      .query(
        `INSERT INTO read_markers (did, channel_id, seq, updated_at, signed_json)
         VALUES (?1, ?2, MAX(0, MIN(?3, COALESCE((SELECT last_seq FROM channels WHERE id = ?2), 0))), ?4, ?5)
         ON CONFLICT (did, channel_id) DO UPDATE SET
           signed_json = CASE
             WHEN excluded.seq > read_markers.seq
               OR (excluded.seq = read_markers.seq AND read_markers.signed_json IS NULL)
             THEN excluded.signed_json ELSE read_markers.signed_json END,
           seq = MAX(read_markers.seq, excluded.seq), updated_at = excluded.updated_at
         RETURNING channel_id, seq, signed_json`,
      )
      .get(did, channelId, seq, at, signed ? JSON.stringify(signed) : null) as ReadMarkerColumns;
    return toMarker(row);
  }

  async readMarkers(did: string): Promise<ReadMarkerRow[]> {
    const rows = this.db
      .query(
        `SELECT r.channel_id, r.seq, r.signed_json FROM read_markers r
         JOIN members m ON m.channel_id = r.channel_id AND m.did = r.did
         WHERE r.did = ? ORDER BY r.channel_id`,
      )
      .all(did) as ReadMarkerColumns[];
    return rows.map(toMarker);
  }
}
