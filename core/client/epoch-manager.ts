import {
  CryptoText,
  createEpoch,
  fingerprint,
  reasonOf,
  unwrapEpochKey,
  verifyCommit,
} from "../crypto/index.ts";
import { ApiError, type Commit, type EpochInfo, type Member } from "../protocol/runtime.ts";
import type { EngineContext } from "./engine-context.ts";
import type { EpochKey } from "./keyring.ts";
import type { ChannelView } from "./state.ts";

const MAX_ROTATION_ATTEMPTS = 5;

/**
 * The keys of a channel: the keys of people (pinned, compared, fetched on first sight) and the
 * channel's epochs (fetch and unwrap this client's epoch keys, verify a commit, rotate). Keys stay
 * here, in the client.
 */
export class EpochManager {
  private readonly rotations = new Map<string, Promise<void>>();
  private readonly keyLoads = new Map<string, Promise<void>>();
  private readonly authorKeys = new Map<string, Promise<string | null>>();
  /**
   * `channelId|epochId` of commits this client verified (signature, creator, pinned keys). Keyed by
   * channel: an epoch verified in one channel proves nothing about another channel's epoch info.
   */
  private readonly verifiedCommits = new Set<string>();

  constructor(private readonly c: EngineContext) {}

  private view(channelId: string): ChannelView | undefined {
    return this.c.state.open[channelId];
  }

  // ---- keys of people ---------------------------------------------------------------------------

  /** Compares every member's key with its pin; a change becomes a warning in the channel. */
  async checkMemberKeys(channelId: string | null, members: Member[]): Promise<void> {
    const identity = this.c.keyring.identity;
    const me = this.c.me().did;
    const offered: { did: string; publicKey: string }[] = [];
    for (const m of members) {
      if (!m.publicKey) continue;
      // This client's own key is known first-hand: when the server shows it, just keep it pinned
      // (a freshly replaced key races its own key-changed notice). Any other key for us is a warning.
      if (m.did === me && identity?.publicKey === m.publicKey) {
        if ((await this.c.keyring.pinned(me)) !== m.publicKey) await this.c.keyring.repin(me, m.publicKey);
        continue;
      }
      offered.push({ did: m.did, publicKey: m.publicKey });
    }
    const changed = new Set(await this.c.keyring.pinMany(offered));
    for (const m of members) {
      if (!changed.has(m.did)) continue;
      const view = channelId ? this.view(channelId) : undefined;
      if (view && !view.warnings.some((w) => w.did === m.did)) {
        view.warnings.push({
          did: m.did,
          handle: m.handle,
          text: `${m.handle}'s encryption key changed. Compare safety numbers before trusting their messages.`,
        });
      }
      this.c.emit("key-changed", { did: m.did, handle: m.handle, channelId });
    }
  }

  /** The pinned key of an author; fetched and pinned on first sight. */
  authorKey(did: string): Promise<string | null> {
    let p = this.authorKeys.get(did);
    if (!p) {
      p = (async () => {
        const pinned = await this.c.keyring.pinned(did);
        if (pinned) return pinned;
        const { keys } = await this.c.api.call("getKeys", { dids: [did] });
        const k = keys.find((x) => x.did === did)?.publicKey;
        if (!k) return null;
        await this.c.keyring.pin(did, k);
        return (await this.c.keyring.pinned(did)) ?? null;
      })();
      this.authorKeys.set(did, p);
      p.catch(() => this.authorKeys.delete(did));
    }
    return p;
  }

  forgetAuthorKey(did: string): void {
    this.authorKeys.delete(did);
  }

  // ---- epochs -----------------------------------------------------------------------------------

  /** Fetches this client's wrapped keys and unwraps the ones it does not hold yet. */
  loadEpochKeys(channelId: string): Promise<void> {
    let p = this.keyLoads.get(channelId);
    if (p) return p;
    p = (async () => {
      const identity = this.c.keyring.identity;
      if (!identity) throw new Error(CryptoText.notInitialized);
      const { epochKeys } = await this.c.api.call("getEpochKeys", { channelUri: channelId });
      const fresh: EpochKey[] = [];
      for (const w of epochKeys) {
        if (await this.c.keyring.hasEpoch(channelId, w.epochId)) continue;
        try {
          const key = await unwrapEpochKey(w, channelId, identity, this.c.me().did);
          fresh.push({ epochId: w.epochId, epochNumber: w.epochNumber, key });
        } catch (e) {
          // Spec §8: failure to decrypt one epoch key is logged and skipped.
          this.c.log(`epoch key ${w.epochId}: ${reasonOf(e)}`);
        }
      }
      await this.c.keyring.addEpochKeys(channelId, fresh);
    })().finally(() => this.keyLoads.delete(channelId));
    this.keyLoads.set(channelId, p);
    return p;
  }

