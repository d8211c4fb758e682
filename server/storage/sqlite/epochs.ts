import type { Database } from "bun:sqlite";
import type { Commit, WrappedEpochKey } from "../../../core/protocol/index.ts";
import type { EpochInsertResult, EpochRow, EpochState, EpochStore } from "../types.ts";

interface Row {
  channel_id: string;
  epoch_number: number;
  epoch_id: string;
  commit_json: string;
  signature: string;
  creator_did: string;
  created_at: number;
  member_version: number;
}

const toEpoch = (r: Row): EpochRow => ({
  channelId: r.channel_id,
  epochNumber: r.epoch_number,
  epochId: r.epoch_id,
  commit: JSON.parse(r.commit_json) as Commit,
  signature: r.signature,
  creatorDid: r.creator_did,
  createdAt: r.created_at,
  memberVersion: r.member_version,
});

export class SqliteEpochs implements EpochStore {
  constructor(private readonly db: Database) {}

  private currentRow(channelId: string): Row | null {
    return this.db
      .query("SELECT * FROM epochs WHERE channel_id = ? ORDER BY epoch_number DESC LIMIT 1")
      .get(channelId) as Row | null;
  }

  private memberVersion(channelId: string): number {
    const r = this.db.query("SELECT member_version FROM channels WHERE id = ?").get(channelId) as {
      member_version: number;
    } | null;
    return r?.member_version ?? 0;
  }

  async state(channelId: string): Promise<EpochState> {
    return this.db.transaction((): EpochState => {
      const row = this.currentRow(channelId);
      const memberVersion = this.memberVersion(channelId);
      return {
        current: row ? toEpoch(row) : null,
        memberVersion,
        rotationRequired: !row || row.member_version !== memberVersion,
      };
    })();
  }

  async insert(e: EpochRow, wrappedKeys: WrappedEpochKey[]): Promise<EpochInsertResult> {
    return this.db
      .transaction((): EpochInsertResult => {
        const current = this.currentRow(e.channelId);
        if (e.epochNumber !== (current?.epoch_number ?? 0) + 1) return "conflict";
        if (this.memberVersion(e.channelId) !== e.memberVersion) return "members-changed";
        this.db
          .query(
            `INSERT INTO epochs (channel_id, epoch_number, epoch_id, commit_json, signature, creator_did, created_at, member_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
          );
        const insertKey = this.db.query(
          "INSERT INTO epoch_keys (channel_id, epoch_number, recipient_did, wrapped_json) VALUES (?, ?, ?, ?)",
        );
        for (const k of wrappedKeys)
          insertKey.run(e.channelId, e.epochNumber, k.recipientDid, JSON.stringify(k));
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
}
