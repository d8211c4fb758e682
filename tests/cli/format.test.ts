/**
 * The CLI's formatters over fixture items of every protocol v2 kind: the human lines of `read` and
 * `tail`, and the JSON shapes docs/cli.md documents (scripts depend on them).
 */
import { describe, expect, test } from "bun:test";
import stringWidth from "string-width";
import {
  itemJson,
  itemLine,
  sendBlockedText,
  time,
  viewLines,
  warningJson,
  warningKey,
  warningLine,
} from "../../cli/format.ts";
import { SecurityText, type TimelineItem } from "../../core/client/index.ts";
import { MARK_WIDTHS } from "../../core/export/rows.ts";
import {
  ALICE,
  BOB,
  CAROL,
  CHANNEL_ID,
  EPOCH,
  fixtures,
  fixtureView,
  SIGNED_TIME,
  warnings,
} from "./fixtures.ts";

const ITEM_KEYS = [
  "action",
  "author",
  "clientMsgId",
  "createdAt",
  "deleted",
  "epoch",
  "error",
  "file",
  "kind",
  "missing",
  "notes",
  "rich",
  "seq",
  "signedAt",
  "state",
  "text",
  "uri",
  "verified",
  "withheld",
];
const WARNING_KEYS = ["channelId", "check", "did", "epochNumber", "handle", "text", "type"];
const keysOf = (o: object) => Object.keys(o).sort();
const signed = `[${time(SIGNED_TIME)}]`;

