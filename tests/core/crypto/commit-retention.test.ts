// Retention (docs/protocol-extensions.md "Retention"): a v3 commit may carry `retentionDays`, signed
// with the rest; commits without it verify as before; members read the setting only from the signed
// owner's newest commit; and, under retention, a young record a server removes still shows as withheld.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import {
  type ChainState,
  effectiveRetentionDays,
  type SeenState,
  signedRetentionDays,
  type VerifiedEpoch,
} from "../../../core/client/channel/chain.ts";
import { withheldRuns } from "../../../core/client/channel/integrity.ts";
import {
  buildCommit,
  fingerprint,
  generateEpochKey,
  keyCommitment,
  newEpochId,
  sealState,
  signCommit,
  verifyCommit,
} from "../../../core/crypto/index.ts";
import { Commit } from "../../../core/protocol/index.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const [alice, bob] = (await Promise.all([testUser(1), testUser(2)])) as [TestUser, TestUser];
const epochId = newEpochId();
const epochKey = generateEpochKey();
const input = {
  v: 3 as const,
  channelId: CHANNEL,
  epochNumber: 2,
  epochId,
  prevEpochId: newEpochId(),
  reason: "manual" as const,
  keyCommitment: await keyCommitment({ channelId: CHANNEL, epochId, epochNumber: 2, epochKey }),
  sealedState: await sealState({ channelId: CHANNEL, epochId, epochKey, state: { linkSecret: null } }),
  createdAt: 1_700_000_000_000,
  creatorDid: alice.did,
  members: [
    { did: alice.did, fp: await fingerprint(alice.publicKey), handle: "alice.test" },
    { did: bob.did, fp: await fingerprint(bob.publicKey), handle: "bob.test" },
  ],
  chains: [],
};

describe("retentionDays in a v3 commit", () => {
  test("is signed with the commit: changing or removing it breaks the signature", async () => {
    const commit = buildCommit({ ...input, retentionDays: 30 });
    expect(commit.retentionDays).toBe(30);
    expect(Value.Check(Commit, commit)).toBe(true);
    const signature = await signCommit(alice.identity, commit);
    expect(await verifyCommit(commit, signature, alice.publicKey)).toBe(true);
    expect(await verifyCommit({ ...commit, retentionDays: 1 }, signature, alice.publicKey)).toBe(false);
    const { retentionDays: _, ...without } = commit;
    expect(await verifyCommit(without, signature, alice.publicKey)).toBe(false);
  });

  test("a commit without it is exactly as before (old commits verify unchanged)", async () => {
    const commit = buildCommit(input);
    expect(Object.hasOwn(commit, "retentionDays")).toBe(false);
    const signature = await signCommit(alice.identity, commit);
    expect(await verifyCommit(commit, signature, alice.publicKey)).toBe(true);
  });

  test("out of range, not whole, or in a v2 commit: refused", async () => {
    expect(() => buildCommit({ ...input, retentionDays: 0 })).toThrow(/bad retentionDays/);
    expect(() => buildCommit({ ...input, retentionDays: 36_501 })).toThrow(/bad retentionDays/);
    expect(() => buildCommit({ ...input, retentionDays: 1.5 })).toThrow(/bad retentionDays/);
    const { v: _v, chains: _c, ...v2 } = input;
    expect(() => buildCommit({ ...v2, retentionDays: 30 })).toThrow(/only in a v3 commit/);
    const good = buildCommit(input);
    const signature = await signCommit(alice.identity, good);
    // A malformed value never verifies (and the schema refuses it on the wire).
    const bad = { ...good, retentionDays: -1 };
    expect(await verifyCommit(bad, signature, alice.publicKey)).toBe(false);
    expect(Value.Check(Commit, bad)).toBe(false);
  });
});

function epoch(n: number, creatorDid: string, extra: Partial<VerifiedEpoch> = {}): VerifiedEpoch {
  return {
    epochId: `${n}`.padStart(32, "0"),
    epochNumber: n,
    v: 3,
    createdAt: 1_700_000_000_000 + n,
    creatorDid,
    reason: "manual",
    members: [],
    linkSecret: null,
    linkChanged: false,
    ...extra,
  };
}

describe("which setting members read", () => {
  test("the signed owner's newest commit; anyone else's commits set nothing", () => {
    const chain: ChainState = {
      head: null,
      firstV2: null,
      owner: alice.did,
      linkSecret: null,
      epochs: {
        "1": epoch(1, alice.did),
        "2": epoch(2, alice.did, { retentionDays: 30 }),
        "3": epoch(3, bob.did, { retentionDays: 1 }),
      },
    };
    expect(signedRetentionDays(chain)).toBe(30);
    chain.epochs["4"] = epoch(4, alice.did);
    expect(signedRetentionDays(chain)).toBeNull();
    expect(effectiveRetentionDays(30, 90)).toBe(30);
    expect(effectiveRetentionDays(120, 90)).toBe(90);
    expect(effectiveRetentionDays(null, 90)).toBe(90);
    expect(effectiveRetentionDays(null, null)).toBeNull();
  });
});

describe("a server lying about retention", () => {
  // Bob's chain: this device loaded the channel from its start and saw numbers 7 and 8 only (the
  // server removed 1–6). A commit made inside the retention window listed bob's chain at 4.
  const key = `${bob.did}|${"b".repeat(32)}`;
  const seen: SeenState = {
    pairs: {},
    epochFirstSeq: {},
    chains: { [key]: { "7": "m7@20@3", "8": "m8@21@3" } },
  };
  const held = () => true;
  const loadedFromStart = (from: number) => from >= 1;

  test("numbers after a young commit's listing are withheld, even below the lowest seen", () => {
    const runs = withheldRuns(seen, {}, held, loadedFromStart, { [key]: { n: 4, epochNumber: 2 } });
    expect(runs).toEqual([{ did: bob.did, device: "b".repeat(32), from: 5, to: 6, beforeSeq: 20 }]);
  });

  test("an honest removal (nothing young listed past what is kept) claims nothing", () => {
    expect(withheldRuns(seen, {}, held, loadedFromStart, { [key]: { n: 6, epochNumber: 2 } })).toEqual([]);
    expect(withheldRuns(seen, {}, held, loadedFromStart, {})).toEqual([]);
  });

  test("nothing is claimed where this device did not load the start or hold the epochs", () => {
    const floor = { [key]: { n: 4, epochNumber: 2 } };
    expect(withheldRuns(seen, {}, held, (from) => from >= 15, floor)).toEqual([]);
    expect(withheldRuns(seen, {}, () => false, loadedFromStart, floor)).toEqual([]);
  });
});
