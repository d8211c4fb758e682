import type { Identity } from "../../crypto/identity.ts";
import {
  buildKeyChange,
  CryptoText,
  canon,
  createEpoch,
  fingerprint,
  joinTokenFor,
  newLinkSecret,
  openInviteLink,
  reasonOf,
  signKeyChange,
  verifyInvite,
} from "../../crypto/index.ts";
import {
  ApiError,
  type CommitReason,
  type EpochInfo,
  type KeyChange,
  type Member,
} from "../../protocol/runtime.ts";
import { AwaitingOwnerKeysError, SendBlockedError } from "../errors.ts";
import type { SignerKeys } from "../keys/signer-keys.ts";
import { SecurityText } from "../view/security-text.ts";
import type { ChannelView, SecurityCheck, SecurityWarning } from "../view/state.ts";
import { type ChainState, type ChainStore, signedRetentionDays, type VerifiedEpoch } from "./chain.ts";
import type { EngineContext } from "./engine-context.ts";
import { checkAdmission, type EpochCandidate, openerOnly, type VerifyContext } from "./epoch-verify.ts";

const MAX_ROTATION_ATTEMPTS = 5;

/** What a rotation is for. */
export interface RotateOptions {
  reason?: CommitReason;
  newLink?: boolean;
  /**
   * The channel's owner only: the retention to sign into the new commit (days; null clears it).
   * Omitted: the owner's commit carries the retention in force on, so no rotation drops it.
   */
  retentionDays?: number | null;
}

/** What a rotation uses of the EpochManager (epoch-manager.ts): verifying, adopting, warning. */
export interface RotationHost {
  readonly keys: SignerKeys;
  readonly chains: ChainStore;
  view(channelId: string): ChannelView | undefined;
  chain(channelId: string): Promise<ChainState>;
  warn(
    channelId: string,
    check: SecurityCheck,
    o?: { epochNumber?: number | null; did?: string | null; handle?: string | null; detail?: string },
  ): SecurityWarning;
  checkMemberKeys(channelId: string | null, members: Member[]): Promise<void>;
  handleOf(did: string, fallback?: string): string;
  verifyContext(channelId: string, given?: Identity): Promise<VerifyContext>;
  adopt(channelId: string, cand: EpochCandidate, identity?: Identity): Promise<boolean>;
  anchor(channelId: string, info: EpochInfo): Promise<boolean>;
  loadUntil(channelId: string, n: number, epochId: string): Promise<void>;
  reconcile(channelId: string, info: EpochInfo): Promise<{ epochId: string; epochNumber: number } | string>;
}

/** An epoch this client made whose create-epoch answer it did not see (protocol §7, attack 1). */
interface PendingEpoch {
  epochId: string;
  commitCanon: string;
  key: Uint8Array;
  record: EpochCandidate;
}

/**
 * Making the next epoch (protocol §5 "Rotation", §7, §8), top to bottom: what the server calls
 * current must be the verified head (or, for a newcomer, an anchor); continuing members go in as the
 * previous verified commit lists them, joiners only with admission evidence; the v3 commit carries the
 * sender chains seen and, in a secret channel, the link; this user's own key change carries the old
 * key's statement; a lost answer is recognised as our own epoch only by its exact commit. The
 * EpochManager verifies and adopts what comes back, as it does any epoch.
 */
export class Rotation {
  private readonly rotations = new Map<string, Promise<void>>();
  private readonly pending = new Map<string, PendingEpoch>();

  constructor(
    private readonly m: RotationHost,
    private readonly c: EngineContext,
  ) {}

  /** Makes the next epoch; concurrent calls share one attempt. */
  rotate(channelId: string, opts: RotateOptions = {}): Promise<void> {
    let p = this.rotations.get(channelId);
    if (p) return p;
    p = this.doRotate(channelId, opts).finally(() => this.rotations.delete(channelId));
    this.rotations.set(channelId, p);
    return p;
  }

