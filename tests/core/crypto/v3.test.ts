// Protocol v3 constructions beyond the vectors: the edges of each builder and checker (core/crypto).
import { describe, expect, test } from "bun:test";
import {
  type BuildCommitInput,
  buildCommit,
  buildDeletion,
  buildDeletionV3,
  buildInvite,
  buildInviteV3,
  buildKeyChange,
  buildReadMarker,
  CryptoError,
  checkInviteForChannel,
  commitProblem,
  createEpoch,
  deletionTargetProblem,
  encryptMessage,
  fingerprint,
  formatDeviceLinkCode,
  generateEpochKey,
  generateIdentity,
  importIdentity,
  isDeviceLinkCode,
  linkConfirmation,
  memberKeyProblem,
  messageAad,
  newDeviceId,
  newDeviceLinkCode,
  newLinkEphemeral,
  newLinkSecret,
  normalizeDeviceLinkCode,
  openDeviceLink,
  openInviteLink,
  rawFromPublicJwk,
  sealDeviceLink,
  sealInviteLink,
  signKeyChange,
  signObject,
  signReadMarker,
  verifyCommit,
  verifyDeletion,
  verifyInvite,
  verifyKeyChange,
  verifyReadMarker,
} from "../../../core/crypto/index.ts";
import type {
  ChainEntry,
  Commit,
  CommitV2,
  CommitV3,
  ReadMarkerObject,
} from "../../../core/protocol/index.ts";

const channelId = "abcdefghijklmnop";
const dids = {
  alice: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa",
  bob: "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb",
  carol: "did:plc:cccccccccccccccccccccccc",
};
const fp = (c: string) => c.repeat(32);

async function person(did: string, handle: string) {
  const g = await generateIdentity();
  const identity = await importIdentity(g.privateKey);
  return { did, handle, identity, publicKey: g.publicKey, fp: await fingerprint(g.publicKey) };
}
const alice = await person(dids.alice, "alice.test");
const bob = await person(dids.bob, "bob.test");

function commitInput(over: Partial<BuildCommitInput> = {}) {
  return {
    channelId,
    epochNumber: 2,
    epochId: "11".repeat(16),
    prevEpochId: "22".repeat(16),
    creatorDid: dids.alice,
    reason: "manual" as const,
    members: [
      { did: dids.alice, fp: fp("a"), handle: "alice.test" },
      { did: dids.bob, fp: fp("b"), handle: "bob.test" },
    ],
    keyCommitment: `${"A".repeat(43)}=`,
    sealedState: "AAAA",
    createdAt: 1,
    ...over,
  };
}

