import { TypeCompiler } from "@sinclair/typebox/compiler";
import { verifyDeletion } from "../../core/crypto/index.ts";
import {
  ApiError,
  Collections,
  EncryptedContent,
  Limits,
  type MessageRecord,
  type RouteBody,
  type TimelineRecord,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { AppendMessageResult, MessageRow, MessageTombstone, Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { newRkey } from "../util/ids.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import { SIGNED_OBJECT_WINDOW_MS } from "./channel-service.ts";
import { checkDirectSend } from "./direct-rules.ts";
import { toMessageRecord, toRecord, uriOf } from "./records.ts";

const contentCheck = TypeCompiler.Compile(EncryptedContent);
const messageUriRe = new RegExp(
  `^at://(did:plc:[a-z2-7]{24})/${Collections.message.replaceAll(".", "\\.")}/([a-z2-7]{19})$`,
);

/** At most this many v2 epoch ids are remembered (MessageService.v2Epochs). */
const V2_EPOCHS_CAP = 100_000;

/** Opaque page cursors: the seq to continue below, versioned so the format can change. */
export const encodeCursor = (seq: number) => Buffer.from(`v1:${seq}`).toString("base64url");
export function decodeCursor(cursor: string): number {
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m?.[1]) throw new ApiError("InvalidRequest", "cursor: not a cursor this server issued");
  return Number(m[1]);
}

/** A channel by id and canonical uri. */
export interface ChannelRef {
  id: string;
  uri: string;
  /** A direct conversation: its sends are checked against blocks (direct-rules.ts). */
  direct?: boolean;
}

/** A committed (or earlier committed) message: its record and that record's JSON. */
export interface SentMessage {
  record: MessageRecord;
  json: string;
}

export class MessageService {
  /**
   * Channels known to have a v3 epoch (protocol §8). Once a channel has one, every later epoch is v3
   * too (create-epoch refuses v2 after v3), so a channel never leaves this set; only v2 content needs
   * the answer, and after the first look it costs no query.
   */
  private readonly v3Channels = new Set<string>();
  /**
   * v2 epochs seen as a channel's current epoch, by epoch id → channel id. An epoch never changes
   * once stored, so "this id is a v2 epoch of that channel" stays true; whether it is still the
   * current one is checked by the commit (stale-epoch), so a send under a known v2 epoch costs no
   * query before it (the profile in docs/benchmarks.md: reading and parsing the epoch row per
   * message was the largest single cost of a v2 send). Bounded: cleared when it grows past the cap.
   */
  private readonly v2Epochs = new Map<string, string>();

  constructor(
    private readonly storage: Storage,
    private readonly bus: Bus,
    private readonly clock: Clock,
    /** Called after a message is deleted (its blobs go with it: server/blobs/). */
    private readonly onDeleted?: (
      channelId: string,
      authorDid: string,
      clientMsgId: string | null,
    ) => Promise<void>,
    /** /metrics: how long the bus takes with each stored message (server/ops/metrics.ts). */
    private readonly metrics?: { deliveryLatency: { observe(seconds: number): void } },
  ) {}

  /** Whether the channel has a v3 epoch (the current one is v3 exactly then), and the current epoch id. */
  async channelVersion(channelId: string): Promise<{ v3: boolean; epochId: string | null }> {
    if (this.v3Channels.has(channelId)) return { v3: true, epochId: null };
    const current = (await this.storage.epochs.state(channelId)).current;
    const v3 = current?.commit.v === 3;
    if (v3) this.v3Channels.add(channelId);
    else if (current) {
      if (this.v2Epochs.size >= V2_EPOCHS_CAP) this.v2Epochs.clear();
      this.v2Epochs.set(current.epochId, channelId);
    }
    return { v3, epochId: current?.epochId ?? null };
  }

  async list(ctx: AuthContext, body: RouteBody<"getMessages">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    const limit = body.limit ?? Limits.pageDefault;
    const chUri = uriOf(channel);
    if (body.since !== undefined) {
      if (body.cursor !== undefined)
        throw new ApiError("InvalidRequest", "cursor: not allowed together with since");
      const rows = await this.storage.timeline.since(channel.id, body.since, limit + 1);
      return {
        records: rows.slice(0, limit).map((r) => toRecord(r, chUri)),
        cursor: null,
        hasMore: rows.length > limit,
      };
    }
    const before = body.cursor === undefined ? null : decodeCursor(body.cursor);
    const rows = await this.storage.timeline.page(channel.id, limit + 1, before);
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = page[page.length - 1];
    return {
      records: page.map((r) => toRecord(r, chUri)),
      cursor: hasMore && last ? encodeCursor(last.seq) : null,
      hasMore,
    };
  }

  /**
   * A channel's records after `afterSeq`, oldest first, as the frames live delivery carries them: what
   * the Redis bus delivers when it missed some (a Redis restart; docs/decisions/redis-fanout.md).
   */
  async framesAfter(
    channelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ seq: number; text: string }[]> {
    const channel = await this.storage.channels.get(channelId);
    if (!channel) return [];
    const chUri = uriOf(channel);
    const rows = await this.storage.timeline.since(channelId, afterSeq, limit);
    return rows.map((r) => {
      const record = toRecord(r, chUri);
      const type = r.kind === "message" ? WsEvent.channelMessage : WsEvent.notifyJoined;
      return { seq: r.seq, text: JSON.stringify(frame(type, { record } as never)) };
    });
  }

  /** POST /api/message/send: persists, then broadcasts (see queue). */
  async send(ctx: AuthContext, body: RouteBody<"send">): Promise<{ record: TimelineRecord }> {
    const { sent } = await this.queue(ctx, body);
    return { record: (await sent).record };
  }

  /**
   * Checks a message and queues it for the next group commit; resolves once it is queued, so a
   * socket can go on to its next frame (its messages keep their order) while `sent` settles after
   * the commit and the broadcast, with the record and its JSON (serialised once, for the broadcast
   * and the socket's ack alike). The server cannot read `content`; it only checks the envelope: that
   * it is an EncryptedContent sent by the caller under the channel's current epoch, so a message can
   * never be attributed to someone else or sent under a key that a former member still holds.
   *
   * `joined` is the channel as this caller's socket joined it (its id and uri): then membership is
   * checked only where it counts, inside the commit (a member removed since is refused there).
   */
  async queue(
    ctx: AuthContext,
    body: RouteBody<"send">,
    joined?: ChannelRef,
  ): Promise<{ sent: Promise<SentMessage> }> {
    if (body.content.length > Limits.contentMaxChars) {
      throw new ApiError("TooLarge", `content: at most ${Limits.contentMaxChars} characters`);
    }
    const channel: ChannelRef = joined ?? (await this.memberChannel(ctx, body.channelUri));
    const chUri = channel.uri;
    let content: unknown;
    try {
      content = JSON.parse(body.content);
    } catch {
      throw new ApiError("InvalidRequest", "content: not JSON");
    }
    if (!contentCheck.Check(content)) {
      const first = contentCheck.Errors(content).First();
      throw new ApiError(
        "InvalidRequest",
        `content${first?.path.replaceAll("/", ".") ?? ""}: ${first?.message ?? "invalid"}`,
      );
    }
    // Version 1 content is legacy history only (protocol §7): nothing new is sent with v1 labels.
    if (content.v !== 2 && content.v !== 3) throw new ApiError("InvalidRequest", "content.v: must be 2 or 3");
    if (content.v === 3 && content.chain === undefined) {
      throw new ApiError("InvalidRequest", "content.chain: required in v3 content (protocol §8)");
    }
    if (content.v === 2 && content.chain !== undefined) {
      throw new ApiError("InvalidRequest", "content.chain: only v3 content carries a chain");
    }
    if (content.senderDid !== ctx.did)
      throw new ApiError("InvalidRequest", "content.senderDid: must be the sender");
    if (content.clientMsgId !== body.clientMsgId) {
      throw new ApiError("InvalidRequest", "content.clientMsgId: must equal clientMsgId");
    }
    // Known to be a v2 epoch of this channel: no look (and no promise) before the commit, which
    // refuses it unless it is still the current one; settle() then answers as the look would have.
    if (content.v === 2 && this.v2Epochs.get(content.epochId) !== channel.id)
      await this.checkV2Content(ctx, channel.id, content.epochId, body.clientMsgId);
    if (channel.direct) await checkDirectSend(this.storage, ctx.did, channel.id);
    const now = this.clock.now();
    // A retry of a message that was committed (but whose ack was lost) is answered "duplicate" with
    // the first record, even if an epoch rotation happened since (the store checks that first).
    const committed = this.storage.timeline.appendMessage(
      {
        channelId: channel.id,
        rkey: newRkey(now),
        authorDid: ctx.did,
        authorHandle: ctx.handle,
        clientMsgId: body.clientMsgId,
        content: body.content,
        createdAt: now,
      },
      content.epochId,
    );
    const v2 = content.v === 2;
    return { sent: committed.then((result) => this.settle(ctx, result, channel.id, chUri, v2)) };
  }

  /**
   * Protocol §8: content below v3 is refused (422) once the channel has a v3 epoch. v2 content is
   * taken only under the epoch that is current now and is v2: naming any other epoch is answered as
   * the commit would answer it (409 EpochConflict), so a v3 epoch made between this look and the
   * commit can never carry v2 content. A retry of a message committed earlier is left to the store,
   * which returns the first record (idempotency wins, as over rotation).
   */
  private async checkV2Content(
    ctx: AuthContext,
    channelId: string,
    epochId: string,
    clientMsgId: string,
  ): Promise<void> {
    const { v3, epochId: currentEpochId } = await this.channelVersion(channelId);
    if (!v3 && epochId === currentEpochId) return;
    if (await this.storage.timeline.byClientMsgId(ctx.did, clientMsgId)) return;
    if (v3) {
      throw new ApiError("InvalidRequest", "content.v: must be 3: this channel has a v3 epoch (protocol §8)");
    }
    throw new ApiError("EpochConflict", "content.epochId: not the current epoch; fetch epoch keys and retry");
  }

  /** The channel of `uri` if the caller is a member (else NotFound or Forbidden, as for any call). */
  async memberChannel(ctx: AuthContext, uri: string): Promise<ChannelRef> {
    const { channel } = await requireMember(this.storage, ctx, uri);
    return { id: channel.id, uri: uriOf(channel), direct: channel.type === "direct" };
  }

  /**
   * What a commit's answer means for the sender: a stored message is published at once, with no
   * further promise (the common case, once per message); anything else is answered by notStored.
   */
  private settle(
    ctx: AuthContext,
    result: AppendMessageResult,
    channelId: string,
    chUri: string,
    v2: boolean,
  ): SentMessage | Promise<SentMessage> {
    if (result.kind === "ok") return this.published(result.row, channelId, chUri);
    return this.notStored(ctx, result, channelId, chUri, v2);
  }

  private async notStored(
    ctx: AuthContext,
    result: Exclude<AppendMessageResult, { kind: "ok" }>,
    channelId: string,
    chUri: string,
    v2: boolean,
  ): Promise<SentMessage> {
    switch (result.kind) {
      case "not-member":
        // Removed (or left) before the commit: the same answer as any call by a non-member.
        await this.memberChannel(ctx, chUri);
        throw new ApiError("Forbidden", "You are not a member of this channel");
      case "duplicate": {
        const record = this.replay(result.row, channelId, chUri);
        return { record, json: JSON.stringify(record) };
      }
      case "rotation-required":
        throw new ApiError(
          "RotationRequired",
          "The member set changed: create the next epoch before sending",
        );
      case "stale-epoch":
        // v2 content under an epoch that is no longer current: a v3 epoch came since (protocol §8).
        if (v2 && (await this.channelVersion(channelId)).v3)
          throw new ApiError(
            "InvalidRequest",
            "content.v: must be 3: this channel has a v3 epoch (protocol §8)",
          );
        throw new ApiError(
          "EpochConflict",
          "content.epochId: not the current epoch; fetch epoch keys and retry",
        );
    }
  }

  /** A committed message: its record serialised once (for the fan-out and the ack) and handed to the bus. */
  private published(row: MessageRow, channelId: string, chUri: string): SentMessage {
    const record: MessageRecord = toMessageRecord(row, chUri);
    const json = JSON.stringify(record);
    // Not awaited: the ack says "stored", and live delivery never fails a send (a bus that cannot
    // publish logs it; members fill the gap from storage). On Redis the ack then does not wait
    // for Redis's round trip; in one process delivery has happened by the time this returns.
    const t0 = performance.now();
    void this.bus
      .publish({
        kind: "channel",
        channelId,
        frame: frame(WsEvent.channelMessage, { record }),
        text: `{"type":"${WsEvent.channelMessage}","data":{"record":${json}}}`,
      })
      .then(() => this.metrics?.deliveryLatency.observe((performance.now() - t0) / 1000));
    return { record, json };
  }

  /** The first record of a retried clientMsgId, as long as it is this channel's and still exists. */
  private replay(previous: MessageRow, channelId: string, chUri: string): MessageRecord {
    if (previous.channelId !== channelId) {
      throw new ApiError("InvalidRequest", "clientMsgId: already used for a message in another channel");
    }
    // A real message never has empty content (the schema requires it), so empty means deleted.
    if (previous.content === "") throw new ApiError("NotFound", "That message was deleted");
    return toMessageRecord(previous, chUri);
  }

  /**
   * The author, or an owner of the channel, may delete a message, with a deletion signed by
   * themselves (protocol §7). The message becomes a tombstone that keeps the signed deletion, so
   * members see who deleted it and can check that; a deletion the server cannot verify under the
   * caller's key is refused and changes nothing (it would be shown to members as "deleted by X").
   */
  async delete(ctx: AuthContext, body: RouteBody<"deleteMessage">): Promise<{ success: true }> {
    const m = messageUriRe.exec(body.uri);
    if (!m?.[2]) throw new ApiError("InvalidRequest", "uri: not a message uri");
    const { deletion, signature } = body;
    const row = await this.storage.timeline.byRkey(m[2]);
    // A tombstone (content "") is a message that no longer exists.
    if (row?.kind !== "message" || row.authorDid !== m[1] || row.content === "")
      throw new ApiError("NotFound", "Message not found");
    const channel = await this.storage.channels.get(row.channelId);
    const member = channel ? await this.storage.channels.member(channel.id, ctx.did) : null;
    if (!channel || !member) throw new ApiError("NotFound", "Message not found");
    // In a direct conversation nobody has owner powers: only the author deletes.
    if (row.authorDid !== ctx.did && (member.role !== "owner" || channel.type === "direct")) {
      throw new ApiError("Forbidden", "Only the author or a channel owner can delete a message");
    }
    // Authorization first (above): who may not see the message learns nothing from the body checks.
    if (deletion.v === 3) {
      // Protocol §8: a v3 deletion names what the author signed, the target's (did, clientMsgId).
      if (deletion.target.did !== row.authorDid || deletion.target.clientMsgId !== row.clientMsgId) {
        throw new ApiError(
          "InvalidRequest",
          "deletion.target: must be the message's author did and clientMsgId",
        );
      }
    } else {
      if (deletion.uri !== body.uri) throw new ApiError("InvalidRequest", "deletion.uri: must equal uri");
      // A v2 deletion names a uri the server assigned; once the channel is v3, readers accept only
      // deletions that name the target's signed pair.
      if ((await this.channelVersion(channel.id)).v3) {
        throw new ApiError(
          "InvalidRequest",
          "deletion.v: must be 3: this channel has a v3 epoch (protocol §8)",
        );
      }
    }
    if (deletion.byDid !== ctx.did)
      throw new ApiError("InvalidRequest", "deletion.byDid: must be the caller");
    if (deletion.channelId !== channel.id) {
      throw new ApiError("InvalidRequest", "deletion.channelId: must be the message's channel");
    }
    if (Math.abs(deletion.createdAt - this.clock.now()) > SIGNED_OBJECT_WINDOW_MS) {
      throw new ApiError(
        "InvalidRequest",
        "deletion.createdAt: must be within 24 hours of the server's time",
      );
    }
    const account = await this.storage.accounts.byDid(ctx.did);
    if (!account?.publicKey || !(await verifyDeletion(deletion, signature, account.publicKey))) {
      throw new ApiError("InvalidRequest", "signature: does not verify under your public key");
    }
    const signed = { deletion, signature };
    const tombstone = tombstoneOf(row.content);
    if (await this.storage.timeline.deleteMessage(row.rkey, signed, tombstone)) {
      await this.onDeleted?.(channel.id, row.authorDid, row.clientMsgId);
      await this.bus.publish({
        kind: "channel",
        channelId: channel.id,
        frame: frame(WsEvent.messageDeleted, {
          channelUri: uriOf(channel),
          uri: body.uri,
          deletion: signed,
          ...(tombstone ? { tombstone } : {}),
        }),
      });
    }
    return { success: true };
  }
}

/**
 * What a tombstone keeps of its message (protocol §8): the fields its EncryptedContent carried in the
 * clear that readers need to match a deletion's target and count the sender's chain. Null for content
 * that is not an envelope (nothing stored by this server is).
 */
export function tombstoneOf(contentJson: string): MessageTombstone | null {
  let content: unknown;
  try {
    content = JSON.parse(contentJson);
  } catch {
    return null;
  }
  if (!contentCheck.Check(content)) return null;
  return {
    senderDid: content.senderDid,
    clientMsgId: content.clientMsgId,
    ...(content.chain ? { chain: { device: content.chain.device, n: content.chain.n } } : {}),
    ...(content.epochNumber !== undefined ? { epochNumber: content.epochNumber } : {}),
  };
}