describe("human lines", () => {
  test("the marks' widths, known without measuring, are string-width's own", () => {
    expect(Object.keys(MARK_WIDTHS).sort()).toEqual(["?", "✓", "✗"].sort());
    for (const [mark, width] of Object.entries(MARK_WIDTHS))
      expect({ mark, width }).toEqual({ mark, width: stringWidth(mark) });
  });

  test("a message shows its signed time, not the server's, and its mark", () => {
    expect(itemLine(fixtures.verified)).toBe(`${signed} (${fixtures.verified.seq}) alice.test ✓ hello world`);
    expect(itemLine(fixtures.failed)).toBe(
      `[${time(fixtures.failed.createdAt)}] (${fixtures.failed.seq}) alice.test ✗ <Message encrypted before you joined (forward secrecy)>`,
    );
  });

  test("notes follow the text in brackets, in SecurityText's words", () => {
    expect(itemLine(fixtures.legacy)).toBe(
      `${signed} (${fixtures.legacy.seq}) alice.test ✓ from v1 [legacy key binding]`,
    );
    expect(itemLine(fixtures.replay)).toBe(
      `${signed} (${fixtures.replay.seq}) alice.test ? again [replay of an earlier message] [out of order (possible replay)]`,
    );
    const line = itemLine(fixtures.allNotes);
    for (const n of ["not-a-member", "outside-epoch", "handle-mismatch"] as const) {
      expect(line).toContain(`[${SecurityText.note[n]}]`);
    }
    expect(line).toContain(" ? suspicious");
  });

  test("deleted rows name the signer, or say the server removed it without a signature", () => {
    expect(itemLine(fixtures.deletedSigned)).toEndWith(
      `bob.test ∅ <${SecurityText.deletedBy(ALICE.handle)}>`,
    );
    const unsigned = itemLine(fixtures.deletedUnsigned);
    expect(unsigned).toEndWith(`bob.test ∅ <${SecurityText.deletedUnsigned}>`);
    // An unsigned deletion's claimed deleter is not shown: the server could have made it up.
    expect(unsigned).not.toContain(CAROL.handle);
  });

  test("epoch, missing and notice rows", () => {
    const epoch = itemLine(fixtures.epoch);
    expect(epoch).toContain(`⟳ ${SecurityText.epochChange(EPOCH)}`);
    expect(epoch).toContain(
      "alice.test's client added bob.test (by link; this device cannot check the link)",
    );
    expect(epoch).toContain("removed carol.test");
    expect(epoch).toContain("made a new secret link (epoch 3)");
    // A missing row has no time: a placeholder of the same width keeps the columns.
    expect(itemLine(fixtures.missing)).toBe(`[---------- --:--] ⋯ ${SecurityText.missing}: seqs 10-12`);
    expect(time(SIGNED_TIME)).toHaveLength("---------- --:--".length);
    expect(itemLine(fixtures.missingOne)).toEndWith(`⋯ ${SecurityText.missing}: seq 14`);
    expect(itemLine(fixtures.notify)).toEndWith("→ bob.test joined");
  });

  test("read: items, then each warning with ⚠, then the send-blocked line", () => {
    const items = Object.values(fixtures);
    const lines = viewLines(items, fixtureView());
    expect(lines.slice(0, items.length)).toEqual(items.map(itemLine));
    expect(lines.slice(items.length)).toEqual([
      `⚠ ${warnings[0]?.text}`,
      `⚠ ${warnings[1]?.text}`,
      `⚠ ${SecurityText.sendBlocked}`,
    ]);
    expect(viewLines(items, fixtureView({ warnings: [], sendBlocked: false }))).toHaveLength(items.length);
  });

  test("a message's lines stay lines, indented under its text; tabs are spaces; escapes never pass", () => {
    const text = "line one\nline two\twith a tab\r\n\u001b[2J\u001b]0;title\u0007\u009b31mred";
    const line = itemLine({ ...fixtures.verified, text });
    const [first, second, third] = line.split("\n");
    expect(first).toEndWith("✓ line one");
    const at = (first as string).indexOf("line one");
    expect(second).toBe(`${" ".repeat(at)}line two    with a tab`);
    expect((third as string).slice(0, at).trim()).toBe("");
    // ESC, BEL and the C1 CSI never reach the terminal, on any line; no line break inside one.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: that they never pass is the point.
    expect(line).not.toMatch(/[\u001b\u0007\u009b\t\r]/);
    expect(line.split("\n")).toHaveLength(3);
    // listen puts `#channel ` before the row: the continuation lines move with it.
    const listened = itemLine({ ...fixtures.verified, text: "a\nb" }, 4);
    const [head, next] = listened.split("\n") as [string, string];
    expect(next).toBe(`${" ".repeat(4 + head.length - 1)}b`);
  });

  test("control characters from the server never reach the terminal", () => {
    const evil = {
      ...fixtures.epoch,
      epoch: { ...EPOCH, creator: { ...ALICE, handle: "x\u001b[2Jy" } },
    };
    expect(itemLine(evil)).not.toContain("\u001b");
    const w = { ...warnings[0], text: "bad\u001b]0;title\u0007" } as (typeof warnings)[0];
    expect(warningLine(w)).not.toContain("\u001b");
  });

  test("a refused send names the failed check, not an informative warning", () => {
    expect(sendBlockedText(fixtureView())).toBe(warnings[0]?.text as string);
    // With only a key change on record, that is still the best explanation there is.
    expect(sendBlockedText({ warnings: [warnings[1] as (typeof warnings)[0]] })).toBe(
      warnings[1]?.text as string,
    );
    expect(sendBlockedText({ warnings: [] })).toBe(SecurityText.sendBlocked);
  });
});

