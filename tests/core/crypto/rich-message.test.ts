/**
 * Replies, reactions and edits (docs/protocol-extensions.md): inside the encrypted, signed plaintext;
 * parsed strictly; and the rules every client applies on receipt (only the author edits; a reaction
 * counts once per person; unverified ones count for nothing).
 */
import { describe, expect, test } from "bun:test";
import { presentTimeline } from "../../../core/client/channel/rich.ts";
import { richOf } from "../../../core/client/channel/timeline.ts";
import type { TimelineItem } from "../../../core/client/view/state.ts";
import {
  decryptMessage,
  encryptMessage,
  generateEpochKey,
  newClientMsgId,
  newEpochId,
  utf8,
} from "../../../core/crypto/index.ts";
import { parsePlaintext } from "../../../core/crypto/message-format.ts";
import { CHANNEL, type TestUser, testUser } from "./fixtures.ts";

const [alice, bob, mallory] = (await Promise.all([testUser(1), testUser(2), testUser(3)])) as [
  TestUser,
  TestUser,
  TestUser,
];
const epochKey = generateEpochKey();
const epochId = newEpochId();
const ref = (u: TestUser, id: string) => ({ did: u.did, clientMsgId: id });

describe("rich plaintexts", () => {
  test("a reply, a reaction and an edit travel encrypted and signed, and come back as sent", async () => {
    const target = ref(alice, newClientMsgId());
    for (const body of [
      { type: "reply" as const, text: "indeed", to: target },
      { type: "reaction" as const, to: target, emoji: "👍" },
      { type: "reaction" as const, to: target, emoji: "👍", remove: true as const },
      { type: "edit" as const, text: "fixed typo", to: target },
    ]) {
      const sealed = await encryptMessage({
        identity: bob.identity,
        senderDid: bob.did,
        channelId: CHANNEL,
        epochId,
        epochNumber: 1,
        epochKey,
        text: (body as { text?: string }).text ?? "",
        body,
      });
      // Nothing of it is readable without the key.
      expect(sealed.contentJson).not.toContain("indeed");
      expect(sealed.contentJson).not.toContain(alice.did);
      const opened = await decryptMessage({
        contentJson: sealed.contentJson,
        channelId: CHANNEL,
        recordAuthorDid: bob.did,
        epochKey,
        senderPublicKey: bob.publicKey,
      });
      expect(opened.verified).toBe(true);
      expect(opened.plaintext).toEqual(body);
    }
  });

  test("malformed ones are refused; an unknown type is known as unknown, not as text", () => {
    const parse = (v: unknown) => parsePlaintext(utf8(JSON.stringify(v)));
    const to = ref(alice, newClientMsgId());
    expect(parse({ type: "future-thing", x: 1 })).toEqual({ type: "unknown", kind: "future-thing" });
    for (const bad of [
      { type: "reply", text: "x", to: { did: "nope", clientMsgId: to.clientMsgId } },
      { type: "reply", text: "x", to: { ...to, extra: 1 } },
      { type: "reply", to },
      { type: "edit", text: 5, to },
      { type: "reaction", to, emoji: "hello" },
      { type: "reaction", to, emoji: "👍", remove: false },
      { type: "reaction", to, emoji: "" },
      ["text", "hi"],
    ])
      expect(() => parse(bad)).toThrow();
  });
});

describe("the rules clients apply", () => {
  let seq = 0;
  const item = (author: TestUser, over: Partial<TimelineItem> = {}): TimelineItem => ({
    uri: `u${++seq}`,
    seq,
    kind: "message",
    author: { did: author.did, handle: `${author.did.slice(-4)}.test` },
    createdAt: new Date(seq * 1000).toISOString(),
    text: null,
    state: "success",
    verified: true,
    error: null,
    clientMsgId: newClientMsgId(),
    ...over,
  });
  const richItem = (author: TestUser, body: Parameters<typeof richOf>[0], over: Partial<TimelineItem> = {}) =>
    item(author, { text: "text" in body ? body.text : null, ...richOf(body), ...over });

  test("only the author's verified edits change a message; the newest wins", () => {
    const original = item(alice, { text: "teh original" });
    const to = ref(alice, original.clientMsgId as string);
    const rows = presentTimeline(
      [
        original,
        richItem(alice, { type: "edit", text: "the original", to }),
        richItem(mallory, { type: "edit", text: "mallory was here", to }),
        richItem(alice, { type: "edit", text: "forged by the server", to }, { verified: false }),
      ],
      bob.did,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.text).toBe("the original");
    expect(rows[0]?.edited).toBe(true);
    const later = presentTimeline(
      [
        original,
        richItem(alice, { type: "edit", text: "v2", to }),
        richItem(alice, { type: "edit", text: "v3", to }),
      ],
      bob.did,
    );
    expect(later[0]?.text).toBe("v3");
  });

  test("reactions count once per person and emoji; a remove takes one back", () => {
    const m = item(alice, { text: "lunch?" });
    const to = ref(alice, m.clientMsgId as string);
    const rows = presentTimeline(
      [
        m,
        richItem(bob, { type: "reaction", to, emoji: "👍" }),
        richItem(bob, { type: "reaction", to, emoji: "👍" }),
        richItem(mallory, { type: "reaction", to, emoji: "👍" }),
        richItem(mallory, { type: "reaction", to, emoji: "🎉" }),
        richItem(mallory, { type: "reaction", to, emoji: "🎉", remove: true }),
        richItem(alice, { type: "reaction", to, emoji: "🎉" }, { verified: false }),
      ],
      bob.did,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.reactions).toEqual([{ emoji: "👍", count: 2, mine: true }]);
  });

  test("a reply shows what it answers when it is loaded", () => {
    const q = item(alice, { text: "who is in?" });
    const r = richItem(bob, { type: "reply", text: "me", to: ref(alice, q.clientMsgId as string) });
    const orphan = richItem(bob, { type: "reply", text: "and me", to: ref(alice, newClientMsgId()) });
    const rows = presentTimeline([q, r, orphan], bob.did);
    expect(rows[1]?.replyTo).toEqual({ loaded: true, author: q.author, text: "who is in?" });
    expect(rows[2]?.replyTo).toEqual({ loaded: false });
  });
});
