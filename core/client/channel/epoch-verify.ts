import {
  checkKeyCommitment,
  memberKeyProblem,
  openState,
  verifyCommit,
  verifyInvite,
  verifyLinkProof,
  verifyObject,
} from "../../crypto/index.ts";
import type { Admission, Admissions, AnyChannelType, Commit, KeyChange } from "../../protocol/runtime.ts";
import type { AdmissionCheck, EpochChange, SecurityCheck } from "../view/state.ts";
import type { ChainState, VerifiedEpoch } from "./chain.ts";
import { membersOf } from "./chain.ts";

/** A commit the server offers, with the evidence of who it added and (when held) its key. */
export interface EpochCandidate {
  commit: Commit;
  signature: string;
  admissions: Admissions;
  /** The unwrapped key; absent for an anchor (an epoch taken without its key, see ChainState). */
  epochKey?: Uint8Array;
  /**
   * Set only for an epoch this client made itself this moment (or recognised as exactly its own
   * after a lost reply): its signature and key commitment hold by construction and are not redone.
   */
  own?: { linkSecret: string | null };
  /**
   * Taken on first use: a newcomer's base (see EpochManager.anchor). Without it, an epoch offered
   * without a key is still checked in full but for the key (its member list continues the chain).
   */
  anchor?: boolean;
  /** Protocol §8: the key-change statement stored with a key-change commit, signed by the old key. */
  keyChange?: KeyChange | null;
}

export interface VerifyContext {
  channelId: string;
  channelType: AnyChannelType;
  /** The channel's creator (the did of its canonical uri): the only one who may make epoch 1. */
  channelCreator: string | null;
  chain: ChainState;
  myDid: string;
  myFp: string;
  /** The pinned key of a did (fetched and pinned on first sight), or null. */
  keyOf(did: string): Promise<string | null>;
  /**
   * A key the did had before its current one whose fingerprint, computed here, is `fp`; or null.
   * The server supplies it; what binds it is the fingerprint a signed member list names.
   */
  previousKeyOf(did: string, fp: string): Promise<string | null>;
  handleOf(did: string): string;
  /**
   * Protocol §8: the key of `did` whose fingerprint (computed here) is `fp`, wherever the server
   * offers it (current or replaced keys); the fingerprint a signed list names is what binds it.
   */
  keyWithFp(did: string, fp: string): Promise<string | null>;
}

export type VerifyResult =
  | { ok: true; entry: VerifiedEpoch; change: EpochChange | null }
  | { ok: false; check: SecurityCheck; did?: string; handle?: string; detail: string };

const fail = (check: SecurityCheck, detail: string, did?: string, handle?: string): VerifyResult => ({
  ok: false,
  check,
  detail,
  ...(did ? { did } : {}),
  ...(handle ? { handle } : {}),
});

/** The newest verified epoch below `n`: "the previous verified commit" of protocol §7. */
export function previousVerified(chain: ChainState, n: number): VerifiedEpoch | null {
  let best: VerifiedEpoch | null = null;
  for (const e of Object.values(chain.epochs)) {
    if (e.epochNumber < n && (!best || e.epochNumber > best.epochNumber)) best = e;
  }
  return best;
}

/**
 * The "previous commit" a direct conversation's epoch 1 is checked against (directly above): its
 * creator alone, so the only invites that admit anyone into it are the creator's.
 */
export function openerOnly(c: { creatorDid: string; members: { did: string; fp: string }[] }): VerifiedEpoch {
  return {
    epochId: "",
    epochNumber: 0,
    v: 3,
    createdAt: 0,
    creatorDid: c.creatorDid,
    reason: null,
    members: c.members.filter((m) => m.did === c.creatorDid),
    linkSecret: null,
    linkChanged: false,
  };
}

/**
 * Checks a joiner's admission evidence (protocol §7 "Authenticated membership") against the previous
 * verified commit: an invite signed by one of its members for exactly this person and channel, or a
 * link MAC under the link secret in force then. Public channels need none.
 */