describe("JSON", () => {
  test("every item has every field; absent ones are null or []", () => {
    for (const i of Object.values(fixtures)) expect(keysOf(itemJson(i))).toEqual(ITEM_KEYS);
    expect(itemJson(fixtures.notify)).toMatchObject({
      kind: "notify",
      action: "joined",
      notes: [],
      signedAt: null,
      deleted: null,
      epoch: null,
      missing: null,
    });
    // Without a notes field at all (a notice, an older engine), notes is still an array.
    expect(itemJson({ ...fixtures.verified, notes: undefined }).notes).toEqual([]);
  });

  test("messages carry signedAt, notes and verified", () => {
    expect(itemJson(fixtures.verified)).toMatchObject({
      kind: "message",
      state: "success",
      verified: true,
      signedAt: SIGNED_TIME,
      createdAt: fixtures.verified.createdAt,
      notes: [],
    });
    expect(itemJson(fixtures.legacy).notes).toEqual(["legacy"]);
    expect(itemJson(fixtures.replay)).toMatchObject({ verified: false, notes: ["replay", "out-of-order"] });
    expect(itemJson(fixtures.allNotes).notes).toEqual(["not-a-member", "outside-epoch", "handle-mismatch"]);
    expect(itemJson(fixtures.failed)).toMatchObject({
      state: "failed",
      text: null,
      error: fixtures.failed.error,
    });
  });

  test("deleted, epoch and missing objects", () => {
    expect(itemJson(fixtures.deletedSigned).deleted).toEqual({
      did: ALICE.did,
      handle: ALICE.handle,
      signed: true,
    });
    expect(itemJson(fixtures.deletedUnsigned).deleted).toEqual({ ...CAROL, signed: false });
    expect(itemJson(fixtures.epoch)).toMatchObject({
      kind: "epoch",
      verified: true,
      text: SecurityText.epochChange(EPOCH),
      epoch: {
        epochNumber: 3,
        reason: "kick",
        creator: ALICE,
        added: [{ ...BOB, admission: "link-unchecked" }],
        removed: [CAROL],
        rekeyed: [],
        linkChanged: true,
      },
    });
    expect(itemJson(fixtures.missing)).toMatchObject({
      kind: "missing",
      createdAt: "",
      signedAt: null,
      missing: { from: 10, to: 12 },
    });
  });

  test("only documented fields: engine-internal additions do not leak", () => {
    const extra = { ...fixtures.epoch, isNew: true, clientMsgId: "x", sending: false };
    const out = itemJson({ ...extra, epoch: { ...EPOCH, internal: 1 } as never });
    expect(keysOf(out)).toEqual(ITEM_KEYS);
    expect(Object.keys(out.epoch ?? {})).not.toContain("internal");
  });

  test("warnings are typed objects with the check machine-readable", () => {
    const w = warningJson(warnings[0] as (typeof warnings)[0]);
    expect(keysOf(w)).toEqual(WARNING_KEYS);
    expect(w).toEqual({
      type: "warning",
      check: "rollback",
      channelId: CHANNEL_ID,
      epochNumber: 2,
      did: null,
      handle: null,
      text: SecurityText.warning("rollback", { epochNumber: 2 }),
    });
    expect(warningJson(warnings[1] as (typeof warnings)[0])).toMatchObject({
      check: "key-changed",
      did: BOB.did,
      handle: BOB.handle,
    });
    // One JSON line, round-tripping exactly.
    expect(JSON.parse(JSON.stringify(w))).toEqual(w);
  });

  test("a warning seen twice (view and event) has one key", () => {
    const [a, b] = warnings as [(typeof warnings)[0], (typeof warnings)[0]];
    expect(warningKey({ ...a })).toBe(warningKey(a));
    expect(warningKey(a)).not.toBe(warningKey(b));
  });
});

describe("replies, reactions and edits", () => {
  const to = { did: ALICE.did, clientMsgId: "a".repeat(32) };
  const base = { ...fixtures.verified, clientMsgId: "a".repeat(32), author: ALICE, text: "lunch at noon?" };
  const reply = {
    ...fixtures.verified,
    uri: "r",
    seq: 20,
    author: BOB,
    clientMsgId: "b".repeat(32),
    text: "yes",
    rich: { type: "reply" as const, to },
  };
  const react = {
    ...fixtures.verified,
    uri: "x",
    seq: 21,
    author: BOB,
    clientMsgId: "c".repeat(32),
    text: null,
    rich: { type: "reaction" as const, to, emoji: "👍" },
  };
  const edit = {
    ...fixtures.verified,
    uri: "e",
    seq: 22,
    author: ALICE,
    clientMsgId: "d".repeat(32),
    text: "lunch at one?",
    rich: { type: "edit" as const, to },
  };
  const forged = { ...edit, uri: "f", seq: 23, author: BOB, text: "bob rewrote it" };

  test("tail prints each as it comes; an edit of someone else's message is said to be ignored", () => {
    expect(itemLine(react)).toEndWith(`${BOB.handle} ✓ reacted 👍`);
    expect(itemLine(edit)).toEndWith(`${ALICE.handle} ✓ edited a message: lunch at one?`);
    expect(itemLine(forged)).toContain("an edit of someone else's message, ignored");
    expect(itemLine(reply)).toEndWith(`${BOB.handle} ✓ ↳ yes`);
  });

  test("read applies them: the author's edit, the count, the quote; the forged edit changes nothing", () => {
    const lines = viewLines([base, reply, react, edit, forged], { warnings: [], sendBlocked: false });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toEndWith(`${ALICE.handle} ✓ lunch at one? (edited) [👍 1]`);
    expect(lines[1]).toEndWith(`${BOB.handle} ✓ ↳ alice: "lunch at one?" yes`);
  });
});

