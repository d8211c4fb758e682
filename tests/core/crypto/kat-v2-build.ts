// Builds the content of vectors/wsync-kat-v2.json: every protocol v2 construction this project makes
// (§7), under the test-only fixed randomness. generate-kat-v2.ts writes it; kat-v2.test.ts rebuilds it
// in memory and compares, so the file is reproducible from this code alone. Each case's randomness is
// the ChaCha20 stream of its own seed, drawn in the order its comment gives.
import {
  buildDeletion,
  buildInvite,
  canon,
  type EpochState,
  generateEpochKey,
  importIdentity,
  joinTokenFor,
  keyCommitment,
  makeLinkProof,
  messageAad,
  messageSigningBytes,
  newEpochId,
  newLinkSecret,
  sealState,
  signObject,
  toHex,
  verifyObject,
} from "../../../core/crypto/index.ts";
import {
  deriveEpoch,
  deriveIdentity,
  deriveMessage,
  type EpochInput,
  type IdentityInput,
  type KatParty,
  type MessageInput,
  withFixedRandomness,
} from "./kat-derive.ts";

// The same people (and seeds, so the same keys) as the v1 file, now with the handles v2 commits list.
const identityInputs: (IdentityInput & { handle: string })[] = [
  { name: "alice", did: "did:plc:katalice2222222222222222", handle: "alice.kat.test", seed: "a1".repeat(32) },
  { name: "bob", did: "did:plc:katbob222222222222222222", handle: "bob.kat.test", seed: "b0".repeat(32) },
  { name: "carol", did: "did:plc:katcarol2222222222222222", handle: "carol.kat.test", seed: "c0".repeat(32) },
];
const channelId = "wsynckatvectorsa";
const createdAt = 1767225600000;
const seeds = {
  keyCommitment: "d1".repeat(32),
  linkSecret: "d2".repeat(32),
  sealedState: "d3".repeat(32),
  epoch: "e0".repeat(32),
  message: "f0".repeat(32),
};
const messageText = 'He said "hi" \\ — ünïcödé 🌒 <b>&amp;</b>\n\ttab';

/**
 * ECDSA is randomized: keep the signature already in the file while it still verifies over the same
 * canonical object, so regenerating unchanged vectors leaves the file unchanged.
 */
async function stable(fresh: string, old: unknown, publicKey: string, signed: unknown): Promise<string> {
  return typeof old === "string" && (await verifyObject(signed, old, publicKey)) ? old : fresh;
}

