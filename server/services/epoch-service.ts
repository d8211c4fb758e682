import { verifyCommit } from "../../core/crypto/index.ts";
import {
  ApiError,
  type EpochInfo,
  type RouteBody,
  type WrappedEpochKey,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { EpochState, Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import { uriOf } from "./records.ts";

export function toEpochInfo(state: EpochState): EpochInfo {
  const e = state.current;
  return {
    epochId: e?.epochId ?? null,
    epochNumber: e?.epochNumber ?? 0,
    createdAt: e?.createdAt ?? null,
    commit: e?.commit ?? null,
    signature: e?.signature ?? null,
    rotationRequired: state.rotationRequired,
  };
}

const conflict = (why: string) =>
  new ApiError("EpochConflict", `${why}; fetch the epoch info and members again`);

export class EpochService {
  constructor(
    private readonly storage: Storage,
    private readonly bus: Bus,
    private readonly clock: Clock,
  ) {}

  async info(channelId: string): Promise<EpochInfo> {
    return toEpochInfo(await this.storage.epochs.state(channelId));
  }

  /** Only the caller's own wrapped keys: nobody can even fetch ciphertext of another member's key. */
  async keys(ctx: AuthContext, body: RouteBody<"getEpochKeys">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    const epochKeys = await this.storage.epochs.keysFor(channel.id, ctx.did);
    return { success: true as const, channelId: channel.id, epochKeys };
  }

  async getInfo(ctx: AuthContext, body: RouteBody<"getEpochInfo">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    return { success: true as const, epochInfo: await this.info(channel.id) };
  }

  /**
   * Accepts a member's new epoch only when it is signed by the caller, numbered current + 1, chained
   * to the current epoch, and addressed to exactly the current member set under their current keys
   * (protocol §5). The member version read here is checked again inside the insert transaction, so a
   * join or leave that lands meanwhile turns the insert into an EpochConflict instead of an epoch that
   * misses someone or includes a leaver.
   */
  async create(ctx: AuthContext, body: RouteBody<"createEpoch">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    const { commit, wrappedKeys, signature } = body;
    if (commit.channelId !== channel.id)
      throw new ApiError("InvalidRequest", "commit.channelId: not this channel");
    if (commit.creatorDid !== ctx.did)
      throw new ApiError("InvalidRequest", "commit.creatorDid: must be the caller");

    const state = await this.storage.epochs.state(channel.id);
    const currentNumber = state.current?.epochNumber ?? 0;
    if (commit.epochNumber !== currentNumber + 1) throw conflict(`Epoch ${currentNumber + 1} is next`);
    if (commit.prevEpochId !== (state.current?.epochId ?? null)) {
      throw new ApiError("InvalidRequest", "commit.prevEpochId: must be the current epoch id");
    }

    const members = await this.storage.channels.members(channel.id);
    const expected = new Map(members.map((m) => [m.did, m.fingerprint]));
    const dids = commit.members.map((m) => m.did);
    for (let i = 1; i < dids.length; i++) {
      if ((dids[i - 1] as string) >= (dids[i] as string)) {
        throw new ApiError("InvalidRequest", "commit.members: must be sorted by did without duplicates");
      }
    }
    if (dids.length !== expected.size || commit.members.some((m) => expected.get(m.did) !== m.fp)) {
      throw conflict("commit.members is not the current member set with their current keys");
    }
    checkWrappedKeys(wrappedKeys, commit.epochId, commit.epochNumber, expected);

    const creator = await this.storage.accounts.byDid(ctx.did);
    if (!creator?.publicKey || !(await verifyCommit(commit, signature, creator.publicKey))) {
      throw new ApiError("InvalidRequest", "signature: does not verify under the creator's public key");
    }

    const result = await this.storage.epochs.insert(
      {
        channelId: channel.id,
        epochNumber: commit.epochNumber,
        epochId: commit.epochId,
        commit,
        signature,
        createdAt: this.clock.now(),
        creatorDid: ctx.did,
        memberVersion: state.memberVersion,
      },
      wrappedKeys,
    );
    if (result === "conflict") throw conflict("Another member created this epoch first");
    if (result === "members-changed") throw conflict("The member set changed while the epoch was made");
    await this.bus.publish({
      kind: "channel",
      channelId: channel.id,
      frame: frame(WsEvent.epochCreated, {
        channelId: channel.id,
        channelUri: uriOf(channel),
        epochNumber: commit.epochNumber,
        epochId: commit.epochId,
      }),
    });
    return { success: true as const, epochInfo: await this.info(channel.id) };
  }
}

function checkWrappedKeys(
  keys: WrappedEpochKey[],
  epochId: string,
  epochNumber: number,
  members: Map<string, string | null>,
): void {
  const seen = new Set<string>();
  for (const k of keys) {
    if (k.epochId !== epochId || k.epochNumber !== epochNumber) {
      throw new ApiError(
        "InvalidRequest",
        "wrappedKeys: every key must carry the commit's epochId and epochNumber",
      );
    }
    if (seen.has(k.recipientDid)) throw new ApiError("InvalidRequest", "wrappedKeys: one key per member");
    seen.add(k.recipientDid);
  }
  if (seen.size !== members.size || [...seen].some((did) => !members.has(did))) {
    throw conflict("wrappedKeys must be addressed to exactly the current members");
  }
}
