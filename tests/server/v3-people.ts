/**
 * Protocol v3 (§8) helpers for the server's v3 tests: v3 commits (with chains and, for a member's
 * own key change, the old key's statement), v3 content with a sender chain, and signed v3 invites,
 * deletions and read markers, made with the project's client cryptography.
 */
import {
  createEpoch,
  encryptMessage,
  fingerprint,
  generateIdentity,
  type Identity,
  importIdentity,
  joinTokenFor,
  newLinkSecret,
  signObject,
} from "../../core/crypto/index.ts";
import type {
  ChainEntry,
  Channel,
  CommitReason,
  CommitV3,
  KeyChange,
  Member,
  SealedLink,
} from "../../core/protocol/index.ts";
import { call, ok } from "./harness.ts";
import type { Person } from "./people.ts";

type ChannelRef = Pick<Channel, "id" | "uri">;

export interface Rotate3Options {
  reason?: CommitReason;
  chains?: ChainEntry[];
  /** Wrap to (and list the fp of) these keys instead of the ones get-members shows, by did. */
  keys?: Record<string, string>;
  keyChange?: KeyChange | ((commit: CommitV3) => Promise<KeyChange>);
  newLink?: boolean;
  /** The signed retention (docs/protocol-extensions.md "Retention"). */
  retentionDays?: number;
}

/** Makes the next v3 epoch for the channel's current members, as a v3 client does (protocol §8). */
export async function rotate3(url: string, who: Person, channel: ChannelRef, opts: Rotate3Options = {}) {
  const info = await ok(url, "getEpochInfo", { channelUri: channel.uri }, who.token);
  const { members } = await ok(url, "getMembers", { channelUri: channel.uri }, who.token);
  const epochNumber = info.epochInfo.epochNumber + 1;
  const makeLink = opts.newLink || info.epochInfo.linkRotationRequired;
  const linkSecret = makeLink ? newLinkSecret() : null;
  const created = await createEpoch({
    v: 3,
    ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
    chains: opts.chains ?? [],
    identity: who.identity,
    creatorDid: who.session.did,
    channelId: channel.id,
    epochNumber,
    prevEpochId: info.epochInfo.epochId,
    reason: opts.reason ?? (epochNumber === 1 ? "create" : "manual"),
    members: members.map((m: Member) => ({
      did: m.did,
      publicKey: opts.keys?.[m.did] ?? (m.publicKey as string),
      handle: m.handle,
    })),
    state: { linkSecret },
    createdAt: Date.now(),
  });
  const keyChange =
    typeof opts.keyChange === "function" ? await opts.keyChange(created.commit) : opts.keyChange;
  const res = await call(
    url,
    "createEpoch",
    {
      channelUri: channel.uri,
      commit: created.commit,
      signature: created.signature,
      wrappedKeys: created.wrappedKeys,
      ...(keyChange ? { keyChange } : {}),
      ...(linkSecret ? { joinToken: await joinTokenFor(linkSecret, channel.id) } : {}),
    },
    who.token,
  );
  if (res.status === 200) who.epochKeys.set(created.epochId, created.epochKey);
  return { res, ...created, epochNumber, linkSecret };
}

/** A channel whose epoch 1 is a v3 commit. */
export async function createChannel3(url: string, owner: Person, type: "public" | "invite" | "secret") {
  const created = await ok(url, "createChannel", { name: `v3 ${type}`, type }, owner.token);
  const r = await rotate3(url, owner, created.channel);
  if (r.res.status !== 200) throw new Error(`v3 epoch 1 refused: ${JSON.stringify(r.res.body)}`);
  return { channel: created.channel, epoch: { epochId: r.epochId, epochNumber: 1, epochKey: r.epochKey }, r };
}

