import { type ChannelView, SecurityText, type SecurityWarning } from "../core/client/index.ts";
import type { Channel } from "../core/protocol/index.ts";
import { displaySafe } from "../core/slash-commands/index.ts";

// A timeline's rows (JSON shapes and text lines) are core's, shared with the browser's export.
export {
  deletedText,
  type EpochJson,
  epochIsWarning,
  epochText,
  type ItemJson,
  itemJson,
  itemLine,
  mark,
  missingText,
  multilineText,
  notesText,
  notifyText,
  presentedLine,
  Symbols,
  seqTag,
  shownTime,
  time,
  viewLines,
  type WarningJson,
  warningJson,
  warningLine,
} from "../core/export/rows.ts";

/** This user is no longer in a channel (tail and listen): kicked, or left from elsewhere. */
export function removedJson(
  r: { channelId: string; name: string | null; reason: "left" | "kicked" | null },
  fallbackName: string,
) {
  return {
    type: "removed",
    channelId: r.channelId,
    channel: r.name ?? fallbackName,
    reason: r.reason ?? "removed",
  };
}

export function removedText(reason: "left" | "kicked" | null, name: string): string {
  return reason === "kicked"
    ? `You were kicked from ${name}`
    : reason === "left"
      ? `You left ${name}`
      : `You are no longer in ${name}`;
}

/** One identity per warning, so a warning seen both in the view and as an event prints once. */
export function warningKey(w: SecurityWarning): string {
  return JSON.stringify([w.check, w.channelId, w.epochNumber, w.did, w.text]);
}

export interface MemberJson {
  did: string;
  handle: string;
  isOwner: boolean;
  online: boolean;
  publicKey: string | null;
  fingerprint: string | null;
}

/**
 * The documented member fields only: the server's admission evidence (MACs, signed invites) is the
 * engine's to check, and scripts get no use from its raw form.
 */
export function memberJson(m: MemberJson): MemberJson {
  return {
    did: m.did,
    handle: m.handle,
    isOwner: m.isOwner,
    online: m.online,
    publicKey: m.publicKey,
    fingerprint: m.fingerprint,
  };
}

export interface ChannelJson {
  id: string;
  uri: string;
  name: string;
  type: string;
  description: string;
  isMember: boolean;
  role: string | null;
  memberCount: number;
  messageCount: number;
  lastActivity: string | null;
}

export function channelJson(c: Channel): ChannelJson {
  return {
    id: c.id,
    uri: c.uri,
    name: c.value.name,
    type: c.value.type,
    description: c.value.description,
    isMember: c.isMember,
    role: c.role,
    memberCount: c.memberCount,
    messageCount: c.messageCount,
    lastActivity: c.lastActivity,
  };
}

// Key, handle and fresh-device warnings inform; withheld messages and misplaced deletions are shown
// where they are; the others are the checks that stop sending.
const INFORMATIVE = new Set<SecurityWarning["check"]>([
  "key-changed",
  "handle",
  "fresh-device",
  "withheld",
  "deletion",
]);

/** Why sending is refused: the newest warning about a failed check, else the general sentence. */
export function sendBlockedText(view: Pick<ChannelView, "warnings">): string {
  const blocking = view.warnings.filter((w) => !INFORMATIVE.has(w.check));
  const w = blocking.at(-1) ?? view.warnings.at(-1);
  return w ? displaySafe(w.text) : SecurityText.sendBlocked;
}
