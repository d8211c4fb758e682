// Builds the content of tests/vectors/protocol-v3-project.json: every protocol v3 construction this
// project makes (§8, and the device-link envelope of docs/protocol-extensions.md), under the test-only
// fixed randomness. generate-kat-v3.ts writes it; kat-v3.test.ts rebuilds it in memory and compares,
// so the file is reproducible from this code alone. Each case's randomness is the ChaCha20 stream of
// its own seed, drawn in the order its comment gives.
import {
  buildDeletionV3,
  buildInviteV3,
  buildKeyChange,
  buildReadMarker,
  canon,
  createEpoch,
  encryptMessage,
  fingerprint,
  fromHex,
  importIdentity,
  messageAad,
  messageSigningBytes,
  newDeviceId,
  newDeviceLinkCode,
  newLinkEphemeral,
  sealDeviceLink,
  sealInviteLink,
  signKeyChange,
  signObject,
  signReadMarker,
  toHex,
  verifyObject,
} from "../../../core/crypto/index.ts";
import type { ChainEntry, EncryptedContent } from "../../../core/protocol/index.ts";
import { deriveIdentity, type IdentityInput, withFixedRandomness } from "./kat-derive.ts";

// The v2 file's people and seeds (so the same keys), plus alice's replacement key.
const identityInputs: (IdentityInput & { handle: string })[] = [
  { name: "alice", did: "did:plc:katalice2222222222222222", handle: "alice.kat.test", seed: "a1".repeat(32) },
  { name: "bob", did: "did:plc:katbob222222222222222222", handle: "bob.kat.test", seed: "b0".repeat(32) },
  { name: "carol", did: "did:plc:katcarol2222222222222222", handle: "carol.kat.test", seed: "c0".repeat(32) },
  {
    name: "aliceNew",
    did: "did:plc:katalice2222222222222222",
    handle: "alice.kat.test",
    seed: "a2".repeat(32),
  },
];
export const channelId = "wsynckatvthreeaa";
const createdAt = 1798761600000;
const seeds = {
  content: "f3".repeat(32),
  epoch: "e3".repeat(32),
  sealedLink: "d4".repeat(32),
  deviceLink: "c5".repeat(32),
};
const linkSecret = "ICEiIyQlJicoKSorLC0uLw";
const epochKeyHex = "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f";
const epochId = "30313233343536373839414243444546";
const texts = ["first from this device — 🌒", "a reply: v3 counts every plaintext type"];

/** What a device-link payload looks like in these vectors (the client defines the real one). */
export function deviceLinkPayload(privateKey: string) {
  return {
    kind: "wsync-device-link",
    privateKey,
    trust: {
      version: 3,
      channels: {
        [channelId]: { head: { epochNumber: 2, epochId }, chains: [{ did: identityInputs[1]?.did, n: 5 }] },
      },
    },
  };
}

/**
 * ECDSA is randomized: keep the signature already in the file while it still verifies over the same
 * canonical object, so regenerating unchanged vectors leaves the file unchanged.
 */
async function stable(fresh: string, old: unknown, publicKey: string, signed: unknown): Promise<string> {
  return typeof old === "string" && (await verifyObject(signed, old, publicKey)) ? old : fresh;
}