/** Replaces a person's key (save-public-key with replace: true) and returns the old identity. */
export async function replaceKey(url: string, who: Person) {
  const old = { identity: who.identity, publicKey: who.publicKey, fp: who.fp };
  const keys = await generateIdentity();
  await ok(url, "savePublicKey", { publicKey: keys.publicKey, replace: true }, who.token);
  who.identity = await importIdentity(keys.privateKey);
  who.publicKey = keys.publicKey;
  who.privateKey = keys.privateKey;
  who.fp = await fingerprint(keys.publicKey);
  who.session = { ...who.session, publicKey: keys.publicKey };
  return old;
}

/** The old key's signed statement for `who`'s own key-change commit (protocol §8). */
export async function keyChangeFor(
  who: Person,
  old: { identity: Identity; fp: string },
  commit: CommitV3,
  overrides: Partial<KeyChange["statement"]> = {},
  signer: Identity = old.identity,
): Promise<KeyChange> {
  const statement = {
    v: 3 as const,
    did: who.session.did,
    oldFp: old.fp,
    newFp: who.fp,
    channelId: commit.channelId,
    epochId: commit.epochId,
    createdAt: Date.now(),
    ...overrides,
  };
  return { statement, signature: await signObject(signer, statement) };
}

/** A random device id and a counter: one device's sender chain in a channel. */
export function device() {
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  let n = 0;
  return { id, next: () => ({ device: id, n: ++n }) };
}

/** Encrypts and signs a text as v3 content (with `chain`), or v2 without one. */
export async function seal3(
  who: Person,
  channel: ChannelRef,
  epoch: { epochId: string; epochNumber: number; epochKey: Uint8Array },
  text: string,
  chain?: { device: string; n: number },
) {
  const { contentJson, clientMsgId } = await encryptMessage({
    identity: who.identity,
    senderDid: who.session.did,
    channelId: channel.id,
    epochId: epoch.epochId,
    epochNumber: epoch.epochNumber,
    epochKey: epoch.epochKey,
    text,
    ...(chain ? { chain } : {}),
  });
  return { channelUri: channel.uri, content: contentJson, clientMsgId };
}

/** A sealedLink-shaped record (the server never opens it; only its invitee can). */
export function fakeSealedLink(): SealedLink {
  const b64u = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("base64url");
  const b64 = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("base64");
  return {
    ephemeralPublicKey: { kty: "EC", crv: "P-256", x: b64u(32), y: b64u(32) },
    iv: b64(12),
    encryptedKey: b64(32),
  };
}

/** A signed v3 invite body from `from` naming `invitee`, with or without a sealedLink. */
export async function invite3Body(
  from: Person,
  channel: ChannelRef,
  invitee: { did: string; handle: string },
  sealedLink?: SealedLink,
) {
  const invite = {
    v: 3 as const,
    channelId: channel.id,
    inviteeDid: invitee.did,
    inviterDid: from.session.did,
    createdAt: Date.now(),
    ...(sealedLink ? { sealedLink } : {}),
  };
  return {
    channelUri: channel.uri,
    handle: invitee.handle,
    invite,
    signature: await signObject(from.identity, invite),
  };
}

/** A signed v3 deletion body by `who` of the message `uri`, naming `target`. */
export async function deletion3Body(
  who: Person,
  channel: Pick<Channel, "id">,
  uri: string,
  target: { did: string; clientMsgId: string },
  overrides: Partial<{ byDid: string; channelId: string; createdAt: number }> = {},
) {
  const deletion = {
    v: 3 as const,
    channelId: channel.id,
    target,
    byDid: who.session.did,
    createdAt: Date.now(),
    ...overrides,
  };
  return { uri, deletion, signature: await signObject(who.identity, deletion) };
}

/** A mark-read body with the marker signed by `signer` (default: `who`'s own key). */
export async function markBody(
  who: Person,
  channel: ChannelRef,
  seq: number,
  overrides: Partial<{ channelId: string }> = {},
  signer: Identity = who.identity,
) {
  const marker = { v: 3 as const, channelId: channel.id, seq, createdAt: Date.now(), ...overrides };
  return { channelUri: channel.uri, marker, signature: await signObject(signer, marker) };
}
