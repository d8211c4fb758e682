// Commits (protocol §5, §7): clients build and sign only v2 commits, and still verify v1 commits
// because v1 history stays readable ("legacy key binding").
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import {
  buildCommit,
  CryptoError,
  CryptoText,
  canon,
  fingerprint,
  fromBase64,
  generateEpochKey,
  keyCommitment,
  newEpochId,
  sealState,
  signCommit,
  toBase64,
  utf8,
  verifyCommit,
} from "../../../core/crypto/index.ts";
import { Commit, type CommitV1 } from "../../../core/protocol/index.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const [alice, bob, carol] = (await Promise.all([testUser(1), testUser(2), testUser(3)])) as [
  TestUser,
  TestUser,
  TestUser,
];
const handles = new Map([
  [alice.did, "alice.test"],
  [bob.did, "bob.test"],
  [carol.did, "carol.test"],
]);

async function members(...users: TestUser[]) {
  return Promise.all(
    users.map(async (u) => ({
      did: u.did,
      fp: await fingerprint(u.publicKey),
      handle: handles.get(u.did) ?? "",
    })),
  );
}

// A genuine commitment and sealed state, so the v2 fields are well formed as a client makes them.
const epochId = newEpochId();
const epochKey = generateEpochKey();
const commitInput = {
  channelId: CHANNEL,
  epochNumber: 2,
  epochId,
  prevEpochId: newEpochId(),
  reason: "manual" as const,
  keyCommitment: await keyCommitment({ channelId: CHANNEL, epochId, epochNumber: 2, epochKey }),
  sealedState: await sealState({ channelId: CHANNEL, epochId, epochKey, state: { linkSecret: null } }),
  createdAt: 1_700_000_000_000,
};

async function signRaw(user: TestUser, c: object): Promise<string> {
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    user.identity.signingKey,
    utf8(canon(c)),
  );
  return toBase64(new Uint8Array(sig));
}