  /** After a lost create-epoch answer: the server's epoch is ours only if it is our exact commit. */
  private async adoptPending(channelId: string, info: EpochInfo): Promise<boolean> {
    const mine = this.pending.get(channelId);
    if (!mine || info.epochId !== mine.epochId || !info.commit) return false;
    this.pending.delete(channelId);
    if (canon(info.commit) !== mine.commitCanon) {
      this.m.warn(channelId, "signature", {
        epochNumber: info.epochNumber,
        detail: "our epoch id under another commit",
      });
      return false;
    }
    // Our own key, never the wrap the server hands back (it may be one of its own making).
    const ok = await this.m.adopt(channelId, {
      ...mine.record,
      admissions: info.admissions,
      epochKey: mine.key,
    });
    const view = this.m.view(channelId);
    if (ok && view) view.epoch = info;
    return ok;
  }

  private async doRotate(channelId: string, opts: RotateOptions): Promise<void> {
    const identity = this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    const me = this.c.me().did;
    for (let attempt = 0; attempt < MAX_ROTATION_ATTEMPTS; attempt++) {
      const { epochInfo: info } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
      // No epoch yet: epoch 1 is the owner's (the channel's creator, the did in its uri) and no one
      // else's; every client, this one included, would refuse anyone else's, and the server does.
      if (!info.epochId && (await this.m.verifyContext(channelId)).channelCreator !== me)
        throw new AwaitingOwnerKeysError(SecurityText.awaitingOwnerKeys);
      if (await this.adoptPending(channelId, info)) {
        if (!info.rotationRequired && !opts.newLink) return;
      }
      const chain = await this.m.chain(channelId);
      // Never build on an epoch older than (or different from) the newest one verified: that would
      // accept the server's rollback and fork the channel.
      const head = chain.head;
      if (
        head &&
        (info.epochNumber < head.epochNumber ||
          (info.epochNumber === head.epochNumber && info.epochId !== head.epochId))
      ) {
        const verdict = await this.m.reconcile(channelId, info);
        throw new SendBlockedError(typeof verdict === "string" ? verdict : SecurityText.sendBlocked);
      }
      // An automatic rotation (no reason given) happens only when the server requires one: a local
      // "rotation required" may be stale (frames race), and someone else may have won the race
      // already. Either way the current epoch, once verified, is what to use.
      const automatic = opts.reason === undefined && !opts.newLink;
      if ((attempt > 0 || automatic) && !info.rotationRequired && info.epochId && !opts.newLink) {
        await this.m.loadUntil(channelId, info.epochNumber, info.epochId);
        if (chain.head?.epochId === info.epochId) {
          const view = this.m.view(channelId);
          if (view) view.epoch = info;
          this.c.changed();
          return;
        }
      }
      // The base to build on: the server's current epoch, which this client must have verified
      // (or, as a newcomer with nothing verified, taken as its anchor).
      let prev: VerifiedEpoch | null = null;
      if (info.epochId) {
        await this.m.loadUntil(channelId, info.epochNumber, info.epochId);
        if (chain.epochs[String(info.epochNumber)]?.epochId !== info.epochId) {
          // A newcomer (or someone rejoining) is not in the current commit and holds no key for it;
          // anyone the commit lists must have been given the key, so for them this is a failure.
          // Listed under a key this device no longer has (the key was replaced: "I lost my key"), the
          // key went to the old key only, so this device is a newcomer too.
          const myKey = this.c.keyring.identity?.publicKey;
          const myFp = myKey ? await fingerprint(myKey) : null;
          const listsMe =
            info.commit?.members.some((m) => m.did === me && (myFp === null || m.fp === myFp)) ?? false;
          const ahead = !chain.head || info.epochNumber > chain.head.epochNumber;
          if (!(ahead && !listsMe && (await this.m.anchor(channelId, info)))) {
            const verdict = await this.m.reconcile(channelId, info);
            throw new SendBlockedError(typeof verdict === "string" ? verdict : SecurityText.sendBlocked);
          }
        }
        prev = chain.epochs[String(info.epochNumber)] ?? null;
      }
      const { members } = await this.c.api.call("getMembers", { channelUri: channelId });
      await this.m.checkMemberKeys(channelId, members);
      // Protocol §8: an invitee into a secret channel learns the link from its invite's sealedLink,
      // so it can check link admissions and seal the link in its join commit.
      if (
        prev &&
        !prev.linkSecret &&
        !chain.linkSecret &&
        this.m.view(channelId)?.channel.value.type === "secret"
      ) {
        const secret = await this.linkFromInvite(
          channelId,
          prev,
          members.find((m) => m.did === me)?.admission,
        );
        if (secret) {
          chain.linkSecret = secret;
          prev.linkSecret = secret;
          await this.m.chains.saveChain(channelId, prev.epochNumber);
        }
      }
      const ctx = await this.m.verifyContext(channelId);
      // A direct conversation's first epoch is its opener's, wrapped to everyone the opener admitted
      // with a signed invite; anyone else waits for it (the opener need not be online for it to
      // arrive later, and no other member could admit anyone).
      const direct = ctx.channelType === "direct" && !prev;
      if (direct && ctx.channelCreator !== null && ctx.channelCreator !== me) {
        throw new SendBlockedError(SecurityText.directNotStarted(this.m.handleOf(ctx.channelCreator)));
      }
      const opener = direct
        ? openerOnly({ creatorDid: me, members: [{ did: me, fp: await fingerprint(identity.publicKey) }] })
        : null;
      const before = new Map((prev?.members ?? []).map((m) => [m.did, m]));
      const block = (w: SecurityWarning): never => {
        const view = this.m.view(channelId);
        if (view) view.sendBlocked = true;
        throw new SendBlockedError(w.text);
      };
      const recipients = [];
      for (const m of members) {
        // This client, under its own key and name (a key-change or rename commit is its own to make).
        if (m.did === me) {
          recipients.push({ did: me, publicKey: identity.publicKey, handle: this.c.me().handle });
          continue;
        }
        const was = before.get(m.did);
        if (was) {
          // Protocol §8: a continuing member goes into the new commit exactly as the previous verified
          // commit lists them, key and name, never as get-members, get-keys or a frame says: only
          // their own key-change commit changes their key. The key wrapped to is the one whose
          // fingerprint the signed list names.
          const key = await this.m.keys.keyWithFp(m.did, was.fp);
          const offeredFp = m.publicKey
            ? await this.m.keys.fingerprintOf(m.publicKey).catch(() => null)
            : null;
          if (prev?.anchor && offeredFp !== null && offeredFp !== was.fp) {
            this.m.warn(channelId, "member-key", {
              epochNumber: prev.epochNumber,
              did: m.did,
              handle: this.m.handleOf(m.did, was.handle),
              detail: "anchor",
            });
          }
          if (!key) {
            block(
              this.m.warn(channelId, "member-key", {
                epochNumber: prev?.epochNumber ?? null,
                did: m.did,
                handle: this.m.handleOf(m.did, was.handle),
                detail: "anchor",
              }),
            );
          }
          recipients.push({
            did: m.did,
            publicKey: key as string,
            handle: was.handle ?? this.m.handleOf(m.did, m.handle),
          });
          continue;
        }
        const pinned = m.publicKey ? await this.c.keyring.pinned(m.did) : null;
        if (!m.publicKey || !pinned) throw new Error(`${m.handle} has no encryption key`);
        // Never wrap a new epoch key to a key this client has not accepted: a server that swaps a
        // member's key would otherwise receive the key itself.
        if (pinned !== m.publicKey) {
          throw new Error(`${m.handle}'s encryption key changed; compare safety numbers and accept it first`);
        }
        // Only members of the previous verified commit and joiners whose evidence checks (§7, §8);
        // in a conversation's first epoch, those this client's own signed invite admits.
        const base = prev ?? opener;
        if (base) {
          const fp = await this.m.keys.fingerprintOf(pinned);
          const checked = await checkAdmission(ctx, base, { did: m.did, fp }, m.admission, 3);
          if (!checked) {
            block(
              this.m.warn(channelId, "admission", {
                epochNumber: info.epochNumber + 1,
                did: m.did,
                handle: this.m.handleOf(m.did, m.handle),
              }),
            );
          }
        }
        // A joiner's name: the server's hint, signed by this commit (the first that lists them).
        recipients.push({ did: m.did, publicKey: pinned, handle: this.m.handleOf(m.did, m.handle) });
      }
      const reason =
        opts.reason ?? this.reasonFor(prev, members, me, info, await fingerprint(identity.publicKey));
      const makeLink =
        this.m.view(channelId)?.channel.value.type === "secret" &&
        (info.linkRotationRequired || !!opts.newLink);
      const linkSecret = makeLink ? newLinkSecret() : (prev?.linkSecret ?? chain.linkSecret ?? null);
      // Protocol §8: every v3 commit of a secret channel seals its link; a device that does not know
      // it (a v2 invitee) leaves the next commit to a member who does.
      if (this.m.view(channelId)?.channel.value.type === "secret" && !linkSecret) {
        throw new SendBlockedError(SecurityText.linkUnknown);
      }
      // Only the signed owner (epoch 1's creator) signs a retention; its commits carry it on.
      const owner = chain.owner ?? chain.epochs["1"]?.creatorDid ?? ctx.channelCreator;
      if (opts.retentionDays !== undefined && owner !== me)
        throw new Error("Only the channel's owner sets its retention");
      const retentionDays =
        owner === me
          ? opts.retentionDays !== undefined
            ? opts.retentionDays
            : signedRetentionDays(chain)
          : null;
      const created = await createEpoch({
        v: 3,
        ...(retentionDays !== null ? { retentionDays } : {}),
        chains: await this.seenChains(channelId),
        identity,
        creatorDid: me,
        channelId,
        epochNumber: info.epochNumber + 1,
        prevEpochId: info.epochId,
        reason,
        members: recipients,
        state: { linkSecret },
        createdAt: this.c.now(),
      });
      const keyChange =
        reason === "key-change" ? await this.keyChangeStatement(channelId, prev, created) : null;
      const record: EpochCandidate = {
        commit: created.commit,
        signature: created.signature,
        admissions: {},
        keyChange,
      };
      this.pending.set(channelId, {
        epochId: created.epochId,
        commitCanon: canon(created.commit),
        key: created.epochKey,
        record,
      });
      try {
        const res = await this.c.api.call("createEpoch", {
          channelUri: channelId,
          commit: created.commit,
          signature: created.signature,
          wrappedKeys: created.wrappedKeys,
          ...(keyChange ? { keyChange } : {}),
          ...(makeLink && linkSecret ? { joinToken: await joinTokenFor(linkSecret, channelId) } : {}),
        });
        this.pending.delete(channelId);
        const ok = await this.m.adopt(channelId, {
          ...record,
          admissions: res.epochInfo.admissions,
          epochKey: created.epochKey,
          own: { linkSecret },
        });
        const view = this.m.view(channelId);
        if (view) {
          view.epoch = res.epochInfo;
          view.members = members;
        }
        if (!ok) throw new SendBlockedError(SecurityText.sendBlocked);
        await this.m.reconcile(channelId, res.epochInfo);
        this.c.changed();
        return;
      } catch (e) {
        if (e instanceof ApiError && (e.code === "EpochConflict" || e.code === "RotationRequired")) continue;
        if (e instanceof ApiError) {
          this.pending.delete(channelId);
          throw e;
        }
        // No answer: the epoch may or may not be stored. The next attempt looks before it leaps.
        if (attempt === MAX_ROTATION_ATTEMPTS - 1) throw e;
      }
    }
    throw new ApiError("EpochConflict", "Could not create the next epoch: the channel keeps changing");
  }

