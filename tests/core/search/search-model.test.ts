/**
 * Issue 32: the query model every search index shares: tokenizing (Unicode, accents, case, prefixes,
 * substrings), the query syntax, and how edits and deletions (signed or not) change what is indexed.
 */
import { describe, expect, test } from "bun:test";
import type { TimelineItem } from "../../../core/client/index.ts";
import {
  changeOf,
  currentText,
  docMatches,
  MemoryIndex,
  matchRanges,
  normalize,
  parseQuery,
  termMatches,
  tokenize,
  utcDayStart,
} from "../../../core/search/index.ts";

const ALICE = { did: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", handle: "alice.example.com" };
const BOB = { did: "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb", handle: "bob.example.com" };
let n = 0;
const id = () => (n++).toString(16).padStart(32, "0");

function msg(text: string | null, over: Partial<TimelineItem> = {}): TimelineItem {
  const seq = over.seq ?? ++n;
  return {
    uri: `wsync://c/${seq}`,
    seq,
    kind: "message",
    author: ALICE,
    createdAt: "2026-10-05T12:00:00.000Z",
    signedAt: "2026-10-05T12:00:00.000Z",
    text,
    state: "success",
    verified: true,
    error: null,
    clientMsgId: id(),
    ...over,
  };
}

function edit(of: TimelineItem, text: string, prev: string | null, over: Partial<TimelineItem> = {}) {
  return msg(text, {
    author: of.author,
    rich: { type: "edit", to: { did: of.author.did, clientMsgId: of.clientMsgId as string }, prev },
    ...over,
  });
}

describe("tokenizing", () => {
  test("accents, case and compatibility forms fold away", () => {
    expect(normalize("Café CRÈME")).toBe("cafe creme");
    expect(normalize("ｃａｆé")).toBe("cafe");
    expect(normalize("Ångström")).toBe("angstrom");
    expect(tokenize("Grüße, señor! Zoë's 2 ΆΛΦΑ")).toEqual(["grusse", "senor", "zoe", "s", "2", "αλφα"]);
  });

  test("ß folds to ss (capital ẞ too), and a match ending inside it marks the whole letter", () => {
    expect(normalize("Straße")).toBe("strasse");
    expect(normalize("STRASSE")).toBe("strasse");
    expect(normalize("GROẞ")).toBe("gross");
    expect(parseQuery("Straße").terms).toEqual(["strasse"]);
    expect(termMatches(normalize("strasse"), normalize("Die Straße ist nass"))).toBe(true);
    const text = "Die Straße ist nass";
    const mark = (term: string) => matchRanges(text, [normalize(term)]).map(([s, e]) => text.slice(s, e));
    expect(mark("strasse")).toEqual(["Straße"]);
    expect(mark("stras")).toEqual(["Straß"]);
    expect(mark("sse")).toEqual(["ße"]);
  });

  test("words in any script; punctuation and emoji separate them", () => {
    expect(tokenize("日本語のテキスト🙂hello-world")).toEqual(["日本語のテキスト", "hello", "world"]);
    expect(tokenize("привет, МИР")).toEqual(["привет", "мир"]);
  });

  test("a term matches a word, a word's beginning, and from three characters anywhere", () => {
    const t = normalize("Deploying the Kubernetes cluster");
    expect(termMatches("deploying", t)).toBe(true);
    expect(termMatches("de", t)).toBe(true); // prefix
    expect(termMatches("ber", t)).toBe(true); // substring of 3
    expect(termMatches("er", t)).toBe(false); // 2 characters match word beginnings only
    expect(termMatches("cl", t)).toBe(true);
    expect(termMatches("clusters", t)).toBe(false);
  });

  test("match ranges point into the original text, accents and all", () => {
    const text = "Le Café est ouvert";
    const [r] = matchRanges(text, [normalize("cafe")]);
    expect(text.slice(...(r as [number, number]))).toBe("Café");
    expect(matchRanges("ab abc", ["ab"]).map(([s, e]) => "ab abc".slice(s, e))).toEqual(["ab", "ab"]);
    expect(matchRanges("crab", ["ab"])).toEqual([]); // a 2-character term is not a substring match
  });
});

describe("query syntax", () => {
  test("words, phrases and every filter", () => {
    const q = parseQuery(
      'Déploy "rolling Update" in:#Ops from:@Alice before:2026-10-10 after:2026-10-01 has:file',
      utcDayStart,
    );
    expect(q.terms).toEqual(["deploy", "rolling update"]);
    expect(q.in).toEqual(["ops"]);
    expect(q.from).toEqual(["alice"]);
    // before: excludes the day; after: excludes the day (Slack's meaning).
    expect(q.before).toBe(Date.UTC(2026, 9, 10));
    expect(q.after).toBe(Date.UTC(2026, 9, 2));
    expect(q.hasFile).toBe(true);
    expect(q.errors).toEqual([]);
  });

  test("bad values are reported, not fatal; a colon inside a word is a word", () => {
    const q = parseQuery("before:2026-13-01 after:yesterday has:pdf meet at 10:30", utcDayStart);
    expect(q.before).toBeNull();
    expect(q.after).toBeNull();
    expect(q.hasFile).toBe(false);
    expect(q.errors).toHaveLength(3);
    expect(q.terms).toEqual(["meet", "at", "10 30"]);
  });

  test("during: is one day", () => {
    const q = parseQuery("during:2026-02-28", utcDayStart);
    expect(q.after).toBe(Date.UTC(2026, 1, 28));
    expect(q.before).toBe(Date.UTC(2026, 2, 1));
  });

  test("filters select by channel name or id, handle (with or without suffix), date, file", () => {
    const doc = {
      channelId: "c1",
      channelName: "Ops",
      authorHandle: "alice.example.com",
      signedAt: Date.UTC(2026, 9, 5, 12),
      hasFile: false,
      normText: normalize("the release is out"),
    };
    const m = (s: string) => docMatches(doc, parseQuery(s, utcDayStart));
    expect(m("release in:#ops")).toBe(true);
    expect(m("release in:c1")).toBe(true);
    expect(m("release in:#dev")).toBe(false);
    expect(m("from:alice")).toBe(true);
    expect(m("from:alice.example.com")).toBe(true);
    expect(m("from:ali")).toBe(false);
    expect(m("after:2026-10-04 before:2026-10-06")).toBe(true);
    expect(m("after:2026-10-05")).toBe(false);
    expect(m("before:2026-10-05")).toBe(false);
    expect(m("has:file")).toBe(false);
    expect(m('"is out"')).toBe(true);
    expect(m('"out is"')).toBe(false);
  });
});

describe("what is indexed, and how edits and deletions change it", () => {
  test("notices, reactions, pending, failed and sending items are not indexed", () => {
    expect(changeOf("c", msg("x", { kind: "notify" }))).toBeNull();
    expect(changeOf("c", msg(null, { state: "pending" }))).toBeNull();
    expect(changeOf("c", msg(null, { state: "failed", error: "nope" }))).toBeNull();
    expect(changeOf("c", msg("hi", { sending: true }))).toBeNull();
    const target = msg("hello");
    expect(
      changeOf(
        "c",
        msg(null, {
          rich: { type: "reaction", to: { did: ALICE.did, clientMsgId: target.clientMsgId as string } },
        }),
      ),
    ).toBeNull();
    expect(changeOf("c", msg("hello"))?.op).toBe("message");
  });

  test("a file message is indexed with has:file (read loosely), its name searchable", () => {
    const withFile = { ...msg(null), file: { name: "Budget-2026.xlsx" } } as TimelineItem;
    const ix = new MemoryIndex();
    ix.applyItems("c", [withFile, msg("no file here")]);
    expect(ix.search(parseQuery("has:file")).map((h) => h.text)).toEqual(["Budget-2026.xlsx"]);
    expect(ix.search(parseQuery("budget")).length).toBe(1);
  });

  test("an edit replaces the searchable text, in whatever order edit and message arrive", () => {
    const original = msg("meeting on tuesday");
    const e1 = edit(original, "meeting on wednesday", null, { signedAt: "2026-10-05T12:01:00.000Z" });
    const e2 = edit(original, "meeting on thursday", e1.clientMsgId as string, {
      signedAt: "2026-10-05T12:02:00.000Z",
    });
    for (const order of [
      [original, e1, e2],
      [e2, e1, original],
      [e1, original, e2],
    ]) {
      const ix = new MemoryIndex();
      ix.applyItems("c", order);
      expect(ix.search(parseQuery("tuesday"))).toEqual([]);
      expect(ix.search(parseQuery("wednesday"))).toEqual([]);
      const [hit] = ix.search(parseQuery("thursday"));
      expect(hit?.edited).toBe(true);
      expect(hit?.message.uri).toBe(original.uri);
      expect(ix.size).toBe(1);
    }
  });

  test("an edit by someone else, or unverified, changes nothing (as the timeline shows)", () => {
    const original = msg("the plan stands");
    const forged = edit(original, "the plan is cancelled", null, { author: BOB });
    // An edit naming Alice's message but signed by Bob: changeOf refuses it.
    forged.rich = {
      type: "edit",
      to: { did: ALICE.did, clientMsgId: original.clientMsgId as string },
      prev: null,
    };
    const unverified = edit(original, "the plan is cancelled", null, { verified: false });
    const ix = new MemoryIndex();
    ix.applyItems("c", [original, forged, unverified]);
    expect(ix.search(parseQuery("cancelled"))).toEqual([]);
    expect(ix.search(parseQuery("stands")).length).toBe(1);
  });

  test("deleting an edit brings back the text before it", () => {
    const original = msg("version one");
    const e1 = edit(original, "version two", null);
    const ix = new MemoryIndex();
    ix.applyItems("c", [original, e1]);
    expect(ix.search(parseQuery("two")).length).toBe(1);
    ix.apply(
      changeOf("c", { ...e1, text: null, deleted: { did: ALICE.did, handle: ALICE.handle, signed: true } }),
    );
    expect(ix.search(parseQuery("two"))).toEqual([]);
    expect(ix.search(parseQuery("one")).length).toBe(1);
  });

  test("a signed deletion and a server's unsigned one both remove the message", () => {
    const a = msg("secret launch codes");
    const b = msg("secret recipe");
    const ix = new MemoryIndex();
    ix.applyItems("c", [a, b]);
    expect(ix.search(parseQuery("secret")).length).toBe(2);
    // Signed: the engine clears the text. Unsigned (the server's word): the text stays on the item,
    // but the timeline shows it deleted, so search drops it too.
    ix.apply(
      changeOf("c", { ...a, text: null, deleted: { did: ALICE.did, handle: ALICE.handle, signed: true } }),
    );
    ix.apply(changeOf("c", { ...b, deleted: { did: "", handle: "the server", signed: false } }));
    expect(ix.search(parseQuery("secret"))).toEqual([]);
    expect(ix.size).toBe(0);
  });

  test("channel scoping: in: and a dropped channel", () => {
    const ix = new MemoryIndex();
    ix.applyItems("c1", [msg("deploy friday")]);
    ix.applyItems("c2", [msg("deploy monday")]);
    const names = (id: string) => ({ c1: "ops", c2: "dev" })[id] ?? null;
    expect(ix.search(parseQuery("deploy"), names).length).toBe(2);
    expect(ix.search(parseQuery("deploy in:#dev"), names).map((h) => h.text)).toEqual(["deploy monday"]);
    ix.dropChannel("c2");
    expect(ix.search(parseQuery("deploy"), names).map((h) => h.text)).toEqual(["deploy friday"]);
  });

  test("currentText follows the signed chain: a conflict shows the later by signed time", () => {
    const original = msg("a");
    const m = changeOf("c", original);
    if (m?.op !== "message") throw new Error("not indexed");
    const e1 = changeOf("c", edit(original, "b", null, { signedAt: "2026-10-05T12:01:00.000Z" }));
    const e2 = changeOf("c", edit(original, "c", null, { signedAt: "2026-10-05T12:02:00.000Z" }));
    if (e1?.op !== "edit" || e2?.op !== "edit") throw new Error("not edits");
    expect(currentText(m.message, [e2.edit, e1.edit]).text).toBe("c");
    expect(currentText(m.message, []).text).toBe("a");
  });
});
