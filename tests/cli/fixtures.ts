/**
 * Timeline items and warnings of every protocol v2 kind, as the engine hands them to the CLI, for
 * the formatter and screen tests (no server needed).
 */
import type { ChannelView, EpochChange, SecurityWarning, TimelineItem } from "../../core/client/index.ts";
import { SecurityText } from "../../core/client/index.ts";

export const ALICE = { did: "did:plc:alice", handle: "alice.test" };
export const BOB = { did: "did:plc:bob", handle: "bob.test" };
export const CAROL = { did: "did:plc:carol", handle: "carol.test" };
export const CHANNEL_ID = "7v7vk3ikf7srrj24";

const SERVER_TIME = "2026-11-22T00:46:20.238Z";
/** Different from the server's time, so a test can tell which one a row shows. */
export const SIGNED_TIME = "2026-11-21T18:05:00.000Z";

function item(seq: number, extra: Partial<TimelineItem>): TimelineItem {
  return {
    uri: `at://${ALICE.did}/chat.wsync.message/m${seq}`,
    seq,
    kind: "message",
    author: ALICE,
    createdAt: SERVER_TIME,
    text: null,
    state: "success",
    verified: false,
    error: null,
    ...extra,
  };
}

/** A kick that also let someone in by a link this device cannot check, and made a new link. */
export const EPOCH: EpochChange = {
  epochNumber: 3,
  reason: "kick",
  creator: ALICE,
  added: [{ ...BOB, admission: "link-unchecked" }],
  removed: [CAROL],
  rekeyed: [],
  linkChanged: true,
};

/** A run of withheld seqs: no author and no time, failed, the row's words as text and error. */
function missingItem(from: number, to: number): TimelineItem {
  return {
    ...item(from - 0.5, { kind: "missing", uri: `missing:${from}-${to}`, missing: { from, to } }),
    author: { did: "", handle: "" },
    createdAt: "",
    state: "failed",
    text: SecurityText.missing,
    error: SecurityText.missing,
  };
}

export const fixtures = {
  verified: item(1, { text: "hello world", verified: true, signedAt: SIGNED_TIME, notes: [] }),
  legacy: item(2, { text: "from v1", verified: true, signedAt: SIGNED_TIME, notes: ["legacy"] }),
  replay: item(3, { text: "again", signedAt: SIGNED_TIME, notes: ["replay", "out-of-order"] }),
  allNotes: item(4, {
    text: "suspicious",
    signedAt: SIGNED_TIME,
    notes: ["not-a-member", "outside-epoch", "handle-mismatch"],
  }),
  deletedSigned: item(5, { author: BOB, deleted: { ...ALICE, signed: true } }),
  deletedUnsigned: item(6, { author: BOB, deleted: { ...CAROL, signed: false } }),
  failed: item(7, { state: "failed", error: "Message encrypted before you joined (forward secrecy)" }),
  notify: item(8, { kind: "notify", author: BOB, action: "joined" }),
  // As the engine makes them: an epoch row from its signed commit, verified, its change in words.
  epoch: item(8.25, {
    kind: "epoch",
    uri: "epoch:3",
    verified: true,
    text: SecurityText.epochChange(EPOCH),
    epoch: EPOCH,
  }),
  missing: missingItem(10, 12),
  missingOne: missingItem(14, 14),
} satisfies Record<string, TimelineItem>;

export const warnings: SecurityWarning[] = [
  {
    check: "rollback",
    channelId: CHANNEL_ID,
    epochNumber: 2,
    did: null,
    handle: null,
    text: SecurityText.warning("rollback", { epochNumber: 2 }),
  },
  {
    check: "key-changed",
    channelId: CHANNEL_ID,
    epochNumber: null,
    did: BOB.did,
    handle: BOB.handle,
    text: SecurityText.warning("key-changed", { handle: BOB.handle }),
  },
];

/** A channel view around the fixtures; `over` replaces any field. */
export function fixtureView(over: Partial<ChannelView> = {}): ChannelView {
  return {
    channel: {
      id: CHANNEL_ID,
      uri: `at://${ALICE.did}/chat.wsync.channel/${CHANNEL_ID}`,
      value: {
        $type: "chat.wsync.channel",
        name: "ops",
        type: "secret",
        description: "",
        createdAt: SERVER_TIME,
      },
      owner: ALICE,
      memberCount: 2,
      messageCount: 7,
      lastActivity: SERVER_TIME,
      isMember: true,
      role: "owner",
    },
    members: [],
    items: Object.values(fixtures),
    hasMore: false,
    cursor: null,
    loading: false,
    loadingMore: false,
    epoch: null,
    keysLoaded: true,
    lastSeq: 14,
    warnings,
    sendBlocked: true,
    link: null,
    ...over,
  };
}
