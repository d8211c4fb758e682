// The shared protocol v3 vectors (protocol §8), made by an independent implementation
// (tests/vectors/shared-protocol-v3.json, a copy of shared/vectors/protocol-v3.json). Every `exact`
// field is rebuilt byte for byte (signing bytes, AADs, ciphertexts for the fixed ivs and ephemeral
// keys, key commitments, sealed states, wraps, the sealed link, confirmation digits), every
// randomized signature is verified, and every `refuse` entry is refused for exactly the reason it gives.
import { describe, expect, test } from "bun:test";
import { sealStateWithIv } from "../../../core/crypto/epoch-binding.ts";
import {
  buildCommit,
  buildDeletionV3,
  buildInviteV3,
  buildKeyChange,
  buildReadMarker,
  CHAINS_ORDER,
  CryptoError,
  canon,
  checkInviteForChannel,
  checkKeyCommitment,
  commitProblem,
  decryptMessage,
  deletionTargetProblem,
  fingerprint,
  fromBase64,
  fromHex,
  fromUtf8,
  type Identity,
  importIdentity,
  inviteLinkInfo,
  inviteProblem,
  keyCommitment,
  linkConfirmation,
  memberKeyProblem,
  messageAad,
  messageSigningBytes,
  openInviteLink,
  openState,
  toBase64,
  toHex,
  unwrapEpochKey,
  verifyCommit,
  verifyDeletion,
  verifyInvite,
  verifyKeyChange,
  verifyReadMarker,
} from "../../../core/crypto/index.ts";
import { sealInviteLinkWith } from "../../../core/crypto/invite-link.ts";
import { encryptMessageWithIv } from "../../../core/crypto/message.ts";
import { wrapEpochKeyWith } from "../../../core/crypto/wrap.ts";
import type {
  ChannelType,
  Commit,
  CommitV3,
  DeletionObjectV3,
  EncryptedContent,
  InviteObject,
  KeyChangeStatement,
  ReadMarkerObject,
  SealedLink,
} from "../../../core/protocol/index.ts";
import vectorsJson from "../../vectors/shared-protocol-v3.json";

// biome-ignore lint/suspicious/noExplicitAny: the vectors are JSON read field by field
const vectors = vectorsJson as any;
const { exact, constants } = vectors;

type Name = "alice" | "aliceNew" | "bob" | "mallory";
const names = Object.keys(vectors.identities) as Name[];
const identities = new Map<Name, Identity>();
for (const name of names) identities.set(name, await importIdentity(vectors.identities[name].privateKey));
const idOf = (name: Name) => identities.get(name) as Identity;
const pub = (name: Name) => vectors.identities[name].publicKey as string;
const ECDH = { name: "ECDH", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

/** A vector's fixed ephemeral pair: its PKCS8 private key and its raw public point. */
async function ephemeralOf(e: { privateKey: string; publicKey: string }) {
  const privateKey = await crypto.subtle.importKey("pkcs8", fromBase64(e.privateKey), ECDH, false, [
    "deriveBits",
  ]);
  return { privateKey, publicRaw: fromBase64(e.publicKey) };
}

/** True when `signature` is `publicKey`'s over these exact bytes. */
async function signs(bytes: Uint8Array<ArrayBuffer>, signature: string, publicKey: string): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", fromBase64(publicKey), { ...ECDH, name: "ECDSA" }, false, [
    "verify",
  ]);
  return crypto.subtle.verify(SIGN, key, fromBase64(signature), bytes);
}

const commitVectors = exact.commits.vectors as {
  epochNumber: number;
  signer: Name;
  // biome-ignore lint/suspicious/noExplicitAny: JSON
  inputs: any;
  keyCommitment: string;
  sealedState: string;
  commit: CommitV3;
  signingBytes: string;
  signingBytesHex: string;
  signature: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON
  wrappedKeys: any[];
}[];
const commitOf = (n: number) => commitVectors.find((c) => c.epochNumber === n)?.commit as CommitV3;

describe("shared v3 vectors: identities", () => {
  test.each(names)("%s: the private key restores the public key and fingerprint", async (name) => {
    const v = vectors.identities[name];
    expect(idOf(name).publicKey).toBe(v.publicKey);
    expect(await fingerprint(v.publicKey)).toBe(v.fingerprint);
  });
});

