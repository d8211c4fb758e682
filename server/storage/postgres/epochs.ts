import type { WrappedEpochKey } from "../../../core/protocol/index.ts";
import { type EpochColumns, type Int8, num, toEpoch } from "../rows.ts";
import type { EpochInsertResult, EpochRow, EpochState, EpochStore } from "../types.ts";
import type { PgClient } from "./client.ts";

interface StateRow {
  channel_version: Int8 | null;
  type: string | null;
  join_token_hash: string | null;
  link_voided: number | null;
  /** Columns of the current epoch, all null when there is none. */
  channel_id: string | null;
}

export class PostgresEpochs implements EpochStore {
  constructor(private readonly db: PgClient) {}

  async state(channelId: string): Promise<EpochState> {
    // One statement, so one snapshot: the current epoch and the channel's version agree.
    const [r]: (StateRow & Partial<EpochColumns>)[] = await this.db.run(
      (sql) => sql`
        SELECT c.member_version AS channel_version, c.type, c.join_token_hash, c.link_voided, e.*
        FROM (SELECT 1) AS one
        LEFT JOIN channels c ON c.id = ${channelId}
        LEFT JOIN LATERAL (
          SELECT * FROM epochs WHERE channel_id = ${channelId} ORDER BY epoch_number DESC LIMIT 1
        ) e ON true`,
    );
    const memberVersion = r?.channel_version == null ? 0 : num(r.channel_version);
    const current = r && r.channel_id != null ? toEpoch(r as EpochColumns) : null;
    return {
      current,
      memberVersion,
      rotationRequired: !current || current.memberVersion !== memberVersion,
      linkRotationRequired: r?.type === "secret" && (r.join_token_hash === null || r.link_voided === 1),
    };
  }

  async insert(
    e: EpochRow,
    wrappedKeys: WrappedEpochKey[],
    opts: { joinTokenHash?: string } = {},
  ): Promise<EpochInsertResult> {
    return this.db.tx(async (tx): Promise<EpochInsertResult> => {
      // The compare-and-swap holds the channel row lock: concurrent inserts of the same epoch number
      // (and member changes, which take the same lock) are serialized, and each sees the last commit.
      const [channel]: { member_version: Int8 }[] =
        await tx`SELECT member_version FROM channels WHERE id = ${e.channelId} FOR NO KEY UPDATE`;
      const [current]: { n: Int8 | null }[] =
        await tx`SELECT MAX(epoch_number) AS n FROM epochs WHERE channel_id = ${e.channelId}`;
      if (e.epochNumber !== num(current?.n ?? 0) + 1) return "conflict";
      if (num(channel?.member_version ?? 0) !== e.memberVersion) return "members-changed";
      await tx`
        INSERT INTO epochs (channel_id, epoch_number, epoch_id, commit_json, signature, creator_did, created_at, member_version, admissions_json, key_change_json)
        VALUES (${e.channelId}, ${e.epochNumber}, ${e.epochId}, ${JSON.stringify(e.commit)}, ${e.signature},
          ${e.creatorDid}, ${e.createdAt}, ${e.memberVersion}, ${JSON.stringify(e.admissions)},
          ${e.keyChange ? JSON.stringify(e.keyChange) : null})`;
      if (wrappedKeys.length > 0) {
        await tx`
          INSERT INTO epoch_keys (channel_id, epoch_number, recipient_did, wrapped_json)
          SELECT ${e.channelId}, ${e.epochNumber}, k.recipient, k.wrapped
          FROM unnest(${tx.array(
            wrappedKeys.map((k) => k.recipientDid),
            "TEXT",
          )}, ${tx.array(
            wrappedKeys.map((k) => JSON.stringify(k)),
            "TEXT",
          )}) AS k(recipient, wrapped)`;
      }
      // The new link takes effect with the epoch whose sealed state carries its secret, never
      // without it (a refused epoch leaves the old token, or the voided state, in place).
      if (opts.joinTokenHash !== undefined) {
        await tx`UPDATE channels SET join_token_hash = ${opts.joinTokenHash}, link_voided = 0 WHERE id = ${e.channelId}`;
      }
      return "ok";
    });
  }

  async keysFor(channelId: string, did: string): Promise<WrappedEpochKey[]> {
    const rows: { wrapped_json: string }[] = await this.db.run(
      (sql) => sql`
        SELECT wrapped_json FROM epoch_keys WHERE channel_id = ${channelId} AND recipient_did = ${did}
        ORDER BY epoch_number`,
    );
    return rows.map((r) => JSON.parse(r.wrapped_json) as WrappedEpochKey);
  }

  async byNumbers(channelId: string, epochNumbers: number[]): Promise<EpochRow[]> {
    if (epochNumbers.length === 0) return [];
    const rows: EpochColumns[] = await this.db.run(
      (sql) => sql`
        SELECT * FROM epochs WHERE channel_id = ${channelId}
          AND epoch_number = ANY(${sql.array(epochNumbers, "BIGINT")})
        ORDER BY epoch_number`,
    );
    return rows.map(toEpoch);
  }
}
