import { CryptoText, fingerprint, type Identity, reasonOf, unwrapEpochKey } from "../../crypto/index.ts";
import { type EpochInfo, Limits, type Member } from "../../protocol/runtime.ts";
import { SendBlockedError } from "../errors.ts";
import type { EpochKey } from "../keys/keyring.ts";
import { SignerKeys } from "../keys/signer-keys.ts";
import { trustDate } from "../keys/trust.ts";
import { SecurityText } from "../view/security-text.ts";
import {
  type ChannelView,
  type EpochChange,
  type SecurityCheck,
  type SecurityWarning,
  setItems,
  type TimelineItem,
} from "../view/state.ts";
import { type ChainState, membersOf, signedRetentionDays, type VerifiedEpoch } from "./chain.ts";
import type { EngineContext } from "./engine-context.ts";
import { type EpochCandidate, previousVerified, type VerifyContext, verifyEpoch } from "./epoch-verify.ts";
import { type RotateOptions, Rotation } from "./rotation.ts";

export { SendBlockedError };

/**
 * The keys of a channel: the keys and handles of people (pinned on first sight), and the channel's
 * epochs. An epoch key is used only after its signed commit passed every protocol v2 check
 * (epoch-verify.ts); what passed is persisted per channel, so a server cannot roll the client back.
 */
/** Whether a row is drawn under the did with "(unverified name)": no verified commit named its author yet. */
export const shownUnnamed = (i: TimelineItem): boolean =>
  i.author.handle === SecurityText.unverifiedName(i.author.did);

export class EpochManager {
  private readonly keyLoads = new Map<string, Promise<void>>();
  /**
   * Per channel, the turns handed out to reconciles (reconcileTurn): only the reconcile holding the
   * last turn sets the view's `sendBlocked`, since it judges the server's latest word. One that took
   * its turn earlier (a live frame's refresh, whose keys were still loading) and finishes later must
   * not clear a block a later one set, nor set one it cleared.
   */
  private readonly reconciles = new Map<string, number>();
  /** Making the next epoch (rotation.ts). */
  private readonly rotation: Rotation;
  private cacheGeneration = 0;
  private readonly verifiedKeys = new Map<string, Promise<{ key: EpochKey; epoch: VerifiedEpoch } | null>>();
  /** Told of every verified membership change, so the timeline can show it. */
  onChange: (channelId: string, change: EpochChange, createdAt: number) => void = () => undefined;

  /** Whose key checks what someone signed (pins, and earlier keys a signed list names). */
  readonly keys: SignerKeys;

  constructor(private readonly c: EngineContext) {
    this.keys = new SignerKeys(c);
    this.rotation = new Rotation(this, c);
  }

  view(channelId: string): ChannelView | undefined {
    return this.c.state.open[channelId];
  }

  get chains() {
    return this.c.keyring.chains;
  }

  chain(channelId: string): Promise<ChainState> {
    return this.chains.chain(channelId);
  }

  /** The retention the channel's owner signed into its newest commit (chain.ts), or null. */
  async signedRetention(channelId: string): Promise<number | null> {
    return signedRetentionDays(await this.chains.chain(channelId));
  }

  // ---- warnings ---------------------------------------------------------------------------------

  /** Shows a failed check in the channel (once per check, epoch and person) and tells listeners. */
  warn(
    channelId: string,
    check: SecurityCheck,
    o: { epochNumber?: number | null; did?: string | null; handle?: string | null; detail?: string } = {},
  ): SecurityWarning {
    const warning: SecurityWarning = {
      check,
      channelId,
      epochNumber: o.epochNumber ?? null,
      did: o.did ?? null,
      handle: o.handle ?? null,
      text: SecurityText.warning(check, o),
    };
    const view = this.view(channelId);
    const same = (w: SecurityWarning) =>
      w.check === check && w.epochNumber === warning.epochNumber && w.did === warning.did;
    // A check that fails again (every reload, every record of a renamed sender) is said once.
    const shown = view?.warnings.find(same);
    if (shown) return shown;
    view?.warnings.push(warning);
    this.c.log(`security: ${check} in ${channelId}${o.detail ? `: ${o.detail}` : ""}`);
    this.c.emit("security-warning", warning);
    this.c.changed();
    return warning;
  }