export async function checkAdmission(
  ctx: VerifyContext,
  prev: VerifiedEpoch,
  joiner: { did: string; fp: string },
  admission: Admission | undefined | null,
  version: 1 | 2 | 3 = 2,
): Promise<AdmissionCheck | null> {
  if (ctx.channelType === "public") return "public";
  if (!admission) return null;
  if (admission.kind === "invite") {
    const inv = admission.invite;
    if (inv.channelId !== ctx.channelId || inv.inviteeDid !== joiner.did) return null;
    // Protocol §8: into a secret channel, a v3 commit admits only by a v3 invite that seals the link
    // to the invitee (so every member, however they came in, can check link admissions).
    if (version === 3 && ctx.channelType === "secret" && (inv.v !== 3 || !("sealedLink" in inv))) return null;
    if (!prev.members.some((m) => m.did === inv.inviterDid) || inv.inviterDid === joiner.did) return null;
    const inviterKey = await ctx.keyOf(inv.inviterDid);
    if (!inviterKey || !(await verifyInvite(inv, admission.signature, inviterKey))) return null;
    return "invite";
  }
  if (admission.kind === "link" && ctx.channelType === "secret") {
    const p = admission.proof;
    if (p.channelId !== ctx.channelId || p.did !== joiner.did || p.fp !== joiner.fp) return null;
    // A keyless epoch (an anchor, or one wrapped to a key this device no longer has) cannot show its
    // sealed link: the link in force is then the newest this client knows (the one it joined with).
    const secret = prev.linkSecret ?? (prev.anchor ? ctx.chain.linkSecret : null);
    // Without the link secret this device cannot check the MAC. Protocol §7 said so neutrally; §8
    // makes it a failure (a ghost could come in that way): only legacy v2 commits keep the old rule.
    if (!secret) return version === 3 ? null : "link-unchecked";
    return (await verifyLinkProof(p, secret)) ? "link" : null;
  }
  return null;
}

/**
 * A key the commit's creator had before their current one (they replaced it: "I lost my key"), for a
 * commit they made under it. The commit must list the creator under that key's fingerprint, and:
 * - when this client holds a verified commit before it, the newest of those must list the creator
 *   under the same fingerprint: the signed chain says they held that key then, so a replaced key
 *   cannot sign past the commit that replaced it;
 * - with nothing verified before it (a newcomer's anchor, the first epoch a fresh device is shown),
 *   only this client's own earlier key: for anyone else, a signed list naming a key other than the one
 *   the server now shows is exactly what a swapped key looks like, so it stays refused.
 */
async function earlierCreatorKey(ctx: VerifyContext, c: Commit): Promise<string | null> {
  const listed = c.members.find((m) => m.did === c.creatorDid)?.fp;
  if (!listed) return null;
  const prev = previousVerified(ctx.chain, c.epochNumber);
  if (prev ? prev.members.find((m) => m.did === c.creatorDid)?.fp !== listed : c.creatorDid !== ctx.myDid) {
    return null;
  }
  return ctx.previousKeyOf(c.creatorDid, listed);
}

/**
 * Whether a commit may be used, in protocol §7's order: (1) its signature under the creator's pinned
 * key, (2) its creator (a member of the previous verified commit, an admitted joiner with reason
 * "join", or for epoch 1 the channel's creator), (3) its key against keyCommitment, (4) its chain. It
 * also refuses forks, v1 commits after the first v2 one, commits that do not list this client, and
 * joiners without evidence. Pure: the caller commits the result.
 */