describe("commit v3", () => {
  test("v2 by default, exactly as before; v3 always has chains, sorted", () => {
    const v2: CommitV2 = buildCommit(commitInput());
    expect(v2.v).toBe(2);
    expect("chains" in v2).toBe(false);
    const empty: CommitV3 = buildCommit({ ...commitInput(), v: 3 });
    expect(empty.chains).toEqual([]);
    const chains: ChainEntry[] = [
      { did: dids.bob, device: fp("1"), n: 1 },
      { did: dids.alice, device: fp("2"), n: 4 },
      { did: dids.alice, device: fp("1"), n: 9 },
    ];
    const v3 = buildCommit({ ...commitInput(), v: 3, chains });
    expect(v3.chains.map((c) => [c.did, c.device])).toEqual([
      [dids.alice, fp("1")],
      [dids.alice, fp("2")],
      [dids.bob, fp("1")],
    ]);
  });

  test("a chain listed twice, chains on a v2 commit, or a malformed chain is refused", () => {
    const twice = [
      { did: dids.bob, device: fp("1"), n: 1 },
      { did: dids.bob, device: fp("1"), n: 2 },
    ];
    expect(() => buildCommit({ ...commitInput(), v: 3, chains: twice })).toThrow("chains-order");
    expect(() => buildCommit({ ...commitInput(), chains: [] } as never)).toThrow(CryptoError);
    for (const bad of [
      { did: dids.bob, device: fp("1"), n: 0 },
      { did: dids.bob, device: fp("A"), n: 1 },
      { did: "did:plc:x", device: fp("1"), n: 1 },
    ]) {
      expect(() => buildCommit({ ...commitInput(), v: 3, chains: [bad as ChainEntry] })).toThrow(CryptoError);
    }
    const v3 = buildCommit({ ...commitInput(), v: 3 });
    // The builder reduces each chain to {did, device, n}; a commit that carries more is refused.
    const extra = { did: dids.bob, device: fp("1"), n: 1, extra: true };
    expect(buildCommit({ ...commitInput(), v: 3, chains: [extra] }).chains).toEqual([
      { did: dids.bob, device: fp("1"), n: 1 },
    ]);
    expect(commitProblem({ ...v3, chains: [extra] } as unknown as Commit)).toBe("bad chain");
    expect(commitProblem({ ...v3, chains: undefined } as unknown as Commit)).toBe("bad chains");
    const { chains: _c, ...v3Bare } = v3;
    expect(commitProblem(v3Bare as unknown as Commit)).toBe("unexpected fields");
    expect(commitProblem({ ...buildCommit(commitInput()), chains: [] } as unknown as Commit)).toBe(
      "unexpected fields",
    );
  });

  test("createEpoch v3 signs a v3 commit that verifies, its wraps as v2 wraps", async () => {
    const created = await createEpoch({
      v: 3,
      identity: alice.identity,
      creatorDid: alice.did,
      channelId,
      epochNumber: 1,
      prevEpochId: null,
      reason: "create",
      members: [{ did: alice.did, publicKey: alice.publicKey, handle: alice.handle }],
      state: { linkSecret: newLinkSecret() },
      chains: [{ did: bob.did, device: fp("9"), n: 3 }],
      createdAt: 5,
    });
    expect(created.commit.v).toBe(3);
    expect(created.commit.chains).toEqual([{ did: bob.did, device: fp("9"), n: 3 }]);
    expect(await verifyCommit(created.commit, created.signature, alice.publicKey)).toBe(true);
    const v2 = await createEpoch({
      identity: alice.identity,
      creatorDid: alice.did,
      channelId,
      epochNumber: 1,
      prevEpochId: null,
      reason: "create",
      members: [{ did: alice.did, publicKey: alice.publicKey, handle: alice.handle }],
      state: { linkSecret: null },
      createdAt: 5,
    });
    expect(v2.commit.v).toBe(2);
  });
});

describe("memberKeyProblem", () => {
  const prev = buildCommit({ ...commitInput(), v: 3 });
  const next = (over: Partial<BuildCommitInput>) =>
    buildCommit({
      ...commitInput({ epochNumber: 3, prevEpochId: prev.epochId, epochId: "33".repeat(16) }),
      v: 3,
      ...over,
    });
  const members = (aliceFp: string, bobFp: string, bobHandle = "bob.test") => [
    { did: dids.alice, fp: aliceFp, handle: "alice.test" },
    { did: dids.bob, fp: bobFp, handle: bobHandle },
  ];

  test("unchanged members, joiners and leavers are fine", () => {
    expect(memberKeyProblem(prev, next({}))).toBeNull();
    expect(
      memberKeyProblem(
        prev,
        next({
          members: [...members(fp("a"), fp("b")), { did: dids.carol, fp: fp("c"), handle: "carol.test" }],
        }),
      ),
    ).toBeNull();
    expect(
      memberKeyProblem(prev, next({ members: [{ did: dids.alice, fp: fp("a"), handle: "alice.test" }] })),
    ).toBeNull();
  });

  test("a member's fp changes only in their own key-change commit", () => {
    expect(
      memberKeyProblem(
        prev,
        next({ creatorDid: dids.bob, reason: "key-change", members: members(fp("a"), fp("d")) }),
      ),
    ).toBeNull();
    expect(
      memberKeyProblem(
        prev,
        next({ creatorDid: dids.bob, reason: "manual", members: members(fp("a"), fp("d")) }),
      ),
    ).toEqual({
      check: "member-key",
      did: dids.bob,
    });
    expect(
      memberKeyProblem(
        prev,
        next({ creatorDid: dids.alice, reason: "key-change", members: members(fp("a"), fp("d")) }),
      ),
    ).toEqual({
      check: "member-key",
      did: dids.bob,
    });
  });

  test("a member's handle changes only in their own commit", () => {
    expect(
      memberKeyProblem(
        prev,
        next({ creatorDid: dids.bob, members: members(fp("a"), fp("b"), "robert.test") }),
      ),
    ).toBeNull();
    expect(
      memberKeyProblem(
        prev,
        next({ creatorDid: dids.alice, members: members(fp("a"), fp("b"), "robert.test") }),
      ),
    ).toEqual({
      check: "handle",
      did: dids.bob,
    });
  });
});