describe("shared v3 vectors: content v3", () => {
  test.each(exact.contents.vectors.map((v: { name: string }) => [v.name, v]))(
    "%s: AAD, signing bytes and ciphertext byte for byte; the signature verifies and it decrypts",
    // biome-ignore lint/suspicious/noExplicitAny: JSON
    async (_name, v: any) => {
      const i = v.inputs;
      const aad = messageAad({ v: 3, ...i });
      expect(aad).toBe(v.aad);
      expect(toHex(new TextEncoder().encode(aad))).toBe(v.aadHex);
      expect(canon(i.plaintext)).toBe(v.plaintextUtf8);

      const made = await encryptMessageWithIv(
        {
          identity: idOf(i.signer),
          senderDid: i.senderDid,
          channelId: i.channelId,
          epochId: i.epochId,
          epochNumber: i.epochNumber,
          epochKey: fromHex(i.epochKeyHex),
          text: i.plaintext.text,
          clientMsgId: i.clientMsgId,
          timestamp: i.timestamp,
          chain: i.chain,
        },
        fromHex(i.ivHex),
      );
      const { signature: ours, ...unsigned } = made.content;
      const { signature: theirs, ...expected } = v.content;
      expect(unsigned).toEqual(expected);
      expect(toHex(fromBase64(made.content.encrypted))).toBe(v.ciphertextHex);
      const signing = messageSigningBytes(i.channelId, made.content);
      expect(fromUtf8(signing)).toBe(v.signingBytes);
      expect(toHex(signing)).toBe(v.signingBytesHex);
      expect(canon(v.signingObject)).toBe(v.signingBytes);
      // Randomized ECDSA: ours and theirs both verify over the same bytes.
      expect(await signs(signing, ours, pub(i.signer))).toBe(true);
      expect(await signs(signing, theirs, pub(i.signer))).toBe(true);

      const opened = await decryptMessage({
        content: v.content,
        channelId: i.channelId,
        recordAuthorDid: i.senderDid,
        epochKey: fromHex(i.epochKeyHex),
        senderPublicKey: pub(i.signer),
        epochVersion: 3,
      });
      expect(opened.verified).toBe(true);
      expect(opened.plaintext).toEqual(v.expect.plaintext);
      expect(opened.v).toBe(3);
      expect(opened.chain).toEqual(i.chain);
    },
  );

  test("a v3 content is refused under a v2 epoch, and a v2 content under a v3 epoch", async () => {
    const v = exact.contents.vectors[0];
    const i = v.inputs;
    const base = {
      channelId: i.channelId,
      recordAuthorDid: i.senderDid,
      epochKey: fromHex(i.epochKeyHex),
      senderPublicKey: pub(i.signer),
    };
    await expect(decryptMessage({ ...base, content: v.content, epochVersion: 2 })).rejects.toThrow(
      "message version does not match its epoch",
    );
    // Without a chain, encryptMessage makes exactly the v2 content.
    const v2 = await encryptMessageWithIv(
      {
        identity: idOf(i.signer),
        senderDid: i.senderDid,
        channelId: i.channelId,
        epochId: i.epochId,
        epochNumber: i.epochNumber,
        epochKey: fromHex(i.epochKeyHex),
        text: i.plaintext.text,
        clientMsgId: i.clientMsgId,
        timestamp: i.timestamp,
      },
      fromHex(i.ivHex),
    );
    expect(v2.content.v).toBe(2);
    expect("chain" in v2.content).toBe(false);
    await expect(decryptMessage({ ...base, content: v2.content, epochVersion: 3 })).rejects.toThrow(
      "message version does not match its epoch",
    );
    const opened = await decryptMessage({ ...base, content: v2.content, epochVersion: 2 });
    expect([opened.v, opened.chain]).toEqual([2, undefined]);
  });

  test("chain is required at v 3 and refused below it; it has exactly {device, n >= 1}", async () => {
    const v = exact.contents.vectors[0];
    const i = v.inputs;
    const base = {
      channelId: i.channelId,
      recordAuthorDid: i.senderDid,
      epochKey: fromHex(i.epochKeyHex),
      senderPublicKey: pub(i.signer),
    };
    const { chain: _chain, ...noChain } = v.content;
    const malformed = [
      noChain,
      { ...v.content, v: 2 },
      { ...v.content, chain: { ...v.content.chain, n: 0 } },
      { ...v.content, chain: { ...v.content.chain, n: 1.5 } },
      { ...v.content, chain: { ...v.content.chain, device: "A1CE0001A1CE0001A1CE0001A1CE0001" } },
      { ...v.content, chain: { ...v.content.chain, extra: 1 } },
      { ...v.content, chain: null },
    ];
    for (const content of malformed) {
      await expect(decryptMessage({ ...base, content })).rejects.toThrow("malformed content");
    }
  });
});