  /**
   * A commit is trusted only if its creator is one of its members, its signature checks against the
   * creator's pinned key, it lists this client with this client's own key, and every member it lists
   * is a member of the channel (no hidden recipient) under the key this client pinned for them (no
   * key the server swapped in).
   */
  async verifyEpoch(channelId: string, info: EpochInfo): Promise<boolean> {
    if (!info.commit || !info.signature || !info.epochId) return false;
    const commit = info.commit;
    if (commit.channelId !== channelId || commit.epochId !== info.epochId) return false;
    if (commit.epochNumber !== info.epochNumber) return false;
    // Checked on every send, not cached: a member who left since must not keep receiving.
    if (!(await this.recipientsAreMembers(channelId, commit))) return false;
    const cacheKey = `${channelId}|${info.epochId}`;
    if (this.verifiedCommits.has(cacheKey)) return true;
    const creatorKey = await this.authorKey(commit.creatorDid);
    if (!creatorKey || !(await verifyCommit(commit, info.signature, creatorKey))) return false;
    const identity = this.c.keyring.identity;
    const mine = commit.members.find((m) => m.did === this.c.me().did);
    if (!identity || !mine) return false;
    if (mine.fp !== (await fingerprint(identity.publicKey))) return false;
    for (const m of commit.members) {
      const pinned = await this.c.keyring.pinned(m.did);
      if (!pinned || (await fingerprint(pinned)) !== m.fp) return false;
    }
    this.verifiedCommits.add(cacheKey);
    return true;
  }

  /** Every recipient of the commit is in the channel's member list (fetched again once if not). */
  private async recipientsAreMembers(channelId: string, commit: Commit): Promise<boolean> {
    const view = this.view(channelId);
    if (!view) return false;
    const listed = (members: Member[]) => {
      const dids = new Set(members.map((m) => m.did));
      return commit.members.every((m) => dids.has(m.did));
    };
    if (listed(view.members)) return true;
    // The view may only be behind (a join not seen yet): ask once more before distrusting the epoch.
    const { members } = await this.c.api.call("getMembers", { channelUri: channelId });
    view.members = members;
    await this.checkMemberKeys(channelId, members);
    return listed(members);
  }

  async refreshEpoch(channelId: string): Promise<EpochInfo> {
    const { epochInfo } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
    const view = this.view(channelId);
    if (view) view.epoch = epochInfo;
    if (epochInfo.epochId && !(await this.c.keyring.hasEpoch(channelId, epochInfo.epochId))) {
      await this.loadEpochKeys(channelId);
    }
    this.c.changed();
    return epochInfo;
  }

  /** Makes the next epoch for the current member set; concurrent calls share one attempt. */
  rotate(channelId: string): Promise<void> {
    let p = this.rotations.get(channelId);
    if (p) return p;
    p = this.doRotate(channelId).finally(() => this.rotations.delete(channelId));
    this.rotations.set(channelId, p);
    return p;
  }

  private async doRotate(channelId: string): Promise<void> {
    const identity = this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    for (let attempt = 0; attempt < MAX_ROTATION_ATTEMPTS; attempt++) {
      const { epochInfo } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
      // Someone else won the race and the new epoch is usable: done.
      if (attempt > 0 && !epochInfo.rotationRequired && epochInfo.epochId) {
        await this.refreshEpoch(channelId);
        return;
      }
      const { members } = await this.c.api.call("getMembers", { channelUri: channelId });
      await this.checkMemberKeys(channelId, members);
      // Never wrap a new epoch key to a key this client has not accepted: a server that swaps a
      // member's key would otherwise receive the key itself.
      const recipients = [];
      for (const m of members) {
        const pinned = m.publicKey ? await this.c.keyring.pinned(m.did) : null;
        if (!m.publicKey || !pinned) throw new Error(`${m.handle} has no encryption key`);
        if (pinned !== m.publicKey) {
          throw new Error(`${m.handle}'s encryption key changed; compare safety numbers and accept it first`);
        }
        recipients.push({ did: m.did, publicKey: pinned });
      }
      const created = await createEpoch({
        identity,
        creatorDid: this.c.me().did,
        channelId,
        epochNumber: epochInfo.epochNumber + 1,
        prevEpochId: epochInfo.epochId,
        members: recipients,
        createdAt: this.c.now(),
      });
      try {
        const res = await this.c.api.call("createEpoch", {
          channelUri: channelId,
          commit: created.commit,
          signature: created.signature,
          wrappedKeys: created.wrappedKeys,
        });
        await this.c.keyring.addEpochKeys(channelId, [
          { epochId: created.epochId, epochNumber: created.commit.epochNumber, key: created.epochKey },
        ]);
        this.verifiedCommits.add(`${channelId}|${created.epochId}`);
        const view = this.view(channelId);
        if (view) {
          view.epoch = res.epochInfo;
          view.members = members;
        }
        this.c.changed();
        return;
      } catch (e) {
        if (e instanceof ApiError && e.code === "EpochConflict") continue;
        throw e;
      }
    }
    throw new ApiError("EpochConflict", "Could not create the next epoch: the channel keeps changing");
  }
}
