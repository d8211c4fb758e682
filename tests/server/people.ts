import {
  buildDeletion,
  buildInvite,
  createEpoch,
  encryptMessage,
  fingerprint,
  generateIdentity,
  type Identity,
  importIdentity,
  joinTokenFor,
  makeLinkProof,
  newLinkSecret,
  signObject,
} from "../../core/crypto/index.ts";
import type {
  Channel,
  CommitReason,
  Member,
  RouteBody,
  Session,
  TimelineRecord,
} from "../../core/protocol/index.ts";
import { call, ok } from "./harness.ts";

export interface Person {
  name: string;
  session: Session;
  token: string;
  identity: Identity;
  publicKey: string;
  privateKey: string;
  /** fingerprint(publicKey). */
  fp: string;
  /** Epoch keys this person unwrapped, by epochId. */
  epochKeys: Map<string, Uint8Array>;
}

type ChannelRef = Pick<Channel, "id" | "uri">;

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
    fp: await fingerprint(keys.publicKey),
    epochKeys: new Map(),
  };
}

export interface RotateOptions {
  reason?: CommitReason;
  /**
   * The link secret to seal in the commit's state. With `newLink`, or when the server reports
   * linkRotationRequired, a fresh one is made and its joinToken sent with the epoch.
   */
  linkSecret?: string | null;
  newLink?: boolean;
  /** Send this joinToken whatever the channel (for tests of refusals). */
  joinToken?: string;
  /** Never send a joinToken (for tests of the RotationRequired refusal). */
  noJoinToken?: boolean;
}

/** Makes the next v2 epoch for the channel's current members, as a member's client does (protocol §7). */
export async function rotate(url: string, who: Person, channel: ChannelRef, opts: RotateOptions = {}) {
  const info = await ok(url, "getEpochInfo", { channelUri: channel.uri }, who.token);
  const { members } = await ok(url, "getMembers", { channelUri: channel.uri }, who.token);
  const epochNumber = info.epochInfo.epochNumber + 1;
  const makeLink = !opts.noJoinToken && (opts.newLink || info.epochInfo.linkRotationRequired);
  const linkSecret = makeLink ? newLinkSecret() : (opts.linkSecret ?? null);
  const joinToken =
    opts.joinToken ?? (makeLink && linkSecret ? await joinTokenFor(linkSecret, channel.id) : undefined);
  const created = await createEpoch({
    identity: who.identity,
    creatorDid: who.session.did,
    channelId: channel.id,
    epochNumber,
    prevEpochId: info.epochInfo.epochId,
    reason: opts.reason ?? (epochNumber === 1 ? "create" : "manual"),
    members: members.map((m: Member) => ({ did: m.did, publicKey: m.publicKey as string, handle: m.handle })),
    state: { linkSecret },
    createdAt: Date.now(),
  });
  const { epochId, epochKey, commit, signature, wrappedKeys } = created;
  const res = await call(
    url,
    "createEpoch",
    {
      channelUri: channel.uri,
      commit,
      signature,
      wrappedKeys,
      ...(joinToken === undefined ? {} : { joinToken }),
    },
    who.token,
  );
  if (res.status === 200) who.epochKeys.set(epochId, epochKey);
  return { res, epochId, epochKey, epochNumber, commit, signature, wrappedKeys, linkSecret, joinToken };
}

/** Creates a channel and its first epoch (a secret channel gets its link with epoch 1). */
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
    link: r.linkSecret ? `${url}/sync/join/${created.channel.id}#${r.linkSecret}` : null,
    linkSecret: r.linkSecret,
    epochId: r.epochId,
    epochKey: r.epochKey,
  };
}

/** The join body a client sends for a secret link: the derived joinToken and the joiner's link proof. */
export async function linkJoinBody(
  who: Person,
  channel: ChannelRef,
  linkSecret: string,
): Promise<RouteBody<"joinChannel">> {
  return {
    channelUri: channel.uri,
    joinToken: await joinTokenFor(linkSecret, channel.id),
    admission: await makeLinkProof({
      linkSecret,
      channelId: channel.id,
      did: who.session.did,
      fp: who.fp,
      createdAt: Date.now(),
    }),
  };
}

/** A signed v2 invite body from `from` naming `invitee` (protocol §7). */
export async function inviteBody(
  from: Person,
  channel: ChannelRef,
  invitee: { did: string; handle: string },
  overrides: Partial<{ createdAt: number; channelId: string; inviterDid: string; inviteeDid: string }> = {},
): Promise<RouteBody<"invite">> {
  const invite = buildInvite({
    channelId: channel.id,
    inviteeDid: invitee.did,
    inviterDid: from.session.did,
    createdAt: Date.now(),
    ...overrides,
  });
  return {
    channelUri: channel.uri,
    handle: invitee.handle,
    invite,
    signature: await signObject(from.identity, invite),
  };
}

/** Invites a person with a correctly signed invite; fails the test unless it is accepted. */
export async function invite(url: string, from: Person, channel: ChannelRef, invitee: Person) {
  return ok(url, "invite", await inviteBody(from, channel, invitee.session), from.token);
}

/** A signed v2 deletion body by `who` for the message `uri` of `channel`. */
export async function deletionBody(
  who: Person,
  channel: Pick<Channel, "id">,
  uri: string,
  overrides: Partial<{ createdAt: number; channelId: string; byDid: string; uri: string }> = {},
): Promise<RouteBody<"deleteMessage">> {
  const deletion = buildDeletion({
    channelId: channel.id,
    uri,
    byDid: who.session.did,
    createdAt: Date.now(),
    ...overrides,
  });
  return { uri, deletion, signature: await signObject(who.identity, deletion) };
}

/** Encrypts and signs a text for the channel under the given epoch. */
export async function seal(
  who: Person,
  channel: ChannelRef,
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

/** Every record of a channel, oldest first, through the HTTP API (paged by cursor). */
export async function allRecords(url: string, who: Person, channelUri: string): Promise<TimelineRecord[]> {
  const records: TimelineRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await ok(
      url,
      "getMessages",
      { channelUri, limit: 100, ...(cursor ? { cursor } : {}) },
      who.token,
    );
    records.push(...page.records);
    if (!page.hasMore || !page.cursor) break;
    cursor = page.cursor;
  }
  return records.sort((a, b) => a.seq - b.seq);
}
