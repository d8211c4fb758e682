/**
 * Issue 32: the CLI's SQLite search index (FTS5 words + prefixes, a trigram table for substrings)
 * answers as core's reference index does, keeps edits and deletions right, scopes by channel, is
 * 0600, and belongs to one account.
 */

import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { deleteSearchIndex, SearchIndex } from "../../cli/search-index.ts";
import type { TimelineItem } from "../../core/client/index.ts";
import { changeOf, MemoryIndex, orderKey, parseQuery, utcDayStart } from "../../core/search/index.ts";
import { ALICE, BOB, deleted, edit, expectSharpSFolds, msg } from "../support/search-items.ts";
import { cleanupTempDirs, tempDir } from "./cli-harness.ts";

afterAll(cleanupTempDirs);

function fresh(): SearchIndex {
  return new SearchIndex(join(tempDir("wsync-search-"), "localhost_3000.search.sqlite"));
}

const texts = (ix: SearchIndex, q: string, channelIds?: string[]) =>
  ix.search(parseQuery(q, utcDayStart), { channelIds }).map((h) => h.text);

describe("the SQLite index", () => {
  test("is created 0600 and deleted with its side files", () => {
    const ix = fresh();
    ix.applyAll([changeOf("c1", msg("hello"))]);
    expect(statSync(ix.path).mode & 0o777).toBe(0o600);
    ix.close();
    deleteSearchIndex(ix.path);
    expect(() => statSync(ix.path)).toThrow();
    expect(() => statSync(`${ix.path}-wal`)).toThrow();
  });

  test("words, prefixes, substrings of three, accents and case; all terms must match", () => {
    const ix = fresh();
    ix.applyAll(
      ["Le Café est ouvert", "Deploying the Kubernetes cluster", "an ERROR in prod", "résumé attached"].map(
        (t) => changeOf("c1", msg(t)),
      ),
    );
    expect(texts(ix, "cafe")).toEqual(["Le Café est ouvert"]);
    expect(texts(ix, "CAFÉ OUV")).toEqual(["Le Café est ouvert"]);
    expect(texts(ix, "de")).toEqual(["Deploying the Kubernetes cluster"]); // prefix
    expect(texts(ix, "ber")).toEqual(["Deploying the Kubernetes cluster"]); // substring
    expect(texts(ix, "er")).toEqual(["an ERROR in prod"]); // two letters: word beginnings only
    expect(texts(ix, "resume")).toEqual(["résumé attached"]);
    expect(texts(ix, "error cluster")).toEqual([]);
    expect(texts(ix, '"kubernetes cluster"')).toEqual(["Deploying the Kubernetes cluster"]);
    const [hit] = ix.search(parseQuery("cafe"));
    expect(hit?.text.slice(...(hit.ranges[0] as [number, number]))).toBe("Café");
  });

  test("ß and ss find each other, in the text and in the query", () => {
    expectSharpSFolds(fresh());
  });

  test("a message read again as it is indexed writes nothing; a change to any kept field is written", () => {
    const ix = fresh();
    const writes = () => (ix.db.query("SELECT total_changes() AS n").get() as { n: number }).n;
    const plain = msg("read again tomorrow");
    const noId = msg("sent without a client id", { clientMsgId: undefined, notes: ["legacy"] });
    ix.applyAll([changeOf("c1", plain), changeOf("c1", noId)]);
    const after = writes();
    ix.applyAll([changeOf("c1", plain), changeOf("c1", noId)]);
    expect(writes()).toBe(after);
    // Each change on top of the one before: every kept field in turn.
    const changes: [string, Partial<TimelineItem>][] = [
      ["verified", { verified: false }],
      ["notes", { notes: ["replay"] }],
      ["handle", { author: { ...ALICE, handle: "alice.other.example" } }],
      ["text", { text: "read again, then corrected" }],
      ["seq", { seq: plain.seq + 1000 }],
    ];
    let item = plain;
    for (const [field, change] of changes) {
      item = { ...item, ...change };
      const before = writes();
      ix.applyAll([changeOf("c1", item)]);
      expect({ field, written: writes() > before }).toEqual({ field, written: true });
    }
    const [hit] = ix.search(parseQuery("corrected"));
    expect(hit).toMatchObject({
      seq: plain.seq + 1000,
      verified: false,
      notes: ["replay"],
      author: { handle: "alice.other.example" },
    });
    expect(texts(ix, "tomorrow")).toEqual([]);
  });

  test("edits (in any order) and deletions, signed or not, keep it right", () => {
    const ix = fresh();
    const a = msg("meeting on tuesday");
    const e1 = edit(a, "meeting on wednesday", null);
    const e2 = edit(a, "meeting on thursday", e1.clientMsgId as string);
    ix.applyAll([changeOf("c1", e2), changeOf("c1", e1)]);
    expect(texts(ix, "meeting")).toEqual([]); // edits alone are not messages
    ix.apply(changeOf("c1", a));
    expect(texts(ix, "tuesday")).toEqual([]);
    expect(texts(ix, "wednesday")).toEqual([]);
    expect(ix.search(parseQuery("thursday")).map((h) => [h.text, h.edited])).toEqual([
      ["meeting on thursday", true],
    ]);
    // The last edit deleted: the one before it is the text again.
    ix.apply(changeOf("c1", deleted(e2, true)));
    expect(texts(ix, "meeting")).toEqual(["meeting on wednesday"]);
    // Deleting the message, by a signed deletion or the server's word, removes it.
    const b = msg("another meeting");
    ix.apply(changeOf("c1", b));
    ix.apply(changeOf("c1", deleted(a, true)));
    ix.apply(changeOf("c1", deleted(b, false)));
    expect(texts(ix, "meeting")).toEqual([]);
    expect(ix.size).toBe(0);
    // Indexing the same item twice is harmless (receipt and backfill overlap).
    const c = msg("twice");
    ix.applyAll([changeOf("c1", c), changeOf("c1", c)]);
    expect(texts(ix, "twice")).toEqual(["twice"]);
  });

  test("channel scoping: --channel, in:#name, and a channel dropped", () => {
    const ix = fresh();
    ix.setChannel("c1", "Ops");
    ix.setChannel("c2", "dev");
    ix.applyAll([
      changeOf("c1", msg("deploy friday")),
      changeOf("c2", msg("deploy monday", { author: BOB })),
    ]);
    expect(texts(ix, "deploy").sort()).toEqual(["deploy friday", "deploy monday"]);
    expect(texts(ix, "deploy", ["c2"])).toEqual(["deploy monday"]);
    expect(texts(ix, "deploy in:#ops")).toEqual(["deploy friday"]);
    expect(texts(ix, "deploy in:c2")).toEqual(["deploy monday"]);
    expect(texts(ix, "from:bob")).toEqual(["deploy monday"]);
    expect(texts(ix, "from:bob.example.com deploy")).toEqual(["deploy monday"]);
    expect(texts(ix, "from:bo")).toEqual([]);
    ix.dropChannel("c2");
    expect(texts(ix, "deploy")).toEqual(["deploy friday"]);
  });

  test("newest first by signed time whatever the order of arrival; same times, far times and date bounds", () => {
    const ix = fresh();
    const at = (iso: string, seq: number, text: string, uri = `at://x/t${seq}-${text}`) =>
      msg(text, { signedAt: iso, seq, uri });
    // A backfill brings the newest first; a message that shares its time and seq with another
    // (two channels) keeps its own row; an absurd signed time (the author's word) is still indexed.
    ix.applyAll([
      changeOf("c1", at("2026-03-02T10:00:00.000Z", 5, "alpha newest")),
      changeOf("c1", at("2026-03-01T10:00:00.000Z", 4, "alpha older")),
      changeOf("c2", at("2026-03-01T10:00:00.000Z", 4, "alpha twin")),
      changeOf("c1", at("2026-02-28T23:59:59.999Z", 3, "alpha edge")),
      changeOf("c1", at("2026-03-01T00:00:00.000Z", 2, "alpha midnight")),
      changeOf("c1", at("9999-12-31T00:00:00.000Z", 9, "alpha future")),
      changeOf("c1", at("1960-01-01T00:00:00.000Z", 1, "alpha past")),
    ]);
    const got = texts(ix, "alpha");
    expect(got[0]).toBe("alpha future");
    expect(got[1]).toBe("alpha newest");
    // The same time and seq: both, in either order.
    expect(new Set(got.slice(2, 4))).toEqual(new Set(["alpha older", "alpha twin"]));
    expect(got.slice(4)).toEqual(["alpha midnight", "alpha edge", "alpha past"]);
    // before: excludes the day itself; the last millisecond before it is in, midnight is out.
    expect(texts(ix, "alpha before:2026-03-01")).toEqual(["alpha edge", "alpha past"]);
    expect(texts(ix, "before:2026-03-01")).toEqual(["alpha edge", "alpha past"]);
    expect(texts(ix, "al after:2026-03-01")).toEqual(["alpha future", "alpha newest"]);
    expect(texts(ix, "alpha during:2026-03-01").sort()).toEqual([
      "alpha midnight",
      "alpha older",
      "alpha twin",
    ]);
    expect(orderKey(Date.parse("9999-12-31"), 2 ** 40)).toBeLessThan(Number.MAX_SAFE_INTEGER);
    expect(orderKey(-5, 1)).toBe(1);
    expect(orderKey(Number.NaN, Number.NaN)).toBe(0);
  });

  test("an index file of an earlier layout is emptied and rebuilt, not misread", () => {
    const path = join(tempDir("wsync-search-"), "localhost_3000.search.sqlite");
    const old = new Database(path);
    old.run("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    old.run("INSERT INTO meta VALUES ('did', 'did:plc:old')");
    old.run("CREATE TABLE messages (id INTEGER PRIMARY KEY, uri TEXT NOT NULL UNIQUE, text TEXT)");
    old.run("INSERT INTO messages (uri, text) VALUES ('at://x/old', 'stale')");
    old.close();
    const ix = new SearchIndex(path);
    expect(ix.size).toBe(0);
    ix.apply(changeOf("c1", msg("after the rebuild")));
    expect(texts(ix, "rebuild")).toEqual(["after the rebuild"]);
    ix.close();
    // Opened again at the current layout, it is kept.
    const again = new SearchIndex(path);
    expect(texts(again, "rebuild")).toEqual(["after the rebuild"]);
    again.close();
  });

  test("an index of layout 2 (ß not yet folded to ss) is emptied and rebuilt", () => {
    const ix = fresh();
    ix.apply(changeOf("c1", msg("die Straße")));
    ix.db.run("UPDATE meta SET value = '2' WHERE key = 'schema'");
    ix.close();
    const again = new SearchIndex(ix.path);
    expect(again.size).toBe(0);
    again.apply(changeOf("c1", msg("die Straße")));
    expect(texts(again, "strasse")).toEqual(["die Straße"]);
    again.close();
  });

  test("another account's index is emptied before use", () => {
    const ix = fresh();
    ix.claim(ALICE.did);
    ix.apply(changeOf("c1", msg("alice's words")));
    ix.claim(ALICE.did);
    expect(ix.size).toBe(1);
    ix.claim(BOB.did);
    expect(ix.size).toBe(0);
    expect(texts(ix, "words")).toEqual([]);
  });

  test("answers every query as core's reference index does", () => {
    const ix = fresh();
    const ref = new MemoryIndex();
    const words = [
      "über",
      "Straße",
      "naïve",
      "coöperate",
      "deploy",
      "deployment",
      "日本語",
      "ok",
      "go",
      "Zoë",
    ];
    const items: TimelineItem[] = [];
    for (let i = 0; i < 120; i++) {
      const text = Array.from({ length: 1 + (i % 5) }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(
        " ",
      );
      items.push(
        msg(text, {
          author: i % 3 ? ALICE : BOB,
          ...(i % 11 === 0 ? ({ file: { name: `report-${i}.pdf` } } as Partial<TimelineItem>) : {}),
        }),
      );
    }
    items.push(edit(items[4] as TimelineItem, "edited über alles", null));
    items.push(deleted(items[8] as TimelineItem, true));
    for (const i of items) {
      ix.apply(changeOf(i.uri.length % 2 ? "c1" : "c2", i));
      ref.apply(changeOf(i.uri.length % 2 ? "c1" : "c2", i));
    }
    const want = (query: ReturnType<typeof parseQuery>) =>
      ref.search(query, () => null, 1000).map((h) => h.message.uri);
    let found = 0;
    for (const q of [
      "uber",
      "ub",
      "strasse",
      "straße",
      "naive",
      "dep",
      "ploy",
      "日本",
      "ok go",
      "zoe",
      "from:bob deploy",
      "has:file",
      "report",
      "after:2026-10-03 before:2026-10-05",
      "edited",
      "in:c1 ok",
    ]) {
      const query = parseQuery(q, utcDayStart);
      found += want(query).length;
      const got = ix.search(query, { limit: 1000 }).map((h) => h.uri);
      expect({ q, got }).toEqual({ q, got: want(query) });
    }
    // The comparison is not between two empty answers.
    expect(found).toBeGreaterThan(200);
  });
});
