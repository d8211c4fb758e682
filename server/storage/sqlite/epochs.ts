import type { Database } from "bun:sqlite";
import type { WrappedEpochKey } from "../../../core/protocol/index.ts";
import { type EpochColumns, type Int8, num, toEpoch } from "../rows.ts";
import type { EpochInsertResult, EpochRow, EpochState, EpochStore } from "../types.ts";

interface ChannelState {
  member_version: number;
  type: string;
  join_token_hash: string | null;
  link_voided: number;
}

/** state()'s one row: the channel's columns (null without a channel), then the current epoch's (null without one). */
type StateColumns = {
  channel_version: Int8 | null;
  channel_type: string | null;
  channel_join_token_hash: string | null;
  channel_link_voided: number | null;
} & { [K in keyof EpochColumns]: EpochColumns[K] | null };

export class SqliteEpochs implements EpochStore {
  constructor(private readonly db: Database) {}

  private currentRow(channelId: string): EpochColumns | null {
    return this.db
      .query("SELECT * FROM epochs WHERE channel_id = ? ORDER BY epoch_number DESC LIMIT 1")
      .get(channelId) as EpochColumns | null;
  }

  private channelState(channelId: string): ChannelState | null {
    return this.db
      .query("SELECT member_version, type, join_token_hash, link_voided FROM channels WHERE id = ?")
      .get(channelId) as ChannelState | null;
  }

  async state(channelId: string): Promise<EpochState> {
    // One statement, so one snapshot (the current epoch and the channel's version agree) without
    // a transaction's BEGIN and COMMIT: every channel:joined answer reads this.
    const r = this.db
      .query(
        `SELECT c.member_version AS channel_version, c.type AS channel_type,
           c.join_token_hash AS channel_join_token_hash, c.link_voided AS channel_link_voided, e.*
         FROM (SELECT 1) AS one
         LEFT JOIN channels c ON c.id = ?1
         LEFT JOIN (SELECT * FROM epochs WHERE channel_id = ?1 ORDER BY epoch_number DESC LIMIT 1) e ON 1`,
      )
      .get(channelId) as StateColumns;
    const current = r.channel_id === null ? null : toEpoch(r as EpochColumns);
    const memberVersion = r.channel_version == null ? 0 : num(r.channel_version);
    return {
      current,
      memberVersion,
      rotationRequired: !current || current.memberVersion !== memberVersion,
      linkRotationRequired:
        r.channel_type === "secret" && (r.channel_join_token_hash === null || r.channel_link_voided === 1),
    };
  }

  async insert(
    e: EpochRow,
    wrappedKeys: WrappedEpochKey[],
    opts: { joinTokenHash?: string } = {},
  ): Promise<EpochInsertResult> {
    return this.db
      .transaction((): EpochInsertResult => {
        const current = this.currentRow(e.channelId);
        if (e.epochNumber !== num(current?.epoch_number ?? 0) + 1) return "conflict";
        if ((this.channelState(e.channelId)?.member_version ?? 0) !== e.memberVersion)
          return "members-changed";
        this.db
          .query(
            `INSERT INTO epochs (channel_id, epoch_number, epoch_id, commit_json, signature, creator_did, created_at, member_version, admissions_json, key_change_json)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            e.channelId,
            e.epochNumber,
            e.epochId,
            JSON.stringify(e.commit),
            e.signature,
            e.creatorDid,
            e.createdAt,
            e.memberVersion,
            JSON.stringify(e.admissions),
            e.keyChange ? JSON.stringify(e.keyChange) : null,
          );
        const insertKey = this.db.query(
          "INSERT INTO epoch_keys (channel_id, epoch_number, recipient_did, wrapped_json) VALUES (?, ?, ?, ?)",
        );
        for (const k of wrappedKeys)
          insertKey.run(e.channelId, e.epochNumber, k.recipientDid, JSON.stringify(k));
        // The new link takes effect with the epoch whose sealed state carries its secret, never
        // without it (a refused epoch leaves the old token, or the voided state, in place).
        if (opts.joinTokenHash !== undefined) {
          this.db
            .query("UPDATE channels SET join_token_hash = ?, link_voided = 0 WHERE id = ?")
            .run(opts.joinTokenHash, e.channelId);
        }
        return "ok";
      })
      .immediate();
  }

  async keysFor(channelId: string, did: string): Promise<WrappedEpochKey[]> {
    const rows = this.db
      .query(
        "SELECT wrapped_json FROM epoch_keys WHERE channel_id = ? AND recipient_did = ? ORDER BY epoch_number",
      )
      .all(channelId, did) as { wrapped_json: string }[];
    return rows.map((r) => JSON.parse(r.wrapped_json) as WrappedEpochKey);
  }

  async byNumbers(channelId: string, epochNumbers: number[]): Promise<EpochRow[]> {
    if (epochNumbers.length === 0) return [];
    const rows = this.db
      .query(
        `SELECT * FROM epochs WHERE channel_id = ? AND epoch_number IN (SELECT value FROM json_each(?))
         ORDER BY epoch_number`,
      )
      .all(channelId, JSON.stringify(epochNumbers)) as EpochColumns[];
    return rows.map(toEpoch);
  }
}