describe("shared v3 vectors: invites", () => {
  const w = exact.invites.withSealedLink;
  const wo = exact.invites.withoutSealedLink;

  test("withSealedLink: the sealed link for the fixed ephemeral and iv, the invite's canon, the signature", async () => {
    const i = w.inputs;
    expect(inviteLinkInfo(i.channelId, i.inviteeDid)).toBe(w.info);
    const sealedLink = await sealInviteLinkWith(
      {
        channelId: i.channelId,
        inviteeDid: i.inviteeDid,
        inviteePublicKey: i.inviteePublicKey,
        linkSecret: i.linkSecret,
      },
      { ephemeral: await ephemeralOf(i.ephemeral), iv: fromHex(i.ivHex) },
    );
    expect(sealedLink).toEqual(w.sealedLink);
    expect(toHex(fromBase64(sealedLink.encryptedKey))).toBe(w.encryptedKeyHex);
    expect(sealedLink.ephemeralPublicKey).toEqual(i.ephemeral.jwk);

    const invite = buildInviteV3({
      channelId: i.channelId,
      inviteeDid: i.inviteeDid,
      inviterDid: i.inviterDid,
      createdAt: i.createdAt,
      sealedLink,
    });
    expect(invite).toEqual(w.invite);
    expect(canon(invite)).toBe(w.signingBytes);
    expect(toHex(new TextEncoder().encode(canon(invite)))).toBe(w.signingBytesHex);
    expect(await verifyInvite(invite, w.signature, pub(i.signer))).toBe(true);
    expect(await verifyInvite(invite, w.signature, pub("mallory"))).toBe(false);
    expect(checkInviteForChannel(invite, w.channel.type)).toBeNull();

    expect(
      await openInviteLink({
        channelId: i.channelId,
        inviteeDid: i.inviteeDid,
        identity: idOf("bob"),
        sealedLink: invite.sealedLink,
      }),
    ).toBe(w.expect.linkSecret);
    expect(
      await inviteProblem({
        invite,
        signature: w.signature,
        inviterKey: pub("alice"),
        channelType: "secret",
        invitee: { identity: idOf("bob") },
      }),
    ).toEqual({ problem: null, linkSecret: w.expect.linkSecret });
  });

  test("withoutSealedLink: no sealedLink key at all, canon exact, the signature verifies", async () => {
    const i = wo.inputs;
    const invite = buildInviteV3({
      channelId: i.channelId,
      inviteeDid: i.inviteeDid,
      inviterDid: i.inviterDid,
      createdAt: i.createdAt,
    });
    expect(invite).toEqual(wo.invite);
    expect("sealedLink" in invite).toBe(false);
    expect(canon(invite)).toBe(wo.signingBytes);
    expect(await verifyInvite(invite, wo.signature, pub(i.signer))).toBe(true);
    expect(checkInviteForChannel(invite, wo.channel.type)).toBeNull();
  });

  test("a sealedLink: null, an extra JWK member or an extra record member makes the invite malformed", async () => {
    const invite = w.invite;
    const bad = [
      { ...invite, sealedLink: null },
      { ...invite, sealedLink: { ...invite.sealedLink, epochId: "00".repeat(16) } },
      {
        ...invite,
        sealedLink: {
          ...invite.sealedLink,
          ephemeralPublicKey: { ...invite.sealedLink.ephemeralPublicKey, ext: true },
        },
      },
    ];
    for (const b of bad) expect(await verifyInvite(b as InviteObject, w.signature, pub("alice"))).toBe(false);
    // null counts as missing in a secret channel.
    expect(checkInviteForChannel({ ...invite, sealedLink: null } as InviteObject, "secret")).toBe(
      "sealedLink-missing",
    );
  });
});