describe("content v3", () => {
  test("the AAD needs a chain at v 3 and refuses one below", () => {
    const f = {
      channelId,
      epochId: "11".repeat(16),
      senderDid: dids.alice,
      clientMsgId: "22".repeat(16),
      timestamp: 7,
    };
    expect(messageAad({ ...f, v: 3, chain: { device: fp("d"), n: 12 } })).toBe(
      `wsync/v3/msg|${channelId}|${f.epochId}|${dids.alice}|${f.clientMsgId}|7|${fp("d")}|12`,
    );
    expect(() => messageAad({ ...f, v: 3 })).toThrow();
    expect(() => messageAad({ ...f, v: 2, chain: { device: fp("d"), n: 1 } })).toThrow();
  });

  test("encryptMessage refuses a malformed chain", async () => {
    const input = {
      identity: alice.identity,
      senderDid: alice.did,
      channelId,
      epochId: "11".repeat(16),
      epochNumber: 1,
      epochKey: generateEpochKey(),
      text: "hi",
    };
    for (const chain of [
      { device: "zz", n: 1 },
      { device: newDeviceId(), n: 0 },
    ]) {
      await expect(encryptMessage({ ...input, chain })).rejects.toThrow("invalid chain");
    }
    const ok = await encryptMessage({ ...input, chain: { device: newDeviceId(), n: 1 } });
    expect(ok.content.v).toBe(3);
  });
});

describe("invites v3", () => {
  test("sealInviteLink/openInviteLink round trip; only the invitee under its own did opens it", async () => {
    const linkSecret = newLinkSecret();
    const sealedLink = await sealInviteLink({
      channelId,
      inviteeDid: bob.did,
      inviteePublicKey: bob.publicKey,
      linkSecret,
    });
    expect(Object.keys(sealedLink.ephemeralPublicKey).sort()).toEqual(["crv", "kty", "x", "y"]);
    expect(await openInviteLink({ channelId, inviteeDid: bob.did, identity: bob.identity, sealedLink })).toBe(
      linkSecret,
    );
    await expect(
      openInviteLink({ channelId, inviteeDid: bob.did, identity: alice.identity, sealedLink }),
    ).rejects.toThrow("Invalid sealed link");
    await expect(
      openInviteLink({
        channelId: "ponmlkjihgfedcba",
        inviteeDid: bob.did,
        identity: bob.identity,
        sealedLink,
      }),
    ).rejects.toThrow("Invalid sealed link");
    const invite = buildInviteV3({
      channelId,
      inviteeDid: bob.did,
      inviterDid: alice.did,
      createdAt: 1,
      sealedLink,
    });
    const signature = await signObject(alice.identity, invite);
    expect(await verifyInvite(invite, signature, alice.publicKey)).toBe(true);
    // The sealed link is signed: replacing it breaks the signature.
    const other = await sealInviteLink({
      channelId,
      inviteeDid: bob.did,
      inviteePublicKey: bob.publicKey,
      linkSecret,
    });
    expect(await verifyInvite({ ...invite, sealedLink: other }, signature, alice.publicKey)).toBe(false);
  });

  test("v2 invites still verify; checkInviteForChannel judges only v3", async () => {
    const v2 = buildInvite({ channelId, inviteeDid: bob.did, inviterDid: alice.did, createdAt: 1 });
    expect(await verifyInvite(v2, await signObject(alice.identity, v2), alice.publicKey)).toBe(true);
    expect(checkInviteForChannel(v2, "secret")).toBeNull();
    const v3 = buildInviteV3({ channelId, inviteeDid: bob.did, inviterDid: alice.did, createdAt: 1 });
    expect(checkInviteForChannel(v3, "secret")).toBe("sealedLink-missing");
    expect(checkInviteForChannel(v3, "invite")).toBeNull();
    // A v2-shaped invite that claims v 3, or a v3 with v2 fields only but an extra key, is malformed.
    expect(
      await verifyInvite({ ...v3, extra: 1 } as never, await signObject(alice.identity, v3), alice.publicKey),
    ).toBe(false);
  });
});