export async function verifyEpoch(ctx: VerifyContext, cand: EpochCandidate): Promise<VerifyResult> {
  const c = cand.commit;
  const n = c.epochNumber;
  if (c.channelId !== ctx.channelId) return fail("chain", "commit of another channel");
  const known = ctx.chain.epochs[String(n)];
  if (known && known.epochId !== c.epochId) return fail("fork", `two commits for epoch ${n}`);
  if (c.v === 1 && ctx.chain.firstV2 !== null && n > ctx.chain.firstV2) {
    return fail("legacy-after-v2", `v1 commit for epoch ${n}`);
  }
  const firstV3 = ctx.chain.firstV3 ?? null;
  if (c.v !== 3 && firstV3 !== null && n > firstV3) {
    return fail("legacy-after-v2", `v${c.v} commit for epoch ${n} after the first v3 commit`);
  }
  const hasKey = cand.epochKey !== undefined;
  const isAnchor = !hasKey && cand.anchor === true;
  // (1) signature, under the key pinned for the creator (never a key the commit itself offers), or
  // under a key the creator had before, when the chain says they had it then (earlierCreatorKey).
  if (!cand.own && c.v === 3) {
    // Protocol §8: checked under the creator key whose fingerprint the commit lists (a key-change
    // commit under the new key); the chain below decides whether that key may be theirs.
    const listed = c.members.find((m) => m.did === c.creatorDid)?.fp;
    const key = listed ? await ctx.keyWithFp(c.creatorDid, listed) : null;
    if (!key || !(await verifyCommit(c, cand.signature, key))) {
      return fail("signature", "commit signature", c.creatorDid, ctx.handleOf(c.creatorDid));
    }
  } else if (!cand.own) {
    const creatorKey = await ctx.keyOf(c.creatorDid);
    let ok = creatorKey !== null && (await verifyCommit(c, cand.signature, creatorKey));
    if (!ok) {
      const earlier = await earlierCreatorKey(ctx, c);
      ok = earlier !== null && earlier !== creatorKey && (await verifyCommit(c, cand.signature, earlier));
    }
    if (!ok) return fail("signature", "commit signature", c.creatorDid, ctx.handleOf(c.creatorDid));
  }
  const mine = c.members.find((m) => m.did === ctx.myDid);
  if (hasKey && (!mine || mine.fp !== ctx.myFp)) return fail("members", "this device's key is not listed");

  // (2) creator, and the evidence of everyone the commit adds.
  const prev = previousVerified(ctx.chain, n);
  let change: EpochChange | null = null;
  if (n === 1) {
    if (c.prevEpochId !== null || (ctx.channelCreator !== null && c.creatorDid !== ctx.channelCreator)) {
      return fail(
        "creator",
        "epoch 1 not made by the channel's creator",
        c.creatorDid,
        ctx.handleOf(c.creatorDid),
      );
    }
  }
  // A direct conversation's epoch 1 lists everyone at once, and nobody joined by themselves: each
  // member but its creator must be admitted by an invite the creator signed (the evidence a group's
  // later joiners bring too), so a server cannot put a third person into the first epoch unseen.
  if (n === 1 && ctx.channelType === "direct" && !isAnchor) {
    const opener = openerOnly(c);
    for (const m of c.members) {
      if (m.did === c.creatorDid) continue;
      if (!(await checkAdmission(ctx, opener, m, cand.admissions[m.did], c.v))) {
        return fail("admission", "no invite from the conversation's opener", m.did, ctx.handleOf(m.did));
      }
    }
  }
  // An anchor is taken on first use (only its signature, fork and chain are checkable): nothing the
  // client holds tells who was a member then.
  if (prev && !isAnchor) {
    const before = new Map(prev.members.map((m) => [m.did, m]));
    const now = new Map(c.members.map((m) => [m.did, m]));
    const creatorWasMember = before.has(c.creatorDid);
    const creatorJoins = c.v !== 1 && c.reason === "join" && now.has(c.creatorDid);
    // Protocol §8 (check member-key): a continuing member's key changes only in their own key-change
    // commit, their name only in a commit of their own; any other change is a re-key by someone else.
    let keyChange: EpochChange["keyChange"];
    let renamed: EpochChange["renamed"];
    if (c.v === 3) {
      // The rule itself is core/crypto's (memberKeyProblem); both kinds are reported as member-key
      // (protocol §8 names that check for a changed key or name alike).
      const problem = memberKeyProblem(prev, c);
      if (problem) {
        const what = problem.check === "handle" ? "name" : "key";
        return fail(
          "member-key",
          `a member's ${what} changed in a commit not their own`,
          problem.did,
          ctx.handleOf(problem.did),
        );
      }
      // What is allowed is the creator's own change of key (a key-change commit) or of name.
      const own = c.members.find((m) => m.did === c.creatorDid);
      const was = own ? before.get(own.did) : undefined;
      if (own && was && was.fp !== own.fp) {
        keyChange = {
          did: own.did,
          handle: own.handle,
          signed: await keyChangeSigned(ctx, c, was.fp, own.fp, cand.keyChange ?? null),
        };
      }
      if (own && was?.handle !== undefined && was.handle !== own.handle) {
        renamed = { did: own.did, from: was.handle, to: own.handle };
      }
      if (c.reason === "key-change" && !keyChange && !creatorWasMember) {
        return fail(
          "creator",
          "key change by someone who is not a member",
          c.creatorDid,
          ctx.handleOf(c.creatorDid),
        );
      }
    }
    if (!creatorWasMember && !creatorJoins) {
      return fail("creator", "creator is not a member", c.creatorDid, ctx.handleOf(c.creatorDid));
    }
    // The timeline row names people as the signed lists do (this commit's, or the previous one's for
    // those it removes), never by the server's word; v1 lists carry no names.
    const named = (did: string, list: readonly { did: string; handle?: string }[] = c.members) =>
      list.find((x) => x.did === did)?.handle ?? ctx.handleOf(did);
    const added: EpochChange["added"] = [];
    for (const m of c.members) {
      if (before.has(m.did)) continue;
      if (c.v === 1) {
        added.push({ did: m.did, handle: ctx.handleOf(m.did), admission: "none" });
        continue;
      }
      const checked = await checkAdmission(ctx, prev, m, cand.admissions[m.did], c.v);
      if (!checked) return fail("admission", "no checkable admission", m.did, ctx.handleOf(m.did));
      added.push({ did: m.did, handle: named(m.did), admission: checked });
    }
    change = {
      epochNumber: n,
      reason: c.v !== 1 ? c.reason : "legacy",
      creator: { did: c.creatorDid, handle: named(c.creatorDid) },
      added,
      removed: prev.members
        .filter((m) => !now.has(m.did))
        .map((m) => ({ did: m.did, handle: named(m.did, prev.members) })),
      rekeyed: c.members
        .filter((m) => before.has(m.did) && before.get(m.did)?.fp !== m.fp)
        .map((m) => ({ did: m.did, handle: named(m.did) })),
      linkChanged: false,
      ...(keyChange ? { keyChange } : {}),
      ...(renamed ? { renamed } : {}),
    };
  }
  // (4) chain: whenever this client holds epoch n − 1, the commit must name it.
  const held = ctx.chain.epochs[String(n - 1)];
  if (held && c.prevEpochId !== held.epochId) return fail("chain", `prevEpochId is not epoch ${n - 1}`);

  // (3) the key against the commitment, then the sealed state it opens.
  // An anchor's sealed state cannot be opened: the link in force then is the newest this client
  // knows (the one it just joined with, when it came by link), not an older epoch's.
  // A keyless epoch's sealed state cannot be opened, so the link in force then is unknown (null:
  // link admissions checked against it read "cannot check"). A newcomer's anchor is the exception:
  // the link in force is the one it just joined with.
  let linkSecret = hasKey
    ? (prev?.linkSecret ?? ctx.chain.linkSecret)
    : isAnchor
      ? (ctx.chain.linkSecret ?? prev?.linkSecret ?? null)
      : null;
  let linkChanged = false;
  let sealedNull = false;
  if (cand.own) {
    linkChanged = cand.own.linkSecret !== null && cand.own.linkSecret !== linkSecret;
    if (cand.own.linkSecret !== null) linkSecret = cand.own.linkSecret;
  } else if (hasKey && c.v !== 1) {
    const epochKey = cand.epochKey as Uint8Array;
    const ok = await checkKeyCommitment({
      channelId: ctx.channelId,
      epochId: c.epochId,
      epochNumber: n,
      epochKey,
      keyCommitment: c.keyCommitment,
    });
    if (!ok) return fail("key-commitment", "key does not match the commitment");
    try {
      const state = await openState({
        channelId: ctx.channelId,
        epochId: c.epochId,
        epochKey,
        sealedState: c.sealedState,
      });
      sealedNull = state.linkSecret === null;
      if (state.linkSecret !== null) {
        linkChanged = state.linkSecret !== linkSecret;
        linkSecret = state.linkSecret;
      }
    } catch {
      return fail("key-commitment", "sealed state does not open under the committed key");
    }
    // Protocol §8: in a secret channel every v3 commit seals the link, so every member can check
    // link admissions (before the channel's first v3 commit a v2 null is legacy).
    if (c.v === 3 && ctx.channelType === "secret" && sealedNull) {
      return fail(
        "admission",
        "a secret channel's commit without its link",
        c.creatorDid,
        ctx.handleOf(c.creatorDid),
      );
    }
  }
  if (change) change.linkChanged = linkChanged && prev !== null;
  const entry: VerifiedEpoch = {
    epochId: c.epochId,
    epochNumber: n,
    v: c.v,
    createdAt: c.createdAt,
    creatorDid: c.creatorDid,
    reason: c.v !== 1 ? c.reason : null,
    members: membersOf(c),
    linkSecret: linkSecret ?? null,
    linkChanged,
    // Keyless entries (anchors, epochs whose key this device cannot open) continue the chain but are
    // never used to decrypt or send.
    ...(!hasKey ? { anchor: true } : {}),
    ...(change ? { change } : {}),
    ...(c.v === 3 ? { chains: c.chains } : {}),
    ...(c.v === 3 && c.retentionDays !== undefined ? { retentionDays: c.retentionDays } : {}),
  };
  return { ok: true, entry, change };
}

/**
 * Protocol §8: a key-change commit may carry a statement signed by the member's previous key; it
 * counts only when it names exactly this change (did, both fingerprints, channel and epoch) and
 * verifies under the key the previous commit listed.
 */
async function keyChangeSigned(
  ctx: VerifyContext,
  c: Commit,
  oldFp: string,
  newFp: string,
  kc: KeyChange | null,
): Promise<boolean> {
  if (!kc) return false;
  const st = kc.statement;
  if (
    st.v !== 3 ||
    st.did !== c.creatorDid ||
    st.channelId !== ctx.channelId ||
    st.epochId !== c.epochId ||
    st.oldFp !== oldFp ||
    st.newFp !== newFp
  ) {
    return false;
  }
  const oldKey = await ctx.keyWithFp(c.creatorDid, oldFp);
  return oldKey !== null && (await verifyObject(st, kc.signature, oldKey));
}
