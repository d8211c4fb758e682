import type { Admission, SignedReadMarker } from "../../../core/protocol/index.ts";
import {
  type ChannelColumns,
  type ChannelSummaryColumns,
  type Int8,
  type InviteColumns,
  LISTED_MEMBER_SELECT,
  type ListedMemberColumns,
  MEMBER_SELECT,
  type MemberColumns,
  num,
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
import type { PgClient } from "./client.ts";

// Text is ordered byte-wise (COLLATE "C") wherever order is observable, as SQLite's BINARY collation
// does, whatever the database's locale.
const CHANNEL_COLUMNS = `c.id, c.name, c.description, c.type, c.creator_did, c.owner_did, c.created_at,
  c.join_token_hash, c.link_voided, c.member_version, c.message_count, c.last_activity, c.direct_kind`;

const SUMMARY = `
  SELECT ${CHANNEL_COLUMNS}, o.handle AS owner_handle,
    (SELECT COUNT(*) FROM members m WHERE m.channel_id = c.id) AS member_count,
    me.role AS role
  FROM channels c
  LEFT JOIN accounts o ON o.did = c.owner_did
  LEFT JOIN members me ON me.channel_id = c.id AND me.did = $1`;

export class PostgresChannels implements ChannelStore {
  constructor(private readonly db: PgClient) {}

  async create(c: ChannelRow, owner: { did: string; at: number }): Promise<void> {
    await this.db.tx(async (tx) => {
      // owner_did always names the one member whose role is 'owner' (removeMember hands it on by
      // that column), and every channel starts at member version 1 with no epoch, whatever the row says.
      await tx`
        INSERT INTO channels (id, name, description, type, creator_did, owner_did, created_at, join_token_hash, link_voided, member_version)
        VALUES (${c.id}, ${c.name}, ${c.description}, ${c.type}, ${c.creatorDid}, ${owner.did}, ${c.createdAt},
          ${c.joinTokenHash}, ${c.linkVoided ? 1 : 0}, 1)`;
      await tx`INSERT INTO members (channel_id, did, role, joined_at) VALUES (${c.id}, ${owner.did}, 'owner', ${owner.at})`;
    });
  }

  async get(id: string): Promise<ChannelRow | null> {
    const rows: ChannelColumns[] = await this.db.run((sql) => sql`SELECT * FROM channels WHERE id = ${id}`);
    const r = rows[0];
    return r ? toChannel(r) : null;
  }

  async summary(id: string, viewerDid: string): Promise<ChannelSummary | null> {
    const rows: ChannelSummaryColumns[] = await this.db.run((sql) =>
      sql.unsafe(`${SUMMARY} WHERE c.id = $2`, [viewerDid, id]),
    );
    const r = rows[0];
    return r ? toSummary(r) : null;
  }

  async listVisible(viewerDid: string): Promise<ChannelSummary[]> {
    // Secret channels appear only to their members (protocol §3); direct conversations never (they
    // are listed by /dm/list, to their members only).
    const rows: ChannelSummaryColumns[] = await this.db.run((sql) =>
      sql.unsafe(
        `${SUMMARY} WHERE (c.type <> 'secret' OR me.did IS NOT NULL) AND c.direct_kind IS NULL ORDER BY c.created_at, c.id COLLATE "C"`,
        [viewerDid],
      ),
    );
    return rows.map(toSummary);
  }

  async member(channelId: string, did: string): Promise<MemberRow | null> {
    const rows: MemberColumns[] = await this.db.run((sql) =>
      sql.unsafe(`${MEMBER_SELECT} WHERE m.channel_id = $1 AND m.did = $2`, [channelId, did]),
    );
    const r = rows[0];
    return r ? toMember(r) : null;
  }

  async members(channelId: string): Promise<ListedMember[]> {
    const rows: ListedMemberColumns[] = await this.db.run((sql) =>
      sql.unsafe(`${LISTED_MEMBER_SELECT} WHERE m.channel_id = $1 ORDER BY m.joined_at, m.did COLLATE "C"`, [
        channelId,
      ]),
    );
    return rows.map(toListedMember);
  }

  async channelIdsOf(did: string): Promise<string[]> {
    const rows: { channel_id: string }[] = await this.db.run(
      (sql) => sql`SELECT channel_id FROM members WHERE did = ${did}`,
    );
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
    return this.db.tx(async (tx): Promise<MembershipChange> => {
      // The channel row lock serializes every change of its member set and every append: the count
      // below cannot be passed by a concurrent join, and a message cannot commit under the old member
      // version once this join has.
      const [channel]: { owner_did: string | null; join_token_hash: string | null; link_voided: number }[] =
        await tx`SELECT owner_did, join_token_hash, link_voided FROM channels WHERE id = ${channelId} FOR NO KEY UPDATE`;
      if (!channel) throw new Error(`unknown channel ${channelId}`);
      const [existing]: MemberColumns[] = await tx.unsafe(
        `${MEMBER_SELECT} WHERE m.channel_id = $1 AND m.did = $2`,
        [channelId, did],
      );
      if (existing) return { kind: "already-member", member: toMember(existing) };
      const [count]: { n: Int8 }[] =
        await tx`SELECT COUNT(*) AS n FROM members WHERE channel_id = ${channelId}`;
      if (num(count?.n ?? 0) >= limit) return { kind: "channel-full" };
      if (linkGate && (channel.join_token_hash !== linkGate.joinTokenHash || channel.link_voided !== 0))
        return { kind: "link-gone" };
      // An empty channel has no owner left; whoever comes back first takes it over.
      const ownerless = channel.owner_did === null;
      const role = ownerless ? "owner" : "member";
      await tx`
        INSERT INTO members (channel_id, did, role, joined_at, admission_json)
        VALUES (${channelId}, ${did}, ${role}, ${at}, ${admission === null ? null : JSON.stringify(admission)})`;
      await tx`DELETE FROM invites WHERE channel_id = ${channelId} AND invitee_did = ${did}`;
      await tx`
        UPDATE channels SET member_version = member_version + 1,
          owner_did = CASE WHEN ${ownerless} THEN ${did} ELSE owner_did END
        WHERE id = ${channelId}`;
      const [row]: MemberColumns[] = await tx.unsafe(
        `${MEMBER_SELECT} WHERE m.channel_id = $1 AND m.did = $2`,
        [channelId, did],
      );
      if (!row) throw new Error("member vanished during addMember");
      return { kind: "joined", member: toMember(row) };
    });
  }

  async removeMember(channelId: string, did: string, opts: { voidLink?: boolean } = {}): Promise<boolean> {
    return this.db.tx(async (tx): Promise<boolean> => {
      const [channel]: { owner_did: string | null }[] =
        await tx`SELECT owner_did FROM channels WHERE id = ${channelId} FOR NO KEY UPDATE`;
      if (!channel) return false;
      const removed =
        await tx`DELETE FROM members WHERE channel_id = ${channelId} AND did = ${did} RETURNING did`;
      if (removed.length === 0) return false;
      // In the removal's transaction: there is no moment when the member is out but their link
      // still admits them (or anyone they gave it to).
      await tx`
        UPDATE channels SET member_version = member_version + 1,
          join_token_hash = CASE WHEN ${opts.voidLink === true} THEN NULL ELSE join_token_hash END,
          link_voided = CASE WHEN ${opts.voidLink === true} THEN 1 ELSE link_voided END
        WHERE id = ${channelId}`;
      if (channel.owner_did === did) {
        const [next]: { did: string }[] = await tx`
          SELECT did FROM members WHERE channel_id = ${channelId} ORDER BY joined_at, did COLLATE "C" LIMIT 1`;
        await tx`UPDATE channels SET owner_did = ${next?.did ?? null} WHERE id = ${channelId}`;
        if (next)
          await tx`UPDATE members SET role = 'owner' WHERE channel_id = ${channelId} AND did = ${next.did}`;
      }
      return true;
    });
  }

  async addInvite(i: NewInvite): Promise<void> {
    await this.db.run(
      (sql) => sql`
        INSERT INTO invites (channel_id, invitee_did, from_did, created_at, invite_json, invite_signature)
        VALUES (${i.channelId}, ${i.inviteeDid}, ${i.fromDid}, ${i.createdAt},
          ${i.signed ? JSON.stringify(i.signed.invite) : null}, ${i.signed ? i.signed.signature : null})
        ON CONFLICT (channel_id, invitee_did) DO UPDATE SET from_did = excluded.from_did,
          created_at = excluded.created_at, invite_json = excluded.invite_json,
          invite_signature = excluded.invite_signature`,
    );
  }

  private async invites(where: string, params: string[]): Promise<InviteRow[]> {
    const rows: InviteColumns[] = await this.db.run((sql) =>
      sql.unsafe(
        `SELECT i.channel_id, i.invitee_did, i.from_did, a.handle AS from_handle, i.created_at,
           i.invite_json, i.invite_signature
         FROM invites i JOIN accounts a ON a.did = i.from_did WHERE ${where} ORDER BY i.created_at`,
        params,
      ),
    );
    return rows.map(toInvite);
  }

  async invite(channelId: string, did: string): Promise<InviteRow | null> {
    return (await this.invites("i.channel_id = $1 AND i.invitee_did = $2", [channelId, did]))[0] ?? null;
  }

  async invitesFor(did: string): Promise<InviteRow[]> {
    return this.invites("i.invitee_did = $1", [did]);
  }

  async setReadMarker(
    did: string,
    channelId: string,
    seq: number,
    at: number,
    signed: SignedReadMarker | null = null,
  ): Promise<ReadMarkerRow> {
    // As SQLite's: the signed marker goes with the seq it set.
    const rows: ReadMarkerColumns[] = await this.db.run(
      (sql) => sql`
        INSERT INTO read_markers (did, channel_id, seq, updated_at, signed_json)
        VALUES (${did}, ${channelId},
          GREATEST(0, LEAST(${seq}::bigint, COALESCE((SELECT last_seq FROM channels WHERE id = ${channelId}), 0))),
          ${at}, ${signed ? JSON.stringify(signed) : null})
        ON CONFLICT (did, channel_id) DO UPDATE SET
          signed_json = CASE
            WHEN excluded.seq > read_markers.seq
              OR (excluded.seq = read_markers.seq AND read_markers.signed_json IS NULL)
            THEN excluded.signed_json ELSE read_markers.signed_json END,
          seq = GREATEST(read_markers.seq, excluded.seq), updated_at = excluded.updated_at
        RETURNING channel_id, seq, signed_json`,
    );
    return toMarker(rows[0] as ReadMarkerColumns);
  }

  async readMarkers(did: string): Promise<ReadMarkerRow[]> {
    const rows: ReadMarkerColumns[] = await this.db.run(
      (sql) => sql`
        SELECT r.channel_id, r.seq, r.signed_json FROM read_markers r
        JOIN members m ON m.channel_id = r.channel_id AND m.did = r.did
        WHERE r.did = ${did} ORDER BY r.channel_id COLLATE "C"`,
    );
    return rows.map(toMarker);
  }
}
