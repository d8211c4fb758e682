import { verifyCommit, verifyObject } from "../../core/crypto/index.ts";
import {
  type Admissions,
  type AnyChannelType,
  ApiError,
  type CommitV2,
  type CommitV3,
  type EpochInfo,
  type KeyChange,
  type RouteBody,
  type WrappedEpochKey,
  WsEvent,
} from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { EpochRow, MemberRow, Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { sha256Hex } from "../util/secrets.ts";
import type { AuthContext } from "./auth-service.ts";
import { requireMember } from "./channel-access.ts";
import { toEpochInfo, toEpochRecord, uriOf } from "./records.ts";

export { toEpochInfo };

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

  /**
   * Only the caller's own wrapped keys: nobody can even fetch ciphertext of another member's key.
   * With them, the signed commit (and admissions) of each of those epochs, so a client can check
   * every key against its commit (protocol §7) before using it. Epochs are immutable once stored,
   * so the two reads need no common transaction.
   */
  async keys(ctx: AuthContext, body: RouteBody<"getEpochKeys">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    const since = body.sinceEpoch ?? 0;
    const epochKeys = (await this.storage.epochs.keysFor(channel.id, ctx.did)).filter(
      (k) => k.epochNumber > since,
    );
    // Every commit from the caller's first wrapped epoch (or after `since`) to the current one, so a
    // client can check each member-list change even across epochs it holds no key for (its own key
    // changed, say). Before its first key the caller was not a member: nothing of that is sent.
    const first = body.sinceEpoch !== undefined ? since + 1 : (epochKeys[0]?.epochNumber ?? null);
    const current = (await this.storage.epochs.state(channel.id)).current?.epochNumber ?? 0;
    const numbers: number[] = [];
    if (first !== null) for (let n = first; n <= current; n++) numbers.push(n);
    const epochs = (await this.storage.epochs.byNumbers(channel.id, numbers)).map(toEpochRecord);
    return { success: true as const, channelId: channel.id, epochKeys, epochs };
  }

  async getInfo(ctx: AuthContext, body: RouteBody<"getEpochInfo">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    return { success: true as const, epochInfo: await this.info(channel.id) };
  }

  /**
   * Accepts a member's new epoch only when it is a v2 or v3 commit signed by the caller, numbered
   * current + 1, chained to the current epoch, and addressed to exactly the current member set
   * (protocol §5, §7, §8); once a channel has a v3 epoch only v3 commits follow. Each member's `fp`
   * follows §8 "Key changes on the server": the creator and members new to the epoch under their
   * current key, every continuing member under the fp the previous commit lists for them (a replaced
   * key takes effect only in its owner's own `key-change` commit). In invite and secret channels every
   * member the epoch adds must have stored admission evidence; a secret channel whose link is void
   * or unset must get a new joinToken with it. The member version read here is checked again inside
   * the insert transaction, so a join or leave (or a kick that voids the link) that lands meanwhile
   * turns the insert into an EpochConflict instead of an epoch that misses someone, includes a
   * leaver, or was judged against stale evidence: admissions change only with the member set.
   *
   * Any member may set a new link (joinToken) with an epoch, not only the owner: the secret is sealed
   * in the commit for every member, who all could share the old link anyway, and the owner's kick
   * makes the rotating client, whoever it is, produce a new one.
   */
  async create(ctx: AuthContext, body: RouteBody<"createEpoch">) {
    const { channel } = await requireMember(this.storage, ctx, body.channelUri);
    const { wrappedKeys, signature, joinToken, keyChange } = body;
    // The route schema admits v2 and v3; this guards any other caller of the service.
    const commit = body.commit as CommitV2 | CommitV3;
    if (commit.v !== 2 && commit.v !== 3) throw new ApiError("InvalidRequest", "commit.v: must be 3");
    // Only a secret channel has a link; a token elsewhere would be a join gate nobody checks.
    if (joinToken !== undefined && channel.type !== "secret") {
      throw new ApiError("InvalidRequest", "joinToken: only a secret channel has a join token");
    }
    if (commit.channelId !== channel.id)
      throw new ApiError("InvalidRequest", "commit.channelId: not this channel");
    if (commit.creatorDid !== ctx.did)
      throw new ApiError("InvalidRequest", "commit.creatorDid: must be the caller");

    const state = await this.storage.epochs.state(channel.id);
    // Protocol §8: no v2 commit after a channel's first v3 commit (as no v1 after v2). Every later
    // epoch is v3 too, so the current one tells.
    if (commit.v === 2 && state.current?.commit.v === 3) {
      throw new ApiError(
        "InvalidRequest",
        "commit.v: must be 3: this channel has a v3 epoch, and version 2 commits no longer follow it",
      );
    }
    // A direct conversation's epoch 1 is its opener's to make: every other member's admission is an
    // invite the opener signed (docs/protocol-extensions.md "Direct conversations").
    if (channel.type === "direct" && !state.current && ctx.did !== channel.creatorDid) {
      throw new ApiError(
        "InvalidRequest",
        "commit.creatorDid: the conversation's first epoch is its opener's to make",
      );
    }
    const currentNumber = state.current?.epochNumber ?? 0;
    if (commit.epochNumber !== currentNumber + 1) throw conflict(`Epoch ${currentNumber + 1} is next`);
    if (commit.prevEpochId !== (state.current?.epochId ?? null)) {
      throw new ApiError("InvalidRequest", "commit.prevEpochId: must be the current epoch id");
    }
    // Epoch 1 is the owner's to make (protocol §5, §7: clients accept it only from the channel's
    // creator, the did in its uri): another member's would leave the channel stuck for everyone.
    // Retention is the channel's owner's to sign (docs/protocol-extensions.md "Retention"): clients
    // read it only from the owner's commits, so the server keeps it only from them.
    if (commit.v === 3 && commit.retentionDays !== undefined && ctx.did !== channel.creatorDid) {
      throw new ApiError(
        "InvalidRequest",
        "commit.retentionDays: only the channel's owner sets its retention",
      );
    }
    if (commit.epochNumber === 1 && ctx.did !== channel.creatorDid) {
      throw new ApiError("Forbidden", "Only the channel's owner makes its first epoch (epoch 1)");
    }

    const members = await this.storage.channels.members(channel.id);
    const current = new Map(members.map((m) => [m.did, m.fingerprint]));
    const dids = commit.members.map((m) => m.did);
    for (let i = 1; i < dids.length; i++) {
      if ((dids[i - 1] as string) >= (dids[i] as string)) {
        throw new ApiError("InvalidRequest", "commit.members: must be sorted by did without duplicates");
      }
    }
    if (commit.v === 3) {
      // Protocol §8: strictly ascending by did, then device (code unit order; both are ASCII).
      const keys = commit.chains.map((c) => [c.did, c.device] as const);
      for (let i = 1; i < keys.length; i++) {
        const [a, b] = [keys[i - 1] as readonly [string, string], keys[i] as readonly [string, string]];
        if (a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1])) {
          throw new ApiError(
            "InvalidRequest",
            `commit.chains.${i}: must be sorted by did, then device, without duplicates`,
          );
        }
      }
    }
    // Protocol §8 "Key changes on the server": the fp each member must be listed under.
    const previousFp = new Map<string, string>(
      (state.current?.commit.members ?? []).map((m: { did: string; fp: string }) => [m.did, m.fp]),
    );
    const expectedFp = (did: string): string | null | undefined =>
      did === commit.creatorDid || !previousFp.has(did) ? current.get(did) : previousFp.get(did);
    if (dids.length !== current.size || commit.members.some((m) => !current.has(m.did))) {
      throw conflict("commit.members is not the current member set");
    }
    commit.members.forEach((m, i) => {
      if (m.fp === expectedFp(m.did)) return;
      if (m.did !== commit.creatorDid && previousFp.has(m.did) && m.fp === current.get(m.did)) {
        // A continuing member's new key, listed by someone else: only its owner's commit moves it
        // (422, not 409: fetching again would give the same key and the same refusal).
        throw new ApiError(
          "InvalidRequest",
          `commit.members.${i}.fp: ${m.did} replaced their key; until their own key-change commit, list the fp of the previous epoch's commit`,
        );
      }
      throw conflict("commit.members is not the current member set with their keys");
    });
    const creatorMoved = previousFp.has(ctx.did) && previousFp.get(ctx.did) !== current.get(ctx.did);
    if (commit.v === 3 && creatorMoved && commit.reason !== "key-change") {
      throw new ApiError(
        "InvalidRequest",
        "commit.reason: must be key-change: your key changed since the previous epoch",
      );
    }
    // Clients pin a did's handle from signed commits (protocol §7 "Names"): a commit must never
    // carry a handle the account does not have, except that a continuing member listed by someone
    // else keeps the name the previous commit signed for them (protocol §8: only their own commit
    // renames them), as their key does. An ATProto account whose handle moved (docs/atproto.md) is
    // thus still listed under the old name until its own commit, and the channel goes on meanwhile.
    const byDid = new Map(members.map((m) => [m.did, m]));
    const previousHandle = new Map<string, string | undefined>(
      (state.current?.commit.members ?? []).map((m: { did: string; handle?: string }) => [m.did, m.handle]),
    );
    commit.members.forEach((m, i) => {
      const signedBefore = m.did !== commit.creatorDid && previousHandle.get(m.did) === m.handle;
      if (byDid.get(m.did)?.handle !== m.handle && !signedBefore) {
        throw new ApiError("InvalidRequest", `commit.members.${i}.handle: must be that member's handle`);
      }
    });
    checkWrappedKeys(wrappedKeys, commit.epochId, commit.epochNumber, current);
    const admissions = admissionsFor(channel.type, commit, state.current, byDid);

    // A voided (kick, upgrade) or never-set link is replaced only by a new one that members know.
    if (state.linkRotationRequired && joinToken === undefined) {
      throw new ApiError(
        "RotationRequired",
        "A new secret link is required: send joinToken for a new link secret with this epoch",
      );
    }

    const creator = await this.storage.accounts.byDid(ctx.did);
    if (!creator?.publicKey || !(await verifyCommit(commit, signature, creator.publicKey))) {
      throw new ApiError("InvalidRequest", "signature: does not verify under the creator's public key");
    }
    if (keyChange !== undefined) {
      await this.checkKeyChange(keyChange, commit, previousFp.get(ctx.did), creator.fingerprint);
    }

    const row: EpochRow = {
      channelId: channel.id,
      epochNumber: commit.epochNumber,
      epochId: commit.epochId,
      commit,
      signature,
      createdAt: this.clock.now(),
      creatorDid: ctx.did,
      memberVersion: state.memberVersion,
      admissions,
      ...(keyChange ? { keyChange } : {}),
    };
    const result = await this.storage.epochs.insert(
      row,
      wrappedKeys,
      // Only the token's hash is kept, as for every secret; set in the insert's own transaction.
      joinToken === undefined ? {} : { joinTokenHash: sha256Hex(joinToken) },
    );
    if (result === "conflict") throw conflict("Another member created this epoch first");
    if (result === "members-changed") throw conflict("The member set changed while the epoch was made");
    // The owner's newest commit is the channel's retention (absent: none), as members' clients read it.
    if (ctx.did === channel.creatorDid) {
      await this.storage.retention.setChannelDays(
        channel.id,
        commit.v === 3 ? (commit.retentionDays ?? null) : null,
      );
    }
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
    // The insert checked, in its transaction, that nothing moved since `state` was read: the new
    // epoch is current, no rotation is due, and any void link was replaced (no second read needed).
    const epochInfo = toEpochInfo({
      current: row,
      memberVersion: state.memberVersion,
      rotationRequired: false,
      linkRotationRequired: false,
    });
    return { success: true as const, epochInfo };
  }

  /**
   * A key-change statement (protocol §8) travels only with its signer's own v3 `key-change` commit
   * and must say exactly that move: the caller, this channel and epoch, from the fp the previous
   * commit lists for them to the key they hold now, signed by that old key (kept in the account's
   * key history). The server stores it for readers, who check it again under their pinned key.
   */
  private async checkKeyChange(
    keyChange: KeyChange,
    commit: CommitV2 | CommitV3,
    oldFp: string | undefined,
    currentFp: string | null,
  ): Promise<void> {
    const bad = (why: string) => new ApiError("InvalidRequest", `keyChange${why}`);
    if (commit.v !== 3 || commit.reason !== "key-change")
      throw bad(": only with a v3 commit whose reason is key-change");
    const s = keyChange.statement;
    if (s.did !== commit.creatorDid) throw bad(".statement.did: must be the caller");
    if (s.channelId !== commit.channelId) throw bad(".statement.channelId: must be this channel");
    if (s.epochId !== commit.epochId) throw bad(".statement.epochId: must be the commit's epochId");
    if (s.newFp !== currentFp) throw bad(".statement.newFp: must be the fingerprint of your current key");
    if (oldFp === undefined || s.oldFp !== oldFp) {
      throw bad(".statement.oldFp: must be the fp the previous epoch's commit lists for you");
    }
    if (s.oldFp === s.newFp) throw bad(".statement: oldFp and newFp are the same key");
    const old = (await this.storage.accounts.previousKeys([s.did])).find((k) => k.fingerprint === s.oldFp);
    if (!old || !(await verifyObject(s, keyChange.signature, old.publicKey))) {
      throw bad(".signature: does not verify under your previous key");
    }
  }
}

