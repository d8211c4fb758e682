import { expect } from "bun:test";
import type {
  Admissions,
  ChannelType,
  Commit,
  NotifyAction,
  SignedDeletion,
  WrappedEpochKey,
} from "../../../core/protocol/index.ts";
import type {
  AccountRow,
  ChannelRow,
  EpochRow,
  MemberRow,
  MessageRow,
  NotifyRow,
  Storage,
} from "../../../server/storage/types.ts";

/**
 * Row builders for the storage contract. The rows look like what the services write (dids, channel
 * ids, rkeys and epoch ids in their wire formats) but are not cryptographically valid: storage never
 * verifies a signature or unwraps a key, it only keeps them.
 */

const B32 = "abcdefghijklmnopqrstuvwxyz234567";

export function randomB32(n: number): string {
  let out = "";
  for (const b of crypto.getRandomValues(new Uint8Array(n))) out += B32[b & 31];
  return out;
}

export function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

const randomB64 = (bytes: number) =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64");
const randomB64Url = (bytes: number) =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");

export const newDid = () => `did:plc:${randomB32(24)}`;
export const newChannelId = () => randomB32(16);
export const newRkey = () => randomB32(19);
export const newEpochId = () => randomHex(16);
export const newClientMsgId = () => randomHex(16);

/** A ciphertext-shaped content string, unique per call so a test can look for it afterwards. */
export function fakeContent(epochId: string, senderDid: string, clientMsgId: string, extra = 0): string {
  return JSON.stringify({
    v: 2,
    epochId,
    epochNumber: 1,
    iv: randomB64(12),
    encrypted: randomB64(32 + extra),
    senderDid,
    clientMsgId,
    timestamp: 1_700_000_000_000,
    signature: randomB64(64),
  });
}

export function wrappedKey(
  epochId: string,
  epochNumber: number,
  recipientDid: string,
  createdAt: number,
): WrappedEpochKey {
  return {
    epochId,
    epochNumber,
    recipientDid,
    ephemeralPublicKey: { kty: "EC", crv: "P-256", x: randomB64Url(32), y: randomB64Url(32) },
    iv: randomB64(12),
    encryptedKey: randomB64(48),
    createdAt,
  };
}

/** A deletion-shaped signed object (storage keeps it as given; it never verifies signatures). */
export function signedDeletion(
  channelId: string,
  rkey: string,
  byDid: string,
  createdAt: number,
): SignedDeletion {
  return {
    deletion: { v: 2, channelId, uri: `at://${byDid}/chat.wsync.message/${rkey}`, byDid, createdAt },
    signature: randomB64(64),
  };
}

/** An invite-shaped signed object (not a valid signature). */
export function signedInvite(channelId: string, inviterDid: string, inviteeDid: string, createdAt: number) {
  return {
    invite: { v: 2 as const, channelId, inviteeDid, inviterDid, createdAt },
    signature: randomB64(64),
  };
}

export const sortStrings = (xs: string[]) => [...xs].sort();

/**
 * One test's world: a storage plus a clock that only moves forward, so "older" and "newer" are
 * unambiguous whatever the implementation's tie-breaking.
 */
export class World {
  private t = 1_700_000_000_000;

  constructor(readonly s: Storage) {}

  /** A fresh, strictly later timestamp (ms). */
  now(): number {
    this.t += 1000;
    return this.t;
  }

  accountRow(overrides: Partial<AccountRow> = {}): AccountRow {
    const name = `u-${randomB32(8)}`;
    return {
      did: newDid(),
      handle: `${name}.test`,
      email: `${name}@example.com`,
      passwordHash: `$argon2id$v=19$m=65536,t=2,p=1$${randomB64(16)}$${randomB64(32)}`,
      publicKey: null,
      fingerprint: null,
      createdAt: this.now(),
      ...overrides,
    };
  }

  /** A registered account with a public key, as every channel member has. */
  async user(overrides: Partial<AccountRow> = {}): Promise<AccountRow> {
    const row = this.accountRow({ publicKey: randomB64(65), fingerprint: randomHex(16), ...overrides });
    await this.s.accounts.create(row);
    return row;
  }

  channelRow(owner: AccountRow, type: ChannelType, overrides: Partial<ChannelRow> = {}): ChannelRow {
    return {
      id: newChannelId(),
      name: `room ${randomB32(4)}`,
      description: "a room",
      type,
      creatorDid: owner.did,
      ownerDid: owner.did,
      createdAt: this.now(),
      joinTokenHash: type === "secret" ? randomHex(32) : null,
      linkVoided: false,
      memberVersion: 1,
      ...overrides,
    };
  }