describe("deletions v3", () => {
  test("verifyDeletion takes v2 and v3 with exactly their fields", async () => {
    const v2 = buildDeletion({
      channelId,
      uri: "at://x/chat.wsync.message/1",
      byDid: alice.did,
      createdAt: 1,
    });
    expect(await verifyDeletion(v2, await signObject(alice.identity, v2), alice.publicKey)).toBe(true);
    const v3 = buildDeletionV3({
      channelId,
      target: { did: bob.did, clientMsgId: "ab".repeat(16) },
      byDid: alice.did,
      createdAt: 1,
    });
    const sig = await signObject(alice.identity, v3);
    expect(await verifyDeletion(v3, sig, alice.publicKey)).toBe(true);
    expect(
      await verifyDeletion({ ...v3, target: { ...v3.target, extra: 1 } } as never, sig, alice.publicKey),
    ).toBe(false);
    expect(await verifyDeletion({ ...v3, uri: "x" } as never, sig, alice.publicKey)).toBe(false);
  });

  test("deletionTargetProblem: the pair first, then author or owner", () => {
    const d = buildDeletionV3({
      channelId,
      target: { did: bob.did, clientMsgId: "ab".repeat(16) },
      byDid: alice.did,
      createdAt: 1,
    });
    const tomb = { senderDid: bob.did, clientMsgId: "ab".repeat(16) };
    expect(deletionTargetProblem(d, tomb, alice.did)).toBeNull();
    expect(deletionTargetProblem(d, tomb, null)).toBe("by");
    expect(deletionTargetProblem(d, tomb, dids.carol)).toBe("by");
    expect(deletionTargetProblem({ ...d, byDid: bob.did }, tomb, dids.carol)).toBeNull();
    expect(deletionTargetProblem(d, { ...tomb, senderDid: dids.carol }, alice.did)).toBe("target");
  });
});

describe("read markers and key changes", () => {
  test("a read marker is the signer's own; malformed ones never verify", async () => {
    const marker = buildReadMarker({ channelId, seq: 3, createdAt: 9 });
    const sig = await signReadMarker(bob.identity, marker);
    expect(await verifyReadMarker(marker, sig, bob.publicKey)).toBe(true);
    expect(await verifyReadMarker(marker, sig, alice.publicKey)).toBe(false);
    expect(
      await verifyReadMarker({ ...marker, did: bob.did } as unknown as ReadMarkerObject, sig, bob.publicKey),
    ).toBe(false);
    await expect(signReadMarker(bob.identity, { ...marker, seq: 0 })).rejects.toThrow();
  });

  test("a key change must be signed by the key whose fingerprint is oldFp", async () => {
    const newBob = await person(dids.bob, "bob.test");
    const statement = buildKeyChange({
      did: bob.did,
      oldFp: bob.fp,
      newFp: newBob.fp,
      channelId,
      epochId: "44".repeat(16),
      createdAt: 1,
    });
    const sig = await signKeyChange(bob.identity, statement);
    expect(await verifyKeyChange(statement, sig, bob.publicKey)).toBe(true);
    expect(
      await verifyKeyChange(statement, await signKeyChange(newBob.identity, statement), newBob.publicKey),
    ).toBe(false);
    expect(await verifyKeyChange({ ...statement, newFp: bob.fp }, sig, bob.publicKey)).toBe(false);
  });
});