describe("shared v3 vectors: commits", () => {
  test.each(commitVectors.map((c) => [c.epochNumber, c] as const))(
    "epoch %i: keyCommitment, sealedState, the commit's canon (chains sorted) and its wraps byte for byte",
    async (_n, v) => {
      const i = v.inputs;
      const epochKey = fromHex(i.epochKeyHex);
      const binding = { channelId: i.channelId, epochId: i.epochId, epochNumber: v.epochNumber, epochKey };
      expect(await keyCommitment(binding)).toBe(v.keyCommitment);
      expect(await checkKeyCommitment({ ...binding, keyCommitment: v.keyCommitment })).toBe(true);
      const sealedState = await sealStateWithIv(
        { channelId: i.channelId, epochId: i.epochId, epochKey, state: i.state },
        fromHex(i.stateIvHex),
      );
      expect(sealedState).toBe(v.sealedState);
      expect(await openState({ channelId: i.channelId, epochId: i.epochId, epochKey, sealedState })).toEqual(
        i.state,
      );

      const c = v.commit;
      const commit = buildCommit({
        v: 3,
        channelId: c.channelId,
        epochNumber: c.epochNumber,
        epochId: c.epochId,
        prevEpochId: c.prevEpochId,
        creatorDid: c.creatorDid,
        reason: c.reason,
        // Given in reverse: the builder sorts members by did.
        members: [...c.members].reverse(),
        keyCommitment: v.keyCommitment,
        sealedState,
        chains: i.chainsGiven,
        createdAt: c.createdAt,
      });
      expect(commit).toEqual(c);
      expect(canon(commit)).toBe(v.signingBytes);
      expect(toHex(new TextEncoder().encode(canon(commit)))).toBe(v.signingBytesHex);
      expect(commitProblem(commit)).toBeNull();
      expect(await verifyCommit(commit, v.signature, pub(v.signer))).toBe(true);

      for (const w of v.wrappedKeys) {
        const record = await wrapEpochKeyWith(
          {
            channelId: i.channelId,
            epochNumber: v.epochNumber,
            epochId: i.epochId,
            epochKey,
            createdAt: c.createdAt,
            recipientDid: w.record.recipientDid,
            recipientPublicKey: w.recipientPublicKey,
          },
          { ephemeral: await ephemeralOf(w.ephemeral), iv: fromHex(w.ivHex) },
        );
        expect(record).toEqual(w.record);
        // The recipient opens it with the v2 label the v3 commit keeps.
        const key = await unwrapEpochKey(record, i.channelId, idOf(w.recipient), w.record.recipientDid, 3);
        expect(toHex(key)).toBe(i.epochKeyHex);
      }
    },
  );

  test("the key-change commit verifies under the creator's new key, not the old one", async () => {
    const v = commitVectors.find((c) => c.epochNumber === 3);
    if (!v) throw new Error("no epoch 3");
    expect(await verifyCommit(v.commit, v.signature, pub("aliceNew"))).toBe(true);
    expect(await verifyCommit(v.commit, v.signature, pub("alice"))).toBe(false);
  });

  test("member keys: the join commit and alice's own key-change commit change no one else's key", () => {
    expect(memberKeyProblem(commitOf(1), commitOf(2))).toBeNull();
    expect(memberKeyProblem(commitOf(2), commitOf(3))).toBeNull();
  });
});