  async channel(owner: AccountRow, type: ChannelType = "public"): Promise<ChannelRow> {
    const row = this.channelRow(owner, type);
    await this.s.channels.create(row, { did: owner.did, at: row.createdAt });
    return row;
  }

  /** Adds a member; fails the test unless they joined. */
  async join(channel: ChannelRow, who: AccountRow, limit = 5000): Promise<MemberRow> {
    const change = await this.s.channels.addMember(channel.id, who.did, this.now(), limit);
    if (change.kind !== "joined") throw new Error(`addMember answered ${JSON.stringify(change)}`);
    return change.member;
  }

  /**
   * The next epoch for the channel's current members and member version, built as a client would
   * (without real cryptography). Not inserted.
   */
  async nextEpoch(channelId: string, creatorDid: string, admissions: Admissions = {}) {
    const state = await this.s.epochs.state(channelId);
    const members = await this.s.channels.members(channelId);
    const epochNumber = (state.current?.epochNumber ?? 0) + 1;
    const epochId = newEpochId();
    const createdAt = this.now();
    const commit: Commit = {
      v: 2,
      channelId,
      epochNumber,
      epochId,
      prevEpochId: state.current?.epochId ?? null,
      creatorDid,
      reason: epochNumber === 1 ? "create" : "manual",
      members: members
        .map((m) => ({ did: m.did, fp: m.fingerprint ?? randomHex(16), handle: m.handle }))
        .sort((a, b) => (a.did < b.did ? -1 : 1)),
      keyCommitment: randomB64(32),
      sealedState: randomB64(40),
      createdAt,
    };
    const row: EpochRow = {
      channelId,
      epochNumber,
      epochId,
      commit,
      signature: randomB64(64),
      createdAt,
      creatorDid,
      memberVersion: state.memberVersion,
      admissions,
    };
    const keys = members.map((m) => wrappedKey(epochId, epochNumber, m.did, createdAt));
    return { row, keys };
  }

  /** Makes and inserts the next epoch; fails the test unless it is accepted. */
  async epoch(channel: ChannelRow, creator: AccountRow) {
    const e = await this.nextEpoch(channel.id, creator.did);
    expect(await this.s.epochs.insert(e.row, e.keys)).toBe("ok");
    return e;
  }

  messageInput(
    channel: ChannelRow,
    author: AccountRow,
    epochId: string,
    overrides: Partial<Omit<MessageRow, "seq" | "kind">> = {},
  ): Omit<MessageRow, "seq" | "kind"> {
    const clientMsgId = overrides.clientMsgId ?? newClientMsgId();
    return {
      channelId: channel.id,
      rkey: newRkey(),
      authorDid: author.did,
      authorHandle: author.handle,
      clientMsgId,
      content: fakeContent(epochId, author.did, clientMsgId),
      createdAt: this.now(),
      ...overrides,
    };
  }

  /** Appends a message; fails the test unless it is accepted. */
  async message(
    channel: ChannelRow,
    author: AccountRow,
    epochId: string,
    overrides: Partial<Omit<MessageRow, "seq" | "kind">> = {},
  ): Promise<MessageRow> {
    const r = await this.s.timeline.appendMessage(
      this.messageInput(channel, author, epochId, overrides),
      epochId,
    );
    if (r.kind !== "ok") throw new Error(`appendMessage answered ${JSON.stringify(r)}`);
    return r.row;
  }

  async notify(
    channel: ChannelRow,
    subject: AccountRow,
    action: NotifyAction = "joined",
  ): Promise<NotifyRow> {
    return this.s.timeline.appendNotify({
      channelId: channel.id,
      rkey: newRkey(),
      subjectDid: subject.did,
      subjectHandle: subject.handle,
      action,
      createdAt: this.now(),
    });
  }

  /** A channel with an owner, a second member and a current epoch made for both. */
  async room(type: ChannelType = "public") {
    const owner = await this.user();
    const other = await this.user();
    const channel = await this.channel(owner, type);
    await this.join(channel, other);
    const epoch = await this.epoch(channel, owner);
    return { owner, other, channel, epochId: epoch.row.epochId, epoch };
  }
}