  // ---- keys and names of people -----------------------------------------------------------------

  /** Compares every member's key with its pin and pins handles; a change becomes a warning. */
  async checkMemberKeys(channelId: string | null, members: Member[]): Promise<void> {
    const identity = this.c.keyring.identity;
    const me = this.c.me().did;
    const offered: { did: string; publicKey: string; atproto: boolean }[] = [];
    // Protocol §8: a member the verified chain lists has the key its signed list names; the server's
    // word for them changes nothing (their own key-change commit does). Only people no commit lists
    // yet (joiners) are pinned on first sight.
    const chain = channelId ? await this.chain(channelId) : null;
    const head = chain?.head ? chain.epochs[String(chain.head.epochNumber)] : undefined;
    const listed = new Map((head?.v === 3 ? head.members : []).map((m) => [m.did, m.fp]));
    for (const m of members) {
      if (!m.publicKey) continue;
      const listedFp = listed.get(m.did);
      if (listedFp !== undefined) {
        // The server says they have another key: a reset (or a lie). Epochs this client makes still
        // go to the listed key until their own key-change commit; say so (protocol §8).
        if (
          channelId &&
          m.did !== me &&
          (await this.keys.fingerprintOf(m.publicKey).catch(() => listedFp)) !== listedFp
        ) {
          const handle = this.handleOf(m.did, m.handle);
          this.warn(channelId, "key-changed", { did: m.did, handle, detail: "pending" });
          this.c.emit("key-changed", { did: m.did, handle, channelId });
        }
        continue;
      }
      // This client's own key is known first-hand: when the server shows it, just keep it pinned
      // (a freshly replaced key races its own key-changed notice). Any other key for us is a warning.
      if (m.did === me && identity?.publicKey === m.publicKey) {
        if ((await this.c.keyring.pinned(me)) !== m.publicKey) await this.c.keyring.repin(me, m.publicKey);
        continue;
      }
      // An ATProto account's key is pinned only if its proof is not a mismatch (keys/key-proofs.ts).
      offered.push({
        did: m.did,
        publicKey: m.publicKey,
        atproto: (m as { atproto?: boolean }).atproto === true,
      });
    }
    const changed = new Set(await this.c.keyring.pinMany(offered));
    for (const m of members) {
      if (!changed.has(m.did)) continue;
      if (channelId)
        this.warn(channelId, "key-changed", { did: m.did, handle: this.handleOf(m.did, m.handle) });
      this.c.emit("key-changed", { did: m.did, handle: m.handle, channelId });
    }
    // Handles are pinned from verified commits only (protocol §8); the server's are display hints.
  }

  /** Pins handles on first sight; a changed handle, or one pinned to someone else, is a warning. */
  async pinHandles(channelId: string | null, entries: { did: string; handle: string }[]): Promise<void> {
    const problems = await this.c.keyring.pinHandles(entries);
    await this.nameShownRows(entries);
    if (!channelId) return;
    for (const p of problems) {
      const detail =
        p.problem === "changed" ? `now called ${p.handle}` : `${p.handle} already belongs to someone else`;
      this.warn(channelId, "handle", { did: p.did, handle: p.pinned, detail });
    }
  }