describe("protocol v3 rows and checks (read, tail, listen)", () => {
  const keyChange = (signed: boolean): TimelineItem => ({
    ...fixtures.epoch,
    uri: "epoch:5",
    epoch: {
      ...EPOCH,
      epochNumber: 5,
      reason: "key-change",
      added: [],
      removed: [],
      linkChanged: false,
      rekeyed: [BOB],
      creator: BOB,
      keyChange: { ...BOB, signed },
    },
  });
  const withheld = {
    ...fixtures.missing,
    uri: `withheld:${BOB.did}:ab12:4-5`,
    missing: undefined,
    author: BOB,
    text: SecurityText.withheld(2, BOB.handle),
    error: SecurityText.withheld(2, BOB.handle),
    withheld: { ...BOB, device: "ab12", from: 4, to: 5 },
  };

  test("a key change its old key did not sign is a ⚠ row; a signed one is a neutral ⟳ row", () => {
    const at = `[${time(fixtures.epoch.createdAt)}]`;
    expect(itemLine(keyChange(false))).toBe(
      `${at} ⚠ bob.test's key changed: compare safety numbers (epoch 5)`,
    );
    expect(itemLine(keyChange(true))).toBe(
      `${at} ⟳ bob.test moved to a new key, signed by the previous one (epoch 5)`,
    );
    expect(itemJson(keyChange(false)).epoch).toMatchObject({
      reason: "key-change",
      keyChange: { ...BOB, signed: false },
      renamed: null,
    });
    expect(itemJson(fixtures.epoch).epoch).toMatchObject({ keyChange: null, renamed: null });
  });

  test("withheld chain numbers: the row in place, with who and how many; JSON has `withheld`", () => {
    expect(itemLine(withheld)).toBe(
      "[---------- --:--] ⋯ 2 messages from bob.test missing (withheld by the server)",
    );
    const json = itemJson(withheld);
    expect(keysOf(json)).toEqual(ITEM_KEYS);
    expect(json).toMatchObject({
      kind: "missing",
      missing: null,
      withheld: { ...BOB, device: "ab12", from: 4, to: 5 },
      text: "2 messages from bob.test missing (withheld by the server)",
    });
    expect(itemJson(fixtures.missing).withheld).toBeNull();
    const lines = viewLines([fixtures.verified, withheld], { warnings: [], sendBlocked: false });
    expect(lines[1]).toContain("2 messages from bob.test missing");
  });

  test("every v3 check is named in JSON; fresh-device, withheld and deletion do not explain a blocked send", () => {
    for (const check of ["member-key", "withheld", "deletion", "fresh-device"] as const) {
      const w = {
        check,
        channelId: CHANNEL_ID,
        epochNumber: 4,
        did: BOB.did,
        handle: BOB.handle,
        text: SecurityText.warning(check, { epochNumber: 4, handle: BOB.handle, detail: "2026-11-22" }),
      };
      expect(warningJson(w)).toMatchObject({ type: "warning", check, text: w.text });
      expect(warningLine(w)).toBe(`⚠ ${w.text}`);
    }
    const fresh = {
      check: "fresh-device" as const,
      channelId: CHANNEL_ID,
      epochNumber: null,
      did: null,
      handle: null,
      text: SecurityText.warning("fresh-device", { detail: "2026-11-22" }),
    };
    expect(fresh.text).toContain("verified from the server's word since 2026-11-22");
    const memberKey = { ...fresh, check: "member-key" as const, text: "member-key text" };
    expect(sendBlockedText({ warnings: [memberKey, fresh] })).toBe("member-key text");
  });
});