describe("shared v3 vectors: key change, deletions, read marker", () => {
  test("keyChange: canon exact, signed by the old key, naming the key-change commit", async () => {
    const k = exact.keyChange;
    const statement = buildKeyChange({
      did: k.inputs.did,
      oldFp: await fingerprint(k.inputs.oldPublicKey),
      newFp: await fingerprint(k.inputs.newPublicKey),
      channelId: k.inputs.channelId,
      epochId: k.inputs.epochId,
      createdAt: k.inputs.createdAt,
    });
    expect(statement).toEqual(k.statement);
    expect(canon(statement)).toBe(k.signingBytes);
    expect(toHex(new TextEncoder().encode(canon(statement)))).toBe(k.signingBytesHex);
    const commit = commitOf(k.commitEpochNumber);
    expect(await verifyKeyChange(statement, k.signature, k.inputs.oldPublicKey)).toBe(true);
    expect(await verifyKeyChange(statement, k.signature, k.inputs.oldPublicKey, commit)).toBe(true);
    // Under the new key, or beside another commit, it does not stand.
    expect(await verifyKeyChange(statement, k.signature, k.inputs.newPublicKey)).toBe(false);
    expect(await verifyKeyChange(statement, k.signature, k.inputs.oldPublicKey, commitOf(2))).toBe(false);
  });

  test.each(exact.deletions.map((d: { tombstone: { clientMsgId: string } }, n: number) => [n, d]))(
    "deletion %i: canon exact, the signature verifies, and it may stand on its tombstone",
    // biome-ignore lint/suspicious/noExplicitAny: JSON
    async (_n, d: any) => {
      const deletion = buildDeletionV3(d.deletion);
      expect(deletion).toEqual(d.deletion);
      expect(canon(deletion)).toBe(d.signingBytes);
      expect(toHex(new TextEncoder().encode(canon(deletion)))).toBe(d.signingBytesHex);
      expect(await verifyDeletion(deletion, d.signature, pub(d.signer))).toBe(true);
      expect(await verifyDeletion(deletion, d.signature, pub("mallory"))).toBe(false);
      expect(deletionTargetProblem(deletion, d.tombstone, d.ownerDid)).toBeNull();
    },
  );

  test("read marker: canon exact and it verifies under bob's own key", async () => {
    const r = exact.readMarker;
    const marker = buildReadMarker(r.marker);
    expect(marker).toEqual(r.marker);
    expect(canon(marker)).toBe(r.signingBytes);
    expect(toHex(new TextEncoder().encode(canon(marker)))).toBe(r.signingBytesHex);
    expect(await verifyReadMarker(marker, r.signature, pub(r.checkedBy))).toBe(true);
    expect(r.expect.apply).toBe(marker.seq);
  });
});

describe("shared v3 vectors: device link confirmation", () => {
  test.each(exact.deviceLink.vectors.map((v: { code: string }) => [v.code, v]))(
    "%s: six digits from both raw keys, new device's first",
    // biome-ignore lint/suspicious/noExplicitAny: JSON
    async (_code, v: any) => {
      expect(toHex(fromBase64(v.newDevice.publicKey))).toBe(v.newDeviceRawHex);
      expect(toHex(fromBase64(v.existingDevice.publicKey))).toBe(v.existingDeviceRawHex);
      expect(await linkConfirmation(fromHex(v.newDeviceRawHex), fromHex(v.existingDeviceRawHex))).toBe(
        v.code,
      );
      // base64 keys give the same digits.
      expect(await linkConfirmation(v.newDevice.publicKey, v.existingDevice.publicKey)).toBe(v.code);
      expect(v.uint32 % 1_000_000).toBe(Number(v.code));
    },
  );

  test("a swapped key or the reversed order gives other digits", async () => {
    const { swapped, reversedOrder } = exact.deviceLink;
    const s = await linkConfirmation(
      fromHex(swapped.receivedAsNewDeviceRawHex),
      fromHex(swapped.existingDeviceRawHex),
    );
    expect(s).toBe(swapped.code);
    expect(s).not.toBe(swapped.newDeviceShows);
    const r = await linkConfirmation(fromHex(reversedOrder.firstRawHex), fromHex(reversedOrder.secondRawHex));
    expect(r).toBe(reversedOrder.code);
    expect(r).not.toBe(reversedOrder.correctCode);
  });
});

// ---- refuse ---------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: JSON
type Refusal = any;