  /**
   * Rows drawn before their author's name was pinned ("did… (unverified name)": a message that came in
   * before the commit naming its author, as right after a join) take the name a verified commit
   * signed, in every open channel. Run after each pin, and by the channel engine after it places a
   * row under an unverified name: a row read before a pin but placed after its pass would otherwise
   * keep that name (a message from someone who joined while this client was offline, read back on
   * reconnecting: the read of its sender's name came before the commit's check pinned it).
   */
  async nameShownRows(entries: { did: string }[]): Promise<void> {
    // Most commits name nobody drawn unverified: look for such rows first, names only then.
    const listed = new Set(entries.map((e) => e.did));
    const waiting = new Set<string>();
    for (const view of Object.values(this.c.state.open)) {
      if (!view || !Array.isArray(view.items)) continue;
      for (const i of view.items) if (listed.has(i.author.did) && shownUnnamed(i)) waiting.add(i.author.did);
    }
    if (waiting.size === 0) return;
    const names = new Map<string, string>();
    for (const did of waiting) {
      const pinned = await this.c.keyring.pinnedHandle(did);
      if (pinned) names.set(did, pinned);
    }
    if (names.size === 0) return;
    let changed = false;
    for (const view of Object.values(this.c.state.open)) {
      if (!view || !Array.isArray(view.items)) continue;
      let items: TimelineItem[] | null = null;
      view.items.forEach((i, n) => {
        const name = names.get(i.author.did);
        if (name && shownUnnamed(i)) {
          items ??= [...view.items];
          items[n] = { ...i, author: { did: i.author.did, handle: name } };
        }
      });
      if (items) {
        setItems(view, items);
        changed = true;
      }
    }
    if (changed) this.c.changed();
  }

  /**
   * Protocol §8 "Fresh devices": the channel stops reading "verified from the server's word" once
   * another member signed something (a commit, a message under the head epoch) after this device
   * signed in. `signedAt`: that signature's time.
   */
  async confirmFresh(channelId: string, signedAt: number): Promise<void> {
    const since = await this.c.keyring.trust.freshSince(channelId);
    if (since === null || signedAt < since) return;
    await this.c.keyring.trust.confirm(channelId);
    const view = this.view(channelId);
    if (view?.warnings.some((w) => w.check === "fresh-device")) {
      view.warnings = view.warnings.filter((w) => w.check !== "fresh-device");
      this.c.changed();
    }
  }

  /** Shows the fresh-device mark on a channel this device has only the server's word for. */
  async markFresh(channelId: string): Promise<void> {
    const since = await this.c.keyring.trust.freshSince(channelId);
    if (since === null) return;
    this.warn(channelId, "fresh-device", { detail: trustDate(since) });
  }

  /**
   * The channel's owner from signed data (protocol §8): the creator of its verified epoch-1 commit,
   * or null when this device holds no verified epoch 1 (a newcomer): the server's word never counts.
   */
  async owner(channelId: string): Promise<string | null> {
    const chain = await this.chain(channelId);
    return chain.epochs["1"]?.creatorDid ?? chain.owner ?? null;
  }

  /**
   * The name under which "… is typing" shows (protocol §8): a member of the channel's current verified
   * commit, under their pinned (signed) name; null for anyone else.
   */
  async typingName(channelId: string, did: string): Promise<string | null> {
    const chain = await this.chain(channelId);
    const head = chain.head ? chain.epochs[String(chain.head.epochNumber)] : undefined;
    const m = head?.members.find((x) => x.did === did);
    if (!m) return null;
    return this.c.keyring.handleSync(did) ?? m.handle ?? null;
  }

  /** The name to show for a did: the handle pinned on first sight, else what the server said. */
  handleOf(did: string, fallback?: string): string {
    return this.c.keyring.handleSync(did) ?? fallback ?? did;
  }

  // ---- verification -----------------------------------------------------------------------------

  /** `identity`: the one a load started with, so a key replaced mid-load is not mixed in. */
  async verifyContext(channelId: string, given?: Identity): Promise<VerifyContext> {
    const identity = given ?? this.c.keyring.identity;
    if (!identity) throw new Error(CryptoText.notInitialized);
    const view = this.view(channelId);
    const uri = view?.channel.uri ?? "";
    const creator = /^at:\/\/(did:plc:[a-z2-7]{24})\//.exec(uri)?.[1] ?? null;
    return {
      channelId,
      channelType: view?.channel.value.type ?? "public",
      channelCreator: creator,
      chain: await this.chain(channelId),
      myDid: this.c.me().did,
      myFp: await fingerprint(identity.publicKey),
      keyOf: (did) => this.keys.authorKey(did),
      previousKeyOf: (did, fp) => this.keys.previousKey(did, fp),
      handleOf: (did) => this.handleOf(did),
      keyWithFp: (did, fp) => this.keys.keyWithFp(did, fp),
    };
  }

