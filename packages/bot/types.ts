/**
 * The JSON shapes `wsync api --listen` writes (docs/cli.md: `read --json` items, `listen --json`
 * events, `api` results), as types. Written out here so the package stands alone; the test
 * tests/cli/bot-client.test.ts holds them to the CLI's own types.
 */

export interface Person {
  did: string;
  handle: string;
}

/** A timeline item, as `read --json` prints it. */
export interface Item {
  uri: string;
  seq: number;
  kind: "message" | "notify" | "epoch" | "missing";
  author: Person;
  createdAt: string;
  signedAt: string | null;
  text: string | null;
  verified: boolean;
  state: "pending" | "success" | "failed";
  error: string | null;
  action: string | null;
  notes: string[];
  deleted: { did: string; handle: string; signed: boolean } | null;
  epoch: {
    epochNumber: number;
    reason: string;
    creator: Person;
    added: { did: string; handle: string; admission: string }[];
    removed: Person[];
    rekeyed: Person[];
    linkChanged: boolean;
    keyChange: { did: string; handle: string; signed: boolean } | null;
    renamed: { did: string; from: string; to: string } | null;
  } | null;
  missing: { from: number; to: number } | null;
  withheld: { did: string; handle: string; device: string; from: number; to: number } | null;
  rich: {
    type: "reply" | "reaction" | "edit" | "unknown";
    to: { did: string; clientMsgId: string } | null;
    emoji: string | null;
    remove: boolean;
  } | null;
  clientMsgId: string | null;
}

/** Every event names its channel. */
interface InChannel {
  channelId: string;
  /** The channel's name (without `#`). */
  channel: string | null;
}

export type ItemEvent = { type: "item" } & InChannel & Item;
export type RemovedEvent = { type: "removed"; reason: "kicked" | "left" | "removed" } & InChannel;
export type InvitedEvent = {
  type: "invited";
  channelType: "public" | "invite" | "secret";
  from: Person;
} & InChannel;
export type KeyChangedEvent = { type: "key-changed"; did: string; handle: string } & InChannel;
export type SubscribedEvent = { type: "subscribed" } & InChannel;
export type WarningEvent = {
  type: "warning";
  check: string;
  epochNumber: number | null;
  did: string | null;
  handle: string | null;
  text: string;
} & InChannel;

/** One line of `listen --json` (and of `api --listen`, besides the answers). */
export type BotEvent = ItemEvent | RemovedEvent | InvitedEvent | KeyChangedEvent | SubscribedEvent | WarningEvent;

export interface ChannelInfo {
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

export interface MemberInfo {
  did: string;
  handle: string;
  isOwner: boolean;
  online: boolean;
  publicKey: string | null;
  fingerprint: string | null;
}

export interface UnreadInfo {
  channelId: string;
  channel: string;
  /** Messages from others after the read marker (among those loaded: see `complete`). */
  unread: number;
  /** How many of them mention the bot as `@handle`. */
  mentions: number;
  lastReadSeq: number;
  lastSeq: number;
  /** false when the marker is older than what was loaded: `unread` is then a lower bound. */
  complete: boolean;
}

/** A message named by its `uri` or its `seq` (among the channel's last 1,000 records). */
export type MessageRef = string | number;

/** Each method of `wsync api`: its params and its result. */
export interface Methods {
  whoami: { params: Record<string, never>; result: { did: string; handle: string; email: string; publicKey: string | null } };
  list: { params: Record<string, never>; result: ChannelInfo[] };
  read: { params: { channel: string; limit?: number }; result: Item[] };
  send: { params: { channel: string; text: string }; result: Item };
  reply: { params: { channel: string; to: MessageRef; text: string }; result: Item };
  react: { params: { channel: string; to: MessageRef; emoji: string; remove?: boolean }; result: Item };
  edit: { params: { channel: string; to: MessageRef; text: string }; result: Item };
  delete: { params: { channel: string; to: MessageRef }; result: { uri: string; deleted: true } };
  join: { params: { channel: string }; result: ChannelInfo };
  leave: { params: { channel: string }; result: { channelId: string; left: true } };
  invite: { params: { channel: string; handle: string }; result: { channelId: string; handle: string; invited: true } };
  kick: { params: { channel: string; handle: string }; result: { channelId: string; did: string; handle: string; kicked: true } };
  members: { params: { channel: string }; result: MemberInfo[] };
  unread: { params: { channel?: string }; result: UnreadInfo[] };
  markRead: { params: { channel: string; seq?: number }; result: { channelId: string; lastReadSeq: number } };
}

export type Method = keyof Methods;

/** An error answer: `code` is the exit code the same command would end with (docs/cli.md). */
export interface ApiErrorBody {
  code: number;
  message: string;
  /** Seconds to wait, for a rate-limit answer. */
  retryAfter?: number;
}
