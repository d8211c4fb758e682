import {
  buildCommit,
  encryptMessage,
  generateEpochKey,
  generateIdentity,
  type Identity,
  importIdentity,
  newEpochId,
  signCommit,
  wrapEpochKeyForMembers,
} from "../../core/crypto/index.ts";
import type { Channel, Member, Session } from "../../core/protocol/index.ts";
import { call, ok } from "./harness.ts";

export interface Person {
  name: string;
  session: Session;
  token: string;
  identity: Identity;
  publicKey: string;
  privateKey: string;
  /** Epoch keys this person unwrapped, by epochId. */
  epochKeys: Map<string, Uint8Array>;
}

let counter = 0;

/** Registers a user and saves a freshly generated public key, as a client does after the keys modal. */
export async function person(url: string, name = "user"): Promise<Person> {
  const n = `${name}-${++counter}-${Math.random().toString(36).slice(2, 6)}`.slice(0, 32).replace(/-+$/, "");
  const session = await ok(url, "register", {
    handle: n,
    email: `${n}@example.com`,
    password: "correct horse battery",
  });
  const keys = await generateIdentity();
  await ok(url, "savePublicKey", { publicKey: keys.publicKey }, session.accessJwt);
  const identity = await importIdentity(keys.privateKey);
  return {
    name: n,
    session: { ...session, publicKey: keys.publicKey },
    token: session.accessJwt,
    identity,
    publicKey: keys.publicKey,
    privateKey: keys.privateKey,
    epochKeys: new Map(),
  };
}

/** Makes the next epoch for the channel's current members, as a member's client does (protocol §5). */
export async function rotate(url: string, who: Person, channel: Pick<Channel, "id" | "uri">) {
  const info = await ok(url, "getEpochInfo", { channelUri: channel.uri }, who.token);
  const { members } = await ok(url, "getMembers", { channelUri: channel.uri }, who.token);
  const epochKey = generateEpochKey();
  const epochId = newEpochId();
  const epochNumber = info.epochInfo.epochNumber + 1;
  const createdAt = Date.now();
  const commit = buildCommit({
    channelId: channel.id,
    epochNumber,
    epochId,
    prevEpochId: info.epochInfo.epochId,
    creatorDid: who.session.did,
    members: members.map((m: Member) => ({ did: m.did, fp: m.fingerprint as string })),
    createdAt,
  });
  const signature = await signCommit(who.identity, commit);
  const wrappedKeys = await wrapEpochKeyForMembers({
    channelId: channel.id,
    epochNumber,
    epochId,
    epochKey,
    createdAt,
    recipients: members.map((m: Member) => ({ did: m.did, publicKey: m.publicKey as string })),
  });
  const res = await call(
    url,
    "createEpoch",
    { channelUri: channel.uri, commit, signature, wrappedKeys },
    who.token,
  );
  if (res.status === 200) who.epochKeys.set(epochId, epochKey);
  return { res, epochId, epochKey, epochNumber, commit, signature, wrappedKeys };
}

/** Creates a channel and its first epoch. */
export async function createChannel(
  url: string,
  owner: Person,
  type: "public" | "invite" | "secret",
  name = "room",
) {
  const created = await ok(url, "createChannel", { name, type }, owner.token);
  const r = await rotate(url, owner, created.channel);
  if (r.res.status !== 200) throw new Error(`epoch 1 refused: ${JSON.stringify(r.res.body)}`);
  return {
    channel: created.channel,
    link: created.payload?.link ?? null,
    epochId: r.epochId,
    epochKey: r.epochKey,
  };
}

/** Encrypts and signs a text for the channel under the given epoch. */
export async function seal(
  who: Person,
  channel: Pick<Channel, "id" | "uri">,
  epoch: { epochId: string; epochNumber: number; epochKey: Uint8Array },
  text: string,
) {
  const { contentJson, clientMsgId } = await encryptMessage({
    identity: who.identity,
    senderDid: who.session.did,
    channelId: channel.id,
    epochId: epoch.epochId,
    epochNumber: epoch.epochNumber,
    epochKey: epoch.epochKey,
    text,
  });
  return { channelUri: channel.uri, content: contentJson, clientMsgId };
}