  /**
   * Verifies one epoch (with its key, or as an anchor without) and, when every check passes, adopts
   * it: the key goes to the keyring, the commit to the persisted chain. A failure becomes a warning
   * and the key is never stored.
   */
  async adopt(channelId: string, cand: EpochCandidate, identity?: Identity): Promise<boolean> {
    const ctx = await this.verifyContext(channelId, identity);
    const commit = cand.commit;
    const result = await verifyEpoch(ctx, cand);
    if (!result.ok) {
      this.warn(channelId, result.check, {
        epochNumber: commit.epochNumber,
        did: result.did ?? null,
        handle: result.handle ?? null,
        detail: result.detail,
      });
      return false;
    }
    // Protocol §8 "Names come from signed data": handles are pinned from verified commits only (a
    // member's own rename moves their pin); the server's member lists and frames are display hints.
    if (commit.v !== 1) {
      const renamed = result.change?.renamed;
      if (renamed) await this.c.keyring.repinHandle(renamed.did, renamed.to);
      await this.pinHandles(
        channelId,
        commit.members.map((m) => ({ did: m.did, handle: m.handle })),
      );
    }
    const keyChange = result.change?.keyChange;
    // The member's own key-change commit settles a reset announced by the server's word alone.
    const view = this.view(channelId);
    if (keyChange && view) {
      const pending = (w: SecurityWarning) =>
        w.check === "key-changed" && w.did === keyChange.did && w.epochNumber === null;
      if (view.warnings.some(pending)) view.warnings = view.warnings.filter((w) => !pending(w));
    }
    // This client's own key change needs no warning to itself.
    if (keyChange && keyChange.did !== this.c.me().did) {
      // The creator's own key change (verified under the key the commit lists). Signed by the
      // previous key: the pin moves with it. Otherwise a warning row, and the safety number shows as
      // changed, not verified, until the user compares and accepts it.
      const listedFp = commit.members.find((m) => m.did === keyChange.did)?.fp;
      const newKey = listedFp ? await this.keys.keyWithFp(keyChange.did, listedFp) : null;
      if (keyChange.signed && newKey) {
        await this.c.keyring.repin(keyChange.did, newKey);
        this.keys.forget(keyChange.did);
      } else {
        this.warn(channelId, "key-changed", {
          epochNumber: commit.epochNumber,
          did: keyChange.did,
          handle: this.handleOf(keyChange.did, keyChange.handle),
        });
        this.c.emit("key-changed", { did: keyChange.did, handle: keyChange.handle, channelId });
      }
    }
    const chain = ctx.chain;
    const entry = result.entry;
    chain.epochs[String(entry.epochNumber)] = entry;
    if (entry.v === 2 && (chain.firstV2 === null || entry.epochNumber < chain.firstV2)) {
      chain.firstV2 = entry.epochNumber;
    }
    if (entry.v === 3 && (chain.firstV3 == null || entry.epochNumber < chain.firstV3)) {
      chain.firstV3 = entry.epochNumber;
      if (chain.firstV2 === null || entry.epochNumber < chain.firstV2) chain.firstV2 = entry.epochNumber;
    }
    if (entry.linkSecret && (!chain.head || entry.epochNumber >= chain.head.epochNumber)) {
      chain.linkSecret = entry.linkSecret;
    }
    if (entry.epochNumber === 1 && !entry.anchor) chain.owner = entry.creatorDid;
    if (cand.epochKey) {
      if (!chain.head || entry.epochNumber > chain.head.epochNumber) {
        chain.head = { epochNumber: entry.epochNumber, epochId: entry.epochId };
        await this.c.keyring.trust.bump();
      }
      // A fresh device (trust from the server alone) is confirmed by another member's commit made
      // after it signed in (protocol §8).
      if (entry.creatorDid !== this.c.me().did) await this.confirmFresh(channelId, entry.createdAt);
      await this.c.keyring.addEpochKeys(channelId, [
        { epochId: entry.epochId, epochNumber: entry.epochNumber, key: new Uint8Array(cand.epochKey) },
      ]);
    }
    await this.chains.saveChain(channelId, entry.epochNumber);
    if (result.change) this.onChange(channelId, result.change, entry.createdAt);
    this.updateLink(channelId, chain);
    return true;
  }