  /**
   * The link secret an invite sealed to this user (protocol §8), only from an invite that verifies
   * under the key the verified commit lists for its inviter: a sealedLink the server made up would
   * let it admit a ghost under a secret of its own.
   */
  private async linkFromInvite(
    channelId: string,
    prev: VerifiedEpoch,
    admission: Member["admission"] | undefined,
  ): Promise<string | null> {
    const identity = this.c.keyring.identity;
    if (!identity || admission?.kind !== "invite") return null;
    const inv = admission.invite;
    if (inv.v !== 3 || !("sealedLink" in inv) || !inv.sealedLink) return null;
    if (inv.channelId !== channelId || inv.inviteeDid !== this.c.me().did) return null;
    const inviterFp = prev.members.find((m) => m.did === inv.inviterDid)?.fp;
    const key = inviterFp ? await this.m.keys.keyWithFp(inv.inviterDid, inviterFp) : null;
    if (!key || !(await verifyInvite(inv, admission.signature, key))) return null;
    try {
      return await openInviteLink({
        channelId,
        inviteeDid: inv.inviteeDid,
        identity,
        sealedLink: inv.sealedLink,
      });
    } catch (e) {
      this.c.log(`invite link: ${reasonOf(e)}`);
      return null;
    }
  }

  /**
   * This user's key-change statement (protocol §8): their previous key, when this device still holds
   * it, signs that it moved to the new one in exactly this commit, so members show a neutral row.
   */
  private async keyChangeStatement(
    channelId: string,
    prev: VerifiedEpoch | null,
    created: { epochId: string; commit: { members: { did: string; fp: string }[]; createdAt: number } },
  ): Promise<KeyChange | null> {
    const me = this.c.me().did;
    const oldFp = prev?.members.find((m) => m.did === me)?.fp;
    const newFp = created.commit.members.find((m) => m.did === me)?.fp;
    const retired = await this.c.keyring.retired();
    if (!oldFp || !newFp || !retired || oldFp === newFp || (await fingerprint(retired.publicKey)) !== oldFp)
      return null;
    const statement = buildKeyChange({
      did: me,
      oldFp,
      newFp,
      channelId,
      epochId: created.epochId,
      createdAt: created.commit.createdAt,
    });
    return { statement, signature: await signKeyChange(retired, statement) };
  }