/**
 * The admission evidence of every member the commit adds: those not in the previous epoch's commit
 * (for epoch 1, everyone but its creator). In invite and secret channels each must have evidence of
 * the channel's kind, else the epoch is refused: clients wrap only to joiners whose evidence they
 * can check (protocol §7), and the server must not be the one to let a ghost in. Public channels
 * need none; what evidence exists is still recorded.
 */
function admissionsFor(
  type: AnyChannelType,
  commit: CommitV2 | CommitV3,
  previous: EpochRow | null,
  members: Map<string, MemberRow>,
): Admissions {
  const before = new Set<string>(
    previous ? previous.commit.members.map((m: { did: string }) => m.did) : [commit.creatorDid],
  );
  const admissions: Admissions = {};
  for (const m of commit.members) {
    if (before.has(m.did)) continue;
    const evidence = members.get(m.did)?.admission ?? null;
    const fits =
      evidence !== null &&
      (type === "public" || evidence.kind === "invite" || (type === "secret" && evidence.kind === "link"));
    if (type !== "public" && !fits) {
      throw new ApiError(
        "InvalidRequest",
        `commit.members: ${m.did} has no admission evidence for this channel (an invite or a link proof); they must join again`,
      );
    }
    if (evidence !== null) admissions[m.did] = evidence;
  }
  return admissions;
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