  /** The link members see: `{baseUrl}/sync/join/{channelId}#{linkSecret}` (protocol §7). */
  updateLink(channelId: string, chain: ChainState): void {
    const view = this.view(channelId);
    if (!view) return;
    const link =
      view.channel.value.type === "secret" && chain.linkSecret
        ? `${this.c.api.baseUrl.replace(/\/+$/, "")}/sync/join/${channelId}#${chain.linkSecret}`
        : null;
    if (view.link !== link) {
      view.link = link;
      this.c.changed();
    }
  }

  /**
   * Fetches this client's wrapped keys with the signed commits from its first (or newest verified)
   * epoch on, and adopts every epoch that verifies, in order. An epoch whose key this device cannot
   * open (wrapped to a key it has since replaced) is still checked and kept, keyless, so the member
   * list stays a chain of verified changes.
   */
  loadEpochKeys(channelId: string): Promise<void> {
    let p = this.keyLoads.get(channelId);
    if (p) return p;
    p = (async () => {
      const identity = this.c.keyring.identity;
      if (!identity) throw new Error(CryptoText.notInitialized);
      const chain = await this.chain(channelId);
      // From the head on; a head held without its key (taken from another device's trust state) is
      // fetched again, with its key.
      const headEntry = chain.head ? chain.epochs[String(chain.head.epochNumber)] : undefined;
      const since = chain.head ? chain.head.epochNumber - (headEntry?.anchor ? 1 : 0) : undefined;
      const { epochKeys, epochs } = await this.c.api.call("getEpochKeys", {
        channelUri: channelId,
        ...(since !== undefined ? { sinceEpoch: since } : {}),
      });
      // A server may offer several wraps under one epoch id (only one can be ours): each is tried.
      const wraps = new Map<string, typeof epochKeys>();
      for (const w of epochKeys) wraps.set(w.epochId, [...(wraps.get(w.epochId) ?? []), w]);
      for (const record of [...epochs].sort((a, b) => a.epochNumber - b.epochNumber)) {
        // The identity changed under this load (a key replaced): what follows is another load's job.
        if (this.c.keyring.identity !== identity) return;
        const done = chain.epochs[String(record.epochNumber)];
        const offered = (wraps.get(record.epochId) ?? []).filter((w) => w.epochNumber === record.epochNumber);
        if (done && done.epochId === record.epochId && (!done.anchor || offered.length === 0)) continue;
        let key: Uint8Array | undefined = (await this.c.keyring.epochKey(channelId, record.epochId))?.key;
        for (const wrap of offered) {
          if (key) break;
          try {
            key = await unwrapEpochKey(wrap, channelId, identity, this.c.me().did, record.commit.v);
          } catch (e) {
            // Spec §8: failure to decrypt one epoch key is logged and skipped.
            this.c.log(`epoch key ${wrap.epochId}: ${reasonOf(e)}`);
          }
        }
        // Nothing before this client's first verified epoch can be checked keyless (no previous
        // commit to check it against): a newcomer anchors in rotate() instead.
        if (!key && Object.keys(chain.epochs).length === 0) continue;
        // Nor what followed this user's removal: admissions made while they were away (by links
        // they never saw) are not theirs to check. Coming back, they anchor anew, as a newcomer.
        if (
          !key &&
          !previousVerified(chain, record.epochNumber)?.members.some((m) => m.did === this.c.me().did)
        )
          continue;
        await this.adopt(
          channelId,
          {
            commit: record.commit,
            signature: record.signature,
            admissions: record.admissions,
            keyChange: record.keyChange ?? null,
            ...(key ? { epochKey: key } : {}),
          },
          identity,
        );
      }
      // A wrap with no signed commit is never used (protocol §7, "read path").
      for (const w of epochKeys) {
        if (!epochs.some((e) => e.epochId === w.epochId))
          this.c.log(`epoch key ${w.epochId}: no commit offered`);
      }
    })().finally(() => this.keyLoads.delete(channelId));
    this.keyLoads.set(channelId, p);
    return p;
  }