describe("commits (v2)", () => {
  test("buildCommit sorts members by did, keeps only {did, fp, handle}, and matches the wire schema", async () => {
    const list = await members(carol, alice, bob);
    const extra = list.map((m) => ({ ...m, note: "x" }));
    const commit = buildCommit({ ...commitInput, creatorDid: bob.did, members: extra });
    expect(commit.v).toBe(2);
    expect(commit.members.map((m) => m.did)).toEqual([alice.did, bob.did, carol.did].sort());
    expect(commit.members.every((m) => Object.keys(m).join() === "did,fp,handle")).toBe(true);
    expect(Value.Check(Commit, commit)).toBe(true);
  });

  test("buildCommit refuses a creator outside the members and a did listed twice", async () => {
    expect(() => buildCommit({ ...commitInput, creatorDid: carol.did, members: [] })).toThrow(CryptoError);
    const list = await members(alice, bob);
    expect(() => buildCommit({ ...commitInput, creatorDid: carol.did, members: list })).toThrow(
      CryptoText.invalidCommit("creator is not a member"),
    );
    expect(() =>
      buildCommit({ ...commitInput, creatorDid: alice.did, members: [...list, list[0] as (typeof list)[0]] }),
    ).toThrow(/duplicated/);
  });

  test("buildCommit refuses a bad reason, a short key commitment and a bad handle", async () => {
    const list = await members(alice, bob);
    const input = { ...commitInput, creatorDid: alice.did, members: list };
    // biome-ignore lint/suspicious/noExplicitAny: a reason outside the protocol's list
    expect(() => buildCommit({ ...input, reason: "whim" as any })).toThrow(/bad reason/);
    expect(() => buildCommit({ ...input, keyCommitment: toBase64(new Uint8Array(16)) })).toThrow(
      /bad keyCommitment/,
    );
    expect(() =>
      buildCommit({ ...input, members: list.map((m) => ({ ...m, handle: "Not A Handle" })) }),
    ).toThrow(/bad member handle/);
  });

  test("a signed commit verifies only under its creator's key, and covers every v2 field", async () => {
    const commit = buildCommit({ ...commitInput, creatorDid: alice.did, members: await members(alice, bob) });
    const signature = await signCommit(alice.identity, commit);
    expect(fromBase64(signature).length).toBe(64);
    expect(await verifyCommit(commit, signature, alice.publicKey)).toBe(true);
    expect(await verifyCommit(commit, signature, bob.publicKey)).toBe(false);
    expect(await verifyCommit({ ...commit, epochNumber: 3 }, signature, alice.publicKey)).toBe(false);
    expect(
      await verifyCommit({ ...commit, members: commit.members.slice(0, 1) }, signature, alice.publicKey),
    ).toBe(false);
    const otherKey = generateEpochKey();
    const edits = [
      { reason: "kick" as const },
      {
        keyCommitment: await keyCommitment({
          channelId: CHANNEL,
          epochId,
          epochNumber: 2,
          epochKey: otherKey,
        }),
      },
      {
        sealedState: await sealState({ channelId: CHANNEL, epochId, epochKey, state: { linkSecret: null } }),
      },
      { members: commit.members.map((m) => ({ ...m, handle: `${m.handle}x` })) },
    ];
    for (const edit of edits) {
      expect(await verifyCommit({ ...commit, ...edit }, signature, alice.publicKey)).toBe(false);
    }
  });

  test("verifyCommit is false, never throwing, for anything malformed", async () => {
    const commit = buildCommit({ ...commitInput, creatorDid: alice.did, members: await members(alice, bob) });
    const good = await signCommit(alice.identity, commit);
    // Signed by the creator over the exact canon, yet still refused: shape rules come first.
    const unsorted = { ...commit, members: [...commit.members].reverse() };
    const notMember = { ...commit, members: commit.members.filter((m) => m.did !== alice.did) };
    const wrongFp = { ...commit, members: commit.members.map((m) => ({ ...m, fp: "0".repeat(32) })) };
    const extraField = { ...commit, note: "hi" };
    const noHandle = { ...commit, members: commit.members.map(({ did, fp }) => ({ did, fp })) };
    const { sealedState: _dropped, ...noSealedState } = commit;
    const asV1 = { ...commit, v: 1 };
    for (const c of [unsorted, notMember, wrongFp, extraField, noHandle, noSealedState, asV1]) {
      expect(await verifyCommit(c as typeof commit, await signRaw(alice, c), alice.publicKey)).toBe(false);
    }
    for (const sig of ["", "!!!", toBase64(new Uint8Array(64)), toBase64(new Uint8Array(70))]) {
      expect(await verifyCommit(commit, sig, alice.publicKey)).toBe(false);
    }
    expect(await verifyCommit(commit, good, "garbage")).toBe(false);
    // biome-ignore lint/suspicious/noExplicitAny: hostile input
    expect(await verifyCommit(null as any, good, alice.publicKey)).toBe(false);
  });
});

describe("commits (v1, legacy history)", () => {
  // Clients no longer make v1 commits, so the legacy commit is written out literally as §5 shapes it.
  async function legacyCommit(): Promise<CommitV1> {
    const list = await members(bob, alice);
    return {
      v: 1,
      channelId: CHANNEL,
      epochNumber: 2,
      epochId,
      prevEpochId: commitInput.prevEpochId,
      creatorDid: alice.did,
      members: list.map(({ did, fp }) => ({ did, fp })).sort((a, b) => (a.did < b.did ? -1 : 1)),
      createdAt: commitInput.createdAt,
    };
  }

  test("a signed v1 commit still verifies only under its creator's key", async () => {
    const commit = await legacyCommit();
    expect(Value.Check(Commit, commit)).toBe(true);
    const signature = await signRaw(alice, commit);
    expect(await verifyCommit(commit, signature, alice.publicKey)).toBe(true);
    expect(await verifyCommit(commit, signature, bob.publicKey)).toBe(false);
    expect(await verifyCommit({ ...commit, epochNumber: 3 }, signature, alice.publicKey)).toBe(false);
  });

  test("a v1 commit carrying v2 fields is malformed, even when signed over exactly those bytes", async () => {
    const commit = await legacyCommit();
    const withHandles = { ...commit, members: commit.members.map((m) => ({ ...m, handle: "h.test" })) };
    const withReason = { ...commit, reason: "manual" };
    for (const c of [withHandles, withReason]) {
      expect(await verifyCommit(c as CommitV1, await signRaw(alice, c), alice.publicKey)).toBe(false);
    }
  });
});
