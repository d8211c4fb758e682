import {
  type Channel,
  Collections,
  channelUri,
  type EpochInfo,
  type EpochRecord,
  type Member,
  type MessageRecord,
  messageUri,
  type NotifyRecord,
  notifyUri,
  type TimelineRecord,
} from "../../core/protocol/index.ts";
import type {
  ChannelRow,
  ChannelSummary,
  EpochRow,
  EpochState,
  ListedMember,
  MemberRow,
  MessageRow,
  NotifyRow,
  Storage,
  TimelineRow,
} from "../storage/types.ts";
import { iso } from "../util/clock.ts";

/** Storage rows → the wire shapes of protocol §3. */

export const uriOf = (c: Pick<ChannelRow, "creatorDid" | "id">) => channelUri(c.creatorDid, c.id);

export function toChannel(s: ChannelSummary): Channel {
  return {
    id: s.id,
    uri: uriOf(s),
    value: {
      $type: Collections.channel,
      name: s.name,
      type: s.type,
      description: s.description,
      createdAt: iso(s.createdAt),
    },
    // A direct conversation has no owner (nobody has owner powers in it): everyone is a member.
    owner:
      s.type !== "direct" && s.ownerDid && s.ownerHandle ? { did: s.ownerDid, handle: s.ownerHandle } : null,
    memberCount: s.memberCount,
    messageCount: s.messageCount,
    lastActivity: s.lastActivity === null ? null : iso(s.lastActivity),
    isMember: s.role !== null,
    role: s.type === "direct" && s.role !== null ? "member" : s.role,
  };
}

/** Marks the members who signed in with ATProto (one read for the whole list). */
export async function markAtproto(storage: Storage, members: Member[]): Promise<Member[]> {
  if (members.length === 0) return members;
  const linked = await storage.atproto.linked(members.map((m) => m.did));
  if (linked.size === 0) return members;
  return members.map((m) => (linked.has(m.did) ? { ...m, atproto: true } : m));
}

/** A member on the wire; a row of the member list carries its ATProto mark (ListedMember). */
export function toMember(m: MemberRow | ListedMember, online: boolean): Member {
  const member: Member = {
    did: m.did,
    handle: m.handle,
    isOwner: m.role === "owner",
    online,
    publicKey: m.publicKey,
    fingerprint: m.fingerprint,
    admission: m.admission,
  };
  if ("atproto" in m && m.atproto) member.atproto = true;
  return member;
}

export function toEpochRecord(e: EpochRow): EpochRecord {
  return {
    epochId: e.epochId,
    epochNumber: e.epochNumber,
    createdAt: e.createdAt,
    commit: e.commit,
    signature: e.signature,
    admissions: e.admissions,
    ...(e.keyChange ? { keyChange: e.keyChange } : {}),
  };
}

export function toEpochInfo(state: EpochState): EpochInfo {
  const e = state.current;
  return {
    epochId: e?.epochId ?? null,
    epochNumber: e?.epochNumber ?? 0,
    createdAt: e?.createdAt ?? null,
    commit: e?.commit ?? null,
    signature: e?.signature ?? null,
    rotationRequired: state.rotationRequired,
    admissions: e?.admissions ?? {},
    linkRotationRequired: state.linkRotationRequired,
    ...(e?.keyChange ? { keyChange: e.keyChange } : {}),
  };
}

export function toMessageRecord(r: MessageRow, chUri: string): MessageRecord {
  return {
    uri: messageUri(r.authorDid, r.rkey),
    channelUri: chUri,
    seq: r.seq,
    indexedAt: iso(r.createdAt),
    value: {
      $type: Collections.message,
      author: { did: r.authorDid, handle: r.authorHandle },
      createdAt: iso(r.createdAt),
      // A tombstone: content "" and, when deleted under v2, the signed deletion (protocol §7).
      content: r.content,
      ...(r.deletion ? { deletion: r.deletion } : {}),
      ...(r.tombstone ? { tombstone: r.tombstone } : {}),
    },
  };
}

export function toNotifyRecord(r: NotifyRow, chUri: string): NotifyRecord {
  return {
    uri: notifyUri(r.subjectDid, r.rkey),
    channelUri: chUri,
    seq: r.seq,
    indexedAt: iso(r.createdAt),
    value: {
      $type: Collections.notify,
      subject: { did: r.subjectDid, handle: r.subjectHandle },
      action: r.action,
      createdAt: iso(r.createdAt),
    },
  };
}

export function toRecord(r: TimelineRow, chUri: string): TimelineRecord {
  return r.kind === "message" ? toMessageRecord(r, chUri) : toNotifyRecord(r, chUri);
}