  /**
   * Loads (and verifies) until the chain holds epoch `n` with this id, or a load that started after
   * this call finished without it: a load already under way may have begun before the epoch existed.
   */
  async loadUntil(channelId: string, n: number, epochId: string): Promise<void> {
    const chain = await this.chain(channelId);
    const has = () => chain.epochs[String(n)]?.epochId === epochId;
    if (has()) return;
    const running = this.keyLoads.has(channelId);
    await this.loadEpochKeys(channelId);
    if (!has() && running) await this.loadEpochKeys(channelId);
  }

  /**
   * A newcomer's base (protocol §7 gives it nothing older to check against): the channel's current
   * signed commit, taken on first use after its signature checked, and used only as "the previous
   * commit" of the epoch the newcomer is added in.
   */
  async anchor(channelId: string, info: EpochInfo): Promise<boolean> {
    if (!info.commit || !info.signature || !info.epochId) return false;
    const chain = await this.chain(channelId);
    const held = chain.epochs[String(info.epochNumber)];
    if (held?.epochId === info.epochId) return true;
    return this.adopt(channelId, {
      commit: info.commit,
      signature: info.signature,
      admissions: info.admissions,
      keyChange: info.keyChange ?? null,
      anchor: true,
    });
  }

  async refreshEpoch(channelId: string): Promise<EpochInfo> {
    const { epochInfo } = await this.c.api.call("getEpochInfo", { channelUri: channelId });
    // The server's word as of now: judged in this turn, however long its keys take to load.
    const turn = this.reconcileTurn(channelId);
    const view = this.view(channelId);
    if (view) view.epoch = epochInfo;
    if (epochInfo.epochId) await this.loadUntil(channelId, epochInfo.epochNumber, epochInfo.epochId);
    await this.reconcile(channelId, epochInfo, turn);
    this.c.changed();
    return epochInfo;
  }

  /** The next reconcile turn of the channel (see `reconciles`). */
  private reconcileTurn(channelId: string): number {
    const turn = (this.reconciles.get(channelId) ?? 0) + 1;
    this.reconciles.set(channelId, turn);
    return turn;
  }

  /**
   * Compares what the server calls current with the newest verified epoch (protocol §7 "No
   * rollback"). Returns the head to send under, or a warning's text when sending must not happen.
   */
  async reconcile(
    channelId: string,
    info: EpochInfo,
    turn = this.reconcileTurn(channelId),
  ): Promise<{ epochId: string; epochNumber: number } | string> {
    const chain = await this.chain(channelId);
    const head = chain.head;
    const view = this.view(channelId);
    const latest = () => this.reconciles.get(channelId) === turn;
    const block = (text: string) => {
      if (view && latest()) view.sendBlocked = true;
      return text;
    };
    if (!head) {
      const failed = view?.warnings.find((w) => w.check !== "key-changed" && w.check !== "handle");
      return block(failed?.text ?? CryptoText.epochKeysNotLoaded);
    }
    if (info.epochId === null || info.epochNumber < head.epochNumber) {
      return block(this.warn(channelId, "rollback", { epochNumber: info.epochNumber }).text);
    }
    if (info.epochNumber === head.epochNumber && info.epochId !== head.epochId) {
      return block(this.warn(channelId, "fork", { epochNumber: info.epochNumber }).text);
    }
    if (info.commit && info.epochId === head.epochId) {
      // The same epoch id under a commit other than the one verified (members slipped in or out).
      const verified = chain.epochs[String(head.epochNumber)];
      const offered = membersOf(info.commit);
      const same =
        verified !== undefined &&
        verified.members.length === offered.length &&
        verified.members.every((m, i) => m.did === offered[i]?.did && m.fp === offered[i]?.fp);
      if (!same) return block(this.warn(channelId, "signature", { epochNumber: info.epochNumber }).text);
    }
    if (info.epochNumber > head.epochNumber) {
      const failed = view?.warnings.find((w) => w.epochNumber === info.epochNumber && w.check !== "handle");
      return block(failed?.text ?? CryptoText.epochKeysNotLoaded);
    }
    if (view?.sendBlocked && latest()) {
      view.sendBlocked = false;
      this.c.changed();
    }
    return head;
  }

  // ---- rotation (rotation.ts) -------------------------------------------------------------------