/** Why the reader refuses the entry, found with the library's own checks (null: it would accept it). */
async function refusalReason(r: Refusal): Promise<string[]> {
  const reasons: string[] = [];
  switch (r.kind) {
    case "content": {
      const content = r.content as EncryptedContent;
      const signing = messageSigningBytes(r.channelId, content);
      if (!(await signs(signing, content.signature, r.senderPublicKey))) reasons.push("signature");
      const epochKeyHex = exact.contents.vectors.find(
        (v: { inputs: { epochId: string } }) => v.inputs.epochId === content.epochId,
      ).inputs.epochKeyHex;
      try {
        await decryptMessage({
          content,
          channelId: r.channelId,
          recordAuthorDid: content.senderDid,
          epochKey: fromHex(epochKeyHex),
          senderPublicKey: r.senderPublicKey,
          epochVersion: 3,
        });
      } catch (e) {
        expect(e).toBeInstanceOf(CryptoError);
        // Decryption runs before the signature check, so a content that does not open says so first.
        if ((e as CryptoError).code === "decryption-failed") reasons.push("decrypt");
        else if (!reasons.includes("signature")) reasons.push("signature");
      }
      return reasons;
    }
    case "invite": {
      const holder = r.checkedBy ? { identity: idOf(r.checkedBy as Name) } : undefined;
      const { problem } = await inviteProblem({
        invite: r.invite,
        signature: r.signature,
        inviterKey: r.inviterPublicKey,
        channelType: r.channel.type as ChannelType,
        ...(holder ? { invitee: holder } : {}),
      });
      return problem ? [problem] : [];
    }
    case "sealedLink": {
      // A reader that builds L from another did than the invite's inviteeDid.
      const wrongDid = (r.infoUsed as string).split("|")[2] as string;
      expect(inviteLinkInfo(r.channelId, wrongDid)).toBe(r.infoUsed);
      try {
        await openInviteLink({
          channelId: r.channelId,
          inviteeDid: wrongDid,
          identity: idOf(r.holder as Name),
          sealedLink: r.sealedLink as SealedLink,
        });
        return [];
      } catch (e) {
        expect((e as CryptoError).code).toBe("sealed-link-invalid");
        return ["decrypt"];
      }
    }
    case "deletion": {
      const deletion = r.deletion as DeletionObjectV3;
      if (!(await verifyDeletion(deletion, r.signature, r.byPublicKey))) return ["signature"];
      const problem = deletionTargetProblem(deletion, r.tombstone, r.ownerDid);
      return problem ? [problem] : [];
    }
    case "readMarker":
      return (await verifyReadMarker(r.marker as ReadMarkerObject, r.signature, r.myPublicKey))
        ? []
        : ["signature"];
    case "keyChange": {
      const ok = await verifyKeyChange(
        r.statement as KeyChangeStatement,
        r.signature,
        r.oldPinnedPublicKey,
        commitOf(r.commitEpochNumber),
      );
      return ok ? [] : ["signature"];
    }
    case "commit": {
      const commit = r.commit as Commit;
      // The signature itself is genuine: the refusal comes from the commit's content.
      expect(await signs(new TextEncoder().encode(canon(commit)), r.signature, pub(r.signer as Name))).toBe(
        true,
      );
      const problem = commitProblem(commit);
      if (problem) return [problem];
      if (!(await verifyCommit(commit, r.signature, pub(r.signer as Name)))) return ["signature"];
      const memberKey = memberKeyProblem(commitOf(r.prevEpochNumber), commit);
      return memberKey ? [memberKey.check] : [];
    }
    default:
      throw new Error(`unknown refusal kind ${r.kind}`);
  }
}

describe("shared v3 vectors: refused for the reason given", () => {
  test.each(vectors.refuse.map((r: Refusal) => [r.name, r]))("%s", async (_name, r: Refusal) => {
    const reasons = await refusalReason(r);
    expect(r.expect.valid).toBe(false);
    expect(reasons[0]).toBe(r.expect.reason);
    if (r.expect.also) expect(reasons).toContain(r.expect.also);
  });

  test("every reason the vectors name is one of their listed reasons", () => {
    for (const r of vectors.refuse) expect(Object.keys(vectors.reasons)).toContain(r.expect.reason);
    expect(CHAINS_ORDER).toBe("chains-order");
  });

  test("the content refusals carry the AADs they say they were sealed with", async () => {
    for (const r of vectors.refuse.filter((x: Refusal) => x.kind === "content" && x.aadUsed)) {
      const c = r.content;
      const key = await crypto.subtle.importKey(
        "raw",
        fromHex(exact.contents.vectors[0].inputs.epochKeyHex),
        "AES-GCM",
        false,
        ["decrypt"],
      );
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64(c.iv), additionalData: new TextEncoder().encode(r.aadUsed) },
        key,
        fromBase64(c.encrypted),
      );
      expect(plain.byteLength).toBeGreaterThan(0);
      expect(toHex(fromBase64(c.encrypted))).toBe(r.ciphertextHex);
      expect(messageAad({ v: 3, channelId: r.channelId, ...c })).not.toBe(r.aadUsed);
    }
  });
});

test("constants: the link secret and devices the vectors use", () => {
  expect(toHex(fromBase64(constants.linkSecret))).toBe(constants.linkSecretHex);
  expect(toBase64(fromHex(constants.linkSecretHex))).toBe("EBESExQVFhcYGRobHB0eHw==");
  for (const d of Object.values(constants.devices)) expect(d).toMatch(/^[0-9a-f]{32}$/);
});