// biome-ignore lint/suspicious/noExplicitAny: the previous file is untrusted JSON, read field by field
export async function buildKatV2(previous: any): Promise<Record<string, unknown>> {
  const parties: Record<string, KatParty> = {};
  const identities = [];
  for (const input of identityInputs) {
    const d = await deriveIdentity(input);
    parties[input.name] = {
      did: input.did,
      privateKey: d.privateKey,
      publicKey: d.publicKey,
      handle: input.handle,
    };
    identities.push({
      comment: "as in wsync-kat-v1.json: draws 48 bytes for the scalar; handle is listed in v2 commits",
      ...input,
      publicKey: d.publicKey,
      privateKey: d.privateKey,
      fingerprint: d.fingerprint,
    });
  }
  const alice = parties.alice as KatParty;
  const carol = parties.carol as KatParty;
  const aliceIdentity = await importIdentity(alice.privateKey);

  // ---- key commitment --------------------------------------------------------------------------
  const kc = await withFixedRandomness(seeds.keyCommitment, async () => ({
    epochKey: generateEpochKey(),
    epochId: newEpochId(),
  }));
  const keyCommitmentCase = {
    comment:
      "draws the epoch key (32 bytes) then the epoch id (16); keyCommitment = base64(SHA-256(utf8('wsync/v2/key-commit|' + channelId + '|' + epochId + '|' + epochNumber + '|') || epochKey)) draws nothing",
    seed: seeds.keyCommitment,
    channelId,
    epochNumber: 7,
    epochKeyHex: toHex(kc.epochKey),
    epochId: kc.epochId,
    keyCommitment: await keyCommitment({
      channelId,
      epochId: kc.epochId,
      epochNumber: 7,
      epochKey: kc.epochKey,
    }),
  };

  // ---- link secret, join token, admission ------------------------------------------------------
  const linkSecret = await withFixedRandomness(seeds.linkSecret, async () => newLinkSecret());
  const joiner = parties.bob as KatParty;
  const bobFp = identities.find((i) => i.name === "bob")?.fingerprint as string;
  const proof = await makeLinkProof({ linkSecret, channelId, did: joiner.did, fp: bobFp, createdAt });
  const { mac: _mac, ...unsignedProof } = proof;

  // ---- sealed state ----------------------------------------------------------------------------
  const state: EpochState = { linkSecret };
  const sealed = await withFixedRandomness(seeds.sealedState, async () => {
    const epochKey = generateEpochKey();
    const epochId = newEpochId();
    return { epochKey, epochId, sealedState: await sealState({ channelId, epochId, epochKey, state }) };
  });

  // ---- epoch -------------------------------------------------------------------------------------
  const epochInput: EpochInput = {
    seed: seeds.epoch,
    channelId,
    epochNumber: 3,
    prevEpochId: "0123456789abcdef0123456789abcdef",
    creator: "alice",
    reason: "manual",
    members: ["bob", "alice"],
    state,
    createdAt,
  };
  const epoch = await deriveEpoch(epochInput, parties);
  const epochSignature = await stable(
    epoch.signature,
    previous?.epoch?.signature,
    alice.publicKey,
    epoch.commit,
  );

  // ---- message -----------------------------------------------------------------------------------
  const messageInput: MessageInput = {
    seed: seeds.message,
    sender: "alice",
    channelId,
    epochId: epoch.epochId,
    epochNumber: epochInput.epochNumber,
    epochKeyHex: toHex(epoch.epochKey),
    text: messageText,
    timestamp: createdAt + 1234,
  };
  const message = await deriveMessage(messageInput, parties);
  const signedCanonical = new TextDecoder().decode(messageSigningBytes(channelId, message.content));
  const content = {
    ...message.content,
    signature: await stable(
      message.content.signature,
      previous?.message?.content?.signature,
      alice.publicKey,
      JSON.parse(signedCanonical),
    ),
  };

  // ---- signed statements -------------------------------------------------------------------------
  const invite = buildInvite({ channelId, inviteeDid: carol.did, inviterDid: alice.did, createdAt });
  const deletion = buildDeletion({
    channelId,
    uri: `at://${alice.did}/chat.wsync.message/${content.clientMsgId}`,
    byDid: alice.did,
    createdAt: createdAt + 5000,
  });
  const signedCase = async (name: "invite" | "deletion", object: object) => ({
    comment: `${name} by alice (signObject): draws nothing; signature = ECDSA P-256/SHA-256 over utf8(canonical), verify only`,
    signer: "alice",
    [name]: object,
    canonical: canon(object),
    signature: await stable(
      await signObject(aliceIdentity, object),
      previous?.[name]?.signature,
      alice.publicKey,
      object,
    ),
  });

  return {
    comment:
      "wsync known-answer vectors for protocol v2 (protocol.md §7), written by tests/core/crypto/generate-kat-v2.ts. Each case's randomness is the RFC 8439 ChaCha20 keystream keyed by its 32-byte seed (nonce zero, counter from 0), drawn in the order each case's comment gives; a private scalar is (int(48 bytes) mod (n-1)) + 1. ECDSA signatures come from the platform's randomized signer: tests verify them, never compare them.",
    randomness: "chacha20-rfc8439(key=seed, nonce=0^12, counter=0)",
    identities,
    keyCommitment: keyCommitmentCase,
    linkSecret: {
      comment: "newLinkSecret: draws 16 bytes, written base64url without padding",
      seed: seeds.linkSecret,
      linkSecret,
    },
    joinToken: {
      comment:
        "draws nothing: base64url(HKDF-SHA-256(ikm = the 16 raw bytes of linkSecret, salt utf8(channelId), info 'wsync/v2/join-token', 32 bytes))",
      channelId,
      linkSecret,
      joinToken: await joinTokenFor(linkSecret, channelId),
    },
    admission: {
      comment:
        "makeLinkProof for bob, draws nothing: mac = base64(HMAC-SHA-256(HKDF-SHA-256(linkSecret, salt utf8(channelId), info 'wsync/v2/admit', 32 bytes), utf8(signedCanonical)))",
      linkSecret,
      signedCanonical: canon(unsignedProof),
      proof,
    },
    sealedState: {
      comment:
        "draws the epoch key (32 bytes), the epoch id (16), then sealState's IV (12); sealedState = base64(iv || AES-GCM(epochKey, iv, utf8(canon(state)), aad utf8('wsync/v2/state|' + channelId + '|' + epochId)))",
      seed: seeds.sealedState,
      channelId,
      epochKeyHex: toHex(sealed.epochKey),
      epochId: sealed.epochId,
      state,
      stateCanonical: canon(state),
      sealedState: sealed.sealedState,
    },
    epoch: {
      comment:
        "createEpoch by alice for [bob, alice], sealing the link secret above: draws the epoch key (32 bytes), the epoch id (16), the sealed state's IV (12), then per member in the given order the wrap IV (12) and the ephemeral scalar (48). Wraps use the info 'wsync/v2/epoch-key|' + channelId + '|' + epochNumber + '|' + recipientDid. Commit members come out sorted by did; commitCanonical is the exact signed text (utf8). signature: verify only.",
      ...epochInput,
      epochKeyHex: toHex(epoch.epochKey),
      epochId: epoch.epochId,
      commit: epoch.commit,
      commitCanonical: canon(epoch.commit),
      signature: epochSignature,
      wrappedKeys: epoch.wrappedKeys,
    },
    message: {
      comment:
        "encryptMessage by alice under the epoch above: draws clientMsgId (16 bytes) then IV (12). plaintextCanonical, aad (label wsync/v2/msg) and signedCanonical are the exact byte strings (utf8). content.signature: verify only.",
      ...messageInput,
      clientMsgId: message.clientMsgId,
      plaintextCanonical: canon({ type: "text", text: messageText }),
      aad: messageAad({ ...content, channelId }),
      signedCanonical,
      content,
    },
    invite: await signedCase("invite", invite),
    deletion: await signedCase("deletion", deletion),
  };
}