  /** Makes the next epoch; concurrent calls share one attempt (rotation.ts). */
  rotate(channelId: string, opts: RotateOptions = {}): Promise<void> {
    return this.rotation.rotate(channelId, opts);
  }

  /**
   * The epoch a message goes out under (protocol §7 "No rollback", §8), after any rotation the policy
   * asks for: never under a v1 or v2 head (a v3 client upgrades the channel first); this user's own
   * key-change commit first when the current commit lists them under a key they replaced; a rotation
   * when the server requires one, when there is no epoch, or when the verified head is older than the
   * rotation limit (its own commit's time, never the server's word). Then the server's current epoch
   * must be the verified head; anything else blocks sending with the warning's words.
   */
  async headForSending(
    channelId: string,
    view: ChannelView,
    publicKey: string,
  ): Promise<{
    head: { epochId: string; epochNumber: number };
    vk: { key: EpochKey; epoch: VerifiedEpoch };
  }> {
    let info = view.epoch ?? (await this.refreshEpoch(channelId));
    const chain = await this.chain(channelId);
    const headEntry = chain.head ? chain.epochs[String(chain.head.epochNumber)] : undefined;
    const madeAt = headEntry?.createdAt ?? info.createdAt;
    const tooOld = madeAt != null && this.c.now() - madeAt > Limits.epochMaxAgeMs;
    const legacyHead = headEntry !== undefined && headEntry.v !== 3;
    const mine = info.commit?.members.find((m) => m.did === this.c.me().did)?.fp;
    const listedUnderOldKey = mine !== undefined && mine !== (await this.keys.fingerprintOf(publicKey));
    if (legacyHead && !info.rotationRequired && info.epochId === chain.head?.epochId) {
      await this.rotate(channelId, { reason: "manual" });
      info = view.epoch ?? (await this.refreshEpoch(channelId));
    } else if (listedUnderOldKey) {
      // They reset their key: others' epochs went to the old key; their own commit comes first.
      await this.rotate(channelId, { reason: "key-change" });
      info = view.epoch ?? (await this.refreshEpoch(channelId));
    } else if (info.rotationRequired || tooOld || !info.epochId) {
      await this.rotate(channelId, tooOld && !info.rotationRequired ? { reason: "scheduled" } : {});
      info = view.epoch ?? (await this.refreshEpoch(channelId));
    }
    let head = await this.reconcile(channelId, info);
    if (typeof head === "string") {
      // The server may simply be ahead of us: fetch and verify, then look again.
      info = await this.refreshEpoch(channelId);
      head = await this.reconcile(channelId, info);
    }
    if (typeof head === "string") throw new SendBlockedError(head);
    const vk = await this.verifiedKey(channelId, head.epochId);
    if (!vk) throw new Error(CryptoText.epochKeysNotLoaded);
    return { head, vk };
  }

  /**
   * The epoch keys of a channel that this client verified, for decryption (never an unverified one).
   * A verified (epoch, key) pair never changes, so lookups are shared and found pairs remembered;
   * misses are forgotten at once (the epoch may be verified a moment later).
   */
  verifiedKey(channelId: string, epochId: string): Promise<{ key: EpochKey; epoch: VerifiedEpoch } | null> {
    // Keys wiped (logout, DISCONNECT): nothing remembered from before may outlive them.
    if (this.cacheGeneration !== this.c.keyring.generation) {
      this.verifiedKeys.clear();
      this.cacheGeneration = this.c.keyring.generation;
    }
    const cacheKey = `${channelId}|${epochId}`;
    const cached = this.verifiedKeys.get(cacheKey);
    if (cached) return cached;
    const p = (async () => {
      const epoch = await this.chains.epochById(channelId, epochId);
      if (!epoch || epoch.anchor) return null;
      const key = await this.c.keyring.epochKey(channelId, epochId);
      return key ? { key, epoch } : null;
    })();
    this.verifiedKeys.set(cacheKey, p);
    p.then(
      (found) => {
        if (!found) this.verifiedKeys.delete(cacheKey);
      },
      () => this.verifiedKeys.delete(cacheKey),
    );
    return p;
  }
}