  /**
   * The sender chains this client has seen in the channel, its own included (protocol §8): the last
   * number of each, for the commit it makes, so a withheld last message shows at the next rotation.
   */
  private async seenChains(channelId: string): Promise<{ did: string; device: string; n: number }[]> {
    const seen = await this.m.chains.seenState(channelId);
    const out: { did: string; device: string; n: number }[] = [];
    for (const [key, numbers] of Object.entries(seen.chains ?? {})) {
      const [did = "", device = ""] = key.split("|");
      const n = Math.max(0, ...Object.keys(numbers).map(Number));
      if (n >= 1) out.push({ did, device, n });
    }
    return out;
  }

  /** Why this epoch is made, from what changed since the previous verified commit. */
  private reasonFor(
    prev: VerifiedEpoch | null,
    members: Member[],
    me: string,
    info: EpochInfo,
    myFp: string | null = null,
  ): CommitReason {
    if (!info.epochId || !prev) return info.epochId ? "join" : "create";
    const before = new Map(prev.members.map((m) => [m.did, m.fp]));
    const now = new Set(members.map((m) => m.did));
    if (!before.has(me)) return "join";
    if (myFp !== null && before.get(me) !== myFp) return "key-change";
    if (prev.members.some((m) => !now.has(m.did))) return "leave";
    if (members.some((m) => !before.has(m.did))) return "join";
    if (info.linkRotationRequired) return "kick";
    return info.rotationRequired ? "scheduled" : "manual";
  }
}