describe("device link", () => {
  test("codes: 10 Crockford characters, typed forms normalized", () => {
    const code = newDeviceLinkCode();
    expect(isDeviceLinkCode(code)).toBe(true);
    expect(formatDeviceLinkCode(code)).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/);
    expect(normalizeDeviceLinkCode(` ${formatDeviceLinkCode(code).toUpperCase()} `)).toBe(code);
    expect(normalizeDeviceLinkCode("O1IL-abcde-f")).toBe("0111abcdef");
    expect(normalizeDeviceLinkCode("oiL0a-bcdef")).toBe("0110abcdef");
    expect(normalizeDeviceLinkCode("uuuuu-uuuuu")).toBeNull();
    expect(normalizeDeviceLinkCode("abc")).toBeNull();
    const seen = new Set(Array.from({ length: 200 }, () => newDeviceLinkCode()));
    expect(seen.size).toBe(200);
  });

  test("round trip: both sides show the same digits; a swapped key shows other digits", async () => {
    const code = newDeviceLinkCode();
    const mine = await newLinkEphemeral();
    const payload = { privateKey: "k", trust: { channels: { a: { n: 1 } } } };
    const sealed = await sealDeviceLink({ code, newDevicePublicKey: mine.publicRaw, payload });
    expect(sealed.envelope.v).toBe(3);
    expect(Object.keys(sealed.envelope).sort()).toEqual(["ciphertext", "ephemeralPublicKey", "iv", "v"]);
    const opened = await openDeviceLink({ code, myEphemeral: mine, envelope: sealed.envelope });
    expect(opened).toEqual({ payload, confirmation: sealed.confirmation });
    expect(sealed.confirmation).toMatch(/^[0-9]{6}$/);

    // The server swaps in its own key: the existing device seals to it and shows other digits.
    const server = await newLinkEphemeral();
    const toServer = await sealDeviceLink({ code, newDevicePublicKey: server.publicKey, payload });
    const newShows = await linkConfirmation(
      mine.publicRaw,
      rawFromPublicJwk(toServer.envelope.ephemeralPublicKey),
    );
    expect(toServer.confirmation).not.toBe(newShows);
    await expect(openDeviceLink({ code, myEphemeral: mine, envelope: toServer.envelope })).rejects.toThrow(
      "Invalid device link",
    );
  });

  test("malformed envelopes and payloads are refused", async () => {
    const code = newDeviceLinkCode();
    const mine = await newLinkEphemeral();
    const { envelope } = await sealDeviceLink({
      code,
      newDevicePublicKey: mine.publicKey,
      payload: { a: 1 },
    });
    for (const bad of [
      { ...envelope, v: 2 },
      { ...envelope, extra: 1 },
      { ...envelope, ephemeralPublicKey: { ...envelope.ephemeralPublicKey, d: "x" } },
      null,
    ]) {
      await expect(openDeviceLink({ code, myEphemeral: mine, envelope: bad })).rejects.toThrow(
        "Invalid device link",
      );
    }
    await expect(
      sealDeviceLink({ code, newDevicePublicKey: mine.publicKey, payload: { x: 1.5 } }),
    ).rejects.toThrow("Invalid device link");
    await expect(
      sealDeviceLink({ code: "bad", newDevicePublicKey: mine.publicKey, payload: {} }),
    ).rejects.toThrow("Invalid device link");
  });
});
