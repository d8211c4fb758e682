import { notifySymbol, type TimelineItem } from "../core/client/index.ts";
import { displaySafe } from "../core/commands/index.ts";
import type { Channel } from "../core/protocol/index.ts";

/** The stable JSON shape of one timeline item (docs/cli.md). */
export interface ItemJson {
  uri: string;
  seq: number;
  kind: "message" | "notify";
  author: { did: string; handle: string };
  createdAt: string;
  text: string | null;
  verified: boolean;
  state: "pending" | "success" | "failed";
  error: string | null;
  action: string | null;
}

export function itemJson(i: TimelineItem): ItemJson {
  return {
    uri: i.uri,
    seq: i.seq,
    kind: i.kind,
    author: { did: i.author.did, handle: i.author.handle },
    createdAt: i.createdAt,
    text: i.text,
    verified: i.verified,
    state: i.state,
    error: i.error,
    action: i.action ?? null,
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

export function notifyText(i: TimelineItem): string {
  const who = displaySafe(i.author.handle);
  switch (i.action) {
    case "joined":
      return `${who} joined`;
    case "left":
      return `${who} left`;
    case "kicked":
      return `${who} was removed`;
    case "key-changed":
      return `${who}'s encryption key changed`;
    default:
      return who;
  }
}

function time(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** One line for a terminal: time, author with verified mark, text (or the failure text). */
export function itemLine(i: TimelineItem): string {
  if (i.kind === "notify") return `[${time(i.createdAt)}] ${notifySymbol(i.action)} ${notifyText(i)}`;
  const mark = i.state === "failed" ? "✗" : i.verified ? "✓" : "?";
  const body = i.state === "failed" ? `<${i.error ?? "cannot decrypt"}>` : displaySafe(i.text ?? "");
  return `[${time(i.createdAt)}] ${displaySafe(i.author.handle)} ${mark} ${body}`;
}