interface Party {
  did: string;
  handle: string;
  privateKey: string;
  publicKey: string;
  fingerprint: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the previous file is untrusted JSON, read field by field
export async function buildKatV3(previous: any): Promise<Record<string, unknown>> {
  const parties: Record<string, Party> = {};
  const identities = [];
  for (const input of identityInputs) {
    const d = await deriveIdentity(input);
    parties[input.name] = {
      did: input.did,
      handle: input.handle,
      privateKey: d.privateKey,
      publicKey: d.publicKey,
      fingerprint: d.fingerprint,
    };
    identities.push({
      comment: "draws 48 bytes for the scalar: (int(bytes) mod (n-1)) + 1",
      ...input,
      publicKey: d.publicKey,
      privateKey: d.privateKey,
      fingerprint: d.fingerprint,
    });
  }
  const party = (name: string) => parties[name] as Party;
  const alice = party("alice");
  const bob = party("bob");
  const carol = party("carol");
  const aliceNew = party("aliceNew");
  const aliceId = await importIdentity(alice.privateKey);
  const bobId = await importIdentity(bob.privateKey);
  const aliceNewId = await importIdentity(aliceNew.privateKey);

  // ---- content v3 ------------------------------------------------------------------------------
  const epochKey = fromHex(epochKeyHex);
  const drawn = await withFixedRandomness(seeds.content, async () => {
    const device = newDeviceId();
    const first = await encryptMessage({
      identity: aliceId,
      senderDid: alice.did,
      channelId,
      epochId,
      epochNumber: 2,
      epochKey,
      text: texts[0] as string,
      timestamp: createdAt + 1000,
      chain: { device, n: 1 },
    });
    const second = await encryptMessage({
      identity: aliceId,
      senderDid: alice.did,
      channelId,
      epochId,
      epochNumber: 2,
      epochKey,
      text: "",
      body: {
        type: "reply",
        text: texts[1] as string,
        to: { did: alice.did, clientMsgId: first.clientMsgId },
      },
      timestamp: createdAt + 2000,
      chain: { device, n: 2 },
    });
    return { device, messages: [first, second] };
  });
  const contents = [];
  for (const [n, m] of drawn.messages.entries()) {
    const signing = new TextDecoder().decode(messageSigningBytes(channelId, m.content));
    const content: EncryptedContent = {
      ...m.content,
      signature: await stable(
        m.content.signature,
        previous?.contents?.messages?.[n]?.content?.signature,
        alice.publicKey,
        JSON.parse(signing),
      ),
    };
    contents.push({
      plaintextCanonical: canon(
        n === 0
          ? { type: "text", text: texts[0] }
          : {
              type: "reply",
              text: texts[1],
              to: { did: alice.did, clientMsgId: drawn.messages[0]?.clientMsgId },
            },
      ),
      aad: messageAad({ ...content, channelId }),
      signedCanonical: signing,
      content,
    });
  }

  // ---- commit v3 (alice's key-change commit, chains given unsorted) --------------------------------
  const chainsGiven: ChainEntry[] = [
    { did: carol.did, device: "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0", n: 3 },
    { did: bob.did, device: "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b2", n: 1 },
    { did: alice.did, device: drawn.device, n: 2 },
    { did: bob.did, device: "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b1", n: 7 },
  ];
  const members = ["bob", "aliceNew", "carol"].map((name) => ({
    did: party(name).did,
    publicKey: party(name).publicKey,
    handle: party(name).handle,
  }));
  const epoch = await withFixedRandomness(seeds.epoch, () =>
    createEpoch({
      v: 3,
      identity: aliceNewId,
      creatorDid: aliceNew.did,
      channelId,
      epochNumber: 3,
      prevEpochId: epochId,
      reason: "key-change",
      members,
      state: { linkSecret },
      chains: chainsGiven,
      createdAt: createdAt + 60_000,
    }),
  );
  const commitSignature = await stable(
    epoch.signature,
    previous?.commit?.signature,
    aliceNew.publicKey,
    epoch.commit,
  );

  // ---- key change statement beside that commit (signed by alice's old key) --------------------------
  const statement = buildKeyChange({
    did: alice.did,
    oldFp: await fingerprint(alice.publicKey),
    newFp: await fingerprint(aliceNew.publicKey),
    channelId,
    epochId: epoch.epochId,
    createdAt: epoch.commit.createdAt,
  });
  const keyChangeSignature = await stable(
    await signKeyChange(aliceId, statement),
    previous?.keyChange?.signature,
    alice.publicKey,
    statement,
  );

  // ---- invites: secret channel (sealed link to carol) and invite channel -----------------------------
  const sealedLink = await withFixedRandomness(seeds.sealedLink, () =>
    sealInviteLink({ channelId, inviteeDid: carol.did, inviteePublicKey: carol.publicKey, linkSecret }),
  );
  const inviteSecret = buildInviteV3({
    channelId,
    inviteeDid: carol.did,
    inviterDid: bob.did,
    createdAt: createdAt + 3000,
    sealedLink,
  });
  const inviteChannelId = "wsynckatinviteaa";
  const invitePlain = buildInviteV3({
    channelId: inviteChannelId,
    inviteeDid: carol.did,
    inviterDid: bob.did,
    createdAt: createdAt + 4000,
  });
  const signed = async (key: string, object: object, identity = bobId, signer = bob) => ({
    signer: signer === bob ? "bob" : "alice",
    canonical: canon(object),
    signature: await stable(
      await signObject(identity, object),
      previous?.[key]?.signature,
      signer.publicKey,
      object,
    ),
  });

  // ---- deletion v3 (the owner, alice, deletes alice's own second message) and a read marker ---------
  const deletion = buildDeletionV3({
    channelId,
    target: { did: alice.did, clientMsgId: drawn.messages[1]?.clientMsgId as string },
    byDid: alice.did,
    createdAt: createdAt + 5000,
  });
  const marker = buildReadMarker({ channelId, seq: 42, createdAt: createdAt + 6000 });
  const markerSignature = await stable(
    await signReadMarker(bobId, marker),
    previous?.readMarker?.signature,
    bob.publicKey,
    marker,
  );

  // ---- device link ----------------------------------------------------------------------------------
  const link = await withFixedRandomness(seeds.deviceLink, async () => {
    const code = newDeviceLinkCode();
    const mine = await newLinkEphemeral();
    const sealed = await sealDeviceLink({
      code,
      newDevicePublicKey: mine.publicKey,
      payload: deviceLinkPayload(alice.privateKey),
    });
    return { code, newDevicePublicKey: mine.publicKey, ...sealed };
  });

  return {
    comment:
      "wsync's own known-answer vectors for protocol v3 (protocol.md §8; the device-link envelope of protocol-extensions.md), written by tests/core/crypto/generate-kat-v3.ts. Each case's randomness is the RFC 8439 ChaCha20 keystream keyed by its 32-byte seed (nonce zero, counter from 0), drawn in the order each case's comment gives; a private scalar is (int(48 bytes) mod (n-1)) + 1. ECDSA signatures come from the platform's randomized signer: tests verify them, never compare them.",
    randomness: "chacha20-rfc8439(key=seed, nonce=0^12, counter=0)",
    identities,
    channelId,
    contents: {
      comment:
        "two encryptMessage calls by alice from one device under one seed: draws the device id (16 bytes), then per message clientMsgId (16) and IV (12). The second is a reply (any plaintext type counts in the chain). aad (label wsync/v3/msg, then |device|n) and signedCanonical (with chain nested) are exact; signatures verify only.",
      seed: seeds.content,
      epochId,
      epochNumber: 2,
      epochKeyHex,
      device: drawn.device,
      messages: contents,
    },
    commit: {
      comment:
        "createEpoch v3 by alice with her new key (reason key-change), for [bob, aliceNew, carol], chains given unsorted and listed sorted by did then device: draws the epoch key (32 bytes), the epoch id (16), the sealed state's IV (12), then per member in the given order the wrap IV (12) and the ephemeral scalar (48). keyCommitment, sealedState and wraps keep the v2 labels. commitCanonical is the exact signed text; signature verify only (under the new key).",
      seed: seeds.epoch,
      creator: "aliceNew",
      members: ["bob", "aliceNew", "carol"],
      chainsGiven,
      state: { linkSecret },
      epochKeyHex: toHex(epoch.epochKey),
      epochId: epoch.epochId,
      commit: epoch.commit,
      commitCanonical: canon(epoch.commit),
      signature: commitSignature,
      wrappedKeys: epoch.wrappedKeys,
    },
    keyChange: {
      comment:
        "alice's key-change statement beside the commit above, signed by her OLD key (signKeyChange): draws nothing; canonical exact, signature verify only",
      statement,
      canonical: canon(statement),
      signature: keyChangeSignature,
    },
    sealedLink: {
      comment:
        "sealInviteLink to carol: draws the IV (12 bytes) then the ephemeral scalar (48). z = ECDH(E, carol), k = HKDF-SHA-256(z, salt utf8(channelId), info L), encryptedKey = AES-256-GCM(k, iv, 16 raw bytes of linkSecret, aad L), L = 'wsync/v3/invite-link|' + channelId + '|' + inviteeDid",
      seed: seeds.sealedLink,
      linkSecret,
      inviteeDid: carol.did,
      info: `wsync/v3/invite-link|${channelId}|${carol.did}`,
      sealedLink,
    },
    inviteSecret: {
      comment: "bob invites carol into the secret channel: the sealed link above inside the signed object",
      invite: inviteSecret,
      ...(await signed("inviteSecret", inviteSecret)),
    },
    inviteChannel: {
      comment: "bob invites carol into an invite channel: v 3 with no sealedLink key",
      invite: invitePlain,
      ...(await signed("inviteChannel", invitePlain)),
    },
    deletion: {
      comment:
        "alice deletes her second message: target = its (senderDid, clientMsgId); draws nothing; signature verify only",
      deletion,
      ...(await signed("deletion", deletion, aliceId, alice)),
    },
    readMarker: {
      comment: "bob's read marker up to seq 42 (signReadMarker): draws nothing; signature verify only",
      signer: "bob",
      marker,
      canonical: canon(marker),
      signature: markerSignature,
    },
    deviceLink: {
      comment:
        "newDeviceLinkCode (draws 10 bytes, each & 31 into lowercase Crockford base32), the new device's newLinkEphemeral (draws a 48-byte scalar), then sealDeviceLink by the existing device (draws the IV, 12 bytes, then its ephemeral scalar, 48). k = HKDF-SHA-256(ECDH(existing E, new E), salt utf8(code), info 'wsync/v3/link-device|' + code); ciphertext = AES-256-GCM(k, iv, utf8(canon(payload)), aad = info). confirmation = linkConfirmation(new, existing).",
      seed: seeds.deviceLink,
      code: link.code,
      info: `wsync/v3/link-device|${link.code}`,
      newDevicePublicKey: link.newDevicePublicKey,
      payloadCanonical: canon(deviceLinkPayload(alice.privateKey)),
      envelope: link.envelope,
      confirmation: link.confirmation,
    },
  };
}
