/**
 * Issue 32: the browser's search index (MiniSearch in the search worker) answers as core's reference
 * index does, keeps edits and deletions right, scopes by channel, and survives its own snapshot.
 */
import { describe, expect, test } from "bun:test";
import type { TimelineItem } from "../../../core/client/index.ts";
import { changeOf, MemoryIndex, parseQuery, utcDayStart } from "../../../core/search/index.ts";
import { FlexSearchPostings, WebIndex } from "../../../web/features/search/web-index.ts";
import { miniSearch } from "../../support/minisearch-postings.ts";
import { ALICE, BOB, deleted, edit, expectSharpSFolds, msg } from "../../support/search-items.ts";

const texts = (ix: WebIndex, q: string) => ix.search(parseQuery(q, utcDayStart)).map((h) => h.text);

// Both libraries the Chromium benchmark compares answer alike (core's MemoryIndex is the reference).
for (const [kind, make] of [
  ["flexsearch", undefined],
  ["minisearch", miniSearch],
] as const)
  describe(`the browser's index (${kind})`, () => {
    test("words, prefixes, substrings of three, accents and case; all terms must match", () => {
      const ix = new WebIndex(make);
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
      expect(texts(ix, '"ing the kube"')).toEqual(["Deploying the Kubernetes cluster"]); // across words
      const [hit] = ix.search(parseQuery("cafe"));
      expect(hit?.text.slice(...(hit.ranges[0] as [number, number]))).toBe("Café");
    });

    test("ß and ss find each other, in the text and in the query", () => {
      expectSharpSFolds(new WebIndex(make));
    });

    test("edits (in any order) and deletions, signed or not, keep it right", () => {
      const ix = new WebIndex(make);
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
      ix.apply(changeOf("c1", deleted(e2, true)));
      expect(texts(ix, "meeting")).toEqual(["meeting on wednesday"]);
      expect(texts(ix, "thurs")).toEqual([]);
      const b = msg("another meeting");
      ix.apply(changeOf("c1", b));
      ix.apply(changeOf("c1", deleted(a, true)));
      ix.apply(changeOf("c1", deleted(b, false)));
      expect(texts(ix, "meeting")).toEqual([]);
      expect(ix.size).toBe(0);
      const c = msg("twice");
      ix.applyAll([changeOf("c1", c), changeOf("c1", c)]);
      expect(texts(ix, "twice")).toEqual(["twice"]);
      // An edit in another channel does not touch a message here.
      ix.apply(changeOf("c2", edit(c, "elsewhere", null)));
      expect(texts(ix, "twice")).toEqual(["twice"]);
    });

    test("channel scoping: in:#name, in:id, from:, and a channel dropped", () => {
      const ix = new WebIndex(make);
      ix.setChannel("c1", "Ops");
      ix.setChannel("c2", "dev");
      ix.applyAll([
        changeOf("c1", msg("deploy friday")),
        changeOf("c2", msg("deploy monday", { author: BOB })),
      ]);
      expect(texts(ix, "deploy").sort()).toEqual(["deploy friday", "deploy monday"]);
      expect(texts(ix, "deploy in:#ops")).toEqual(["deploy friday"]);
      expect(texts(ix, "deploy in:c2")).toEqual(["deploy monday"]);
      expect(texts(ix, "from:bob")).toEqual(["deploy monday"]);
      expect(texts(ix, "from:bo")).toEqual([]);
      ix.dropChannel("c2");
      expect(texts(ix, "deploy")).toEqual(["deploy friday"]);
    });

    test("a short page is the newest matches, whatever order messages arrived in and however their times collide", () => {
      const ix = new WebIndex(make);
      const ref = new MemoryIndex();
      const at = (ms: number) => new Date(ms).toISOString();
      const base = Date.UTC(2026, 2, 1);
      const items: TimelineItem[] = [];
      for (let i = 0; i < 60; i++) {
        // Every fourth message shares its millisecond with others; seqs 1024 apart share a key too.
        const time = i % 4 === 0 ? base + 7 : base + i * 1000;
        items.push(
          msg(`${i % 2 ? "alpha" : "beta"} gamma${i % 3} delta`, {
            signedAt: at(time),
            seq: i % 4 === 0 ? 5 + 1024 * i : 10 + i,
          }),
        );
      }
      // Signed times out of the key's range: before 1970 and far in the future.
      items.push(msg("alpha gamma0 ancient", { signedAt: "1960-01-01T00:00:00.000Z" }));
      items.push(msg("alpha gamma1 future", { signedAt: "2999-01-01T00:00:00.000Z" }));
      // The edges of a day: its first millisecond and the last one before it.
      items.push(msg("alpha midnight", { signedAt: at(base) }));
      items.push(msg("alpha edge", { signedAt: at(base - 1) }));
      // A backfill reads newest first, then live messages arrive; edits and deletions move ids.
      const order = [...items.slice(30).reverse(), ...items.slice(0, 30).reverse()];
      order.push(edit(items[3] as TimelineItem, "alpha edited gamma2", null));
      order.push(deleted(items[5] as TimelineItem, true));
      for (const i of order) {
        ix.apply(changeOf("c1", i));
        ref.apply(changeOf("c1", i));
      }
      for (const q of [
        "alpha",
        "gam",
        "gamma1",
        "al",
        "delta",
        "alpha before:2026-03-01",
        "alpha after:2026-02-28",
        "alpha after:2026-02-28 before:2026-03-02",
        "after:2026-03-01",
        "a",
      ])
        for (const limit of [1, 3, 7, 20, 100]) {
          const query = parseQuery(q, utcDayStart);
          const want = ref.search(query, () => null, limit).map((h) => h.message.uri);
          expect({ q, limit, got: ix.search(query, limit).map((h) => h.message.uri) }).toEqual({
            q,
            limit,
            got: want,
          });
        }
      expect(ix.search(parseQuery("alpha"), 100).length).toBeGreaterThan(25);
    });

    test("answers every query as core's reference index does, before and after a snapshot", () => {
      const ix = new WebIndex(make);
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
        const text = Array.from(
          { length: 1 + (i % 5) },
          (_, k) => words[(i * 7 + k * 3) % words.length],
        ).join(" ");
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
      const restored = WebIndex.fromSnapshot(JSON.parse(JSON.stringify(ix.toSnapshot())), make);
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
        '"ok go"',
        "from:bob deploy",
        "has:file",
        "report",
        "after:2026-10-03 before:2026-10-05",
        "edited",
        "in:c1 ok",
      ]) {
        const query = parseQuery(q, utcDayStart);
        found += want(query).length;
        expect({ q, got: ix.search(query, 1000).map((h) => h.message.uri) }).toEqual({ q, got: want(query) });
        expect({ q, got: restored.search(query, 1000).map((h) => h.message.uri) }).toEqual({
          q,
          got: want(query),
        });
      }
      expect(found).toBeGreaterThan(200);
    });
  });

test("FlexSearch's postings hold whole words: digits are not split into triplets, nothing is re-encoded", () => {
  const p = new FlexSearchPostings();
  p.add(1, "w120784 2026");
  p.add(2, "w 120 784 202 6");
  p.add(3, "strasse deploying");
  expect([...Array.from(p.of("w120784"))]).toEqual([1]);
  expect([...Array.from(p.of("2026"))]).toEqual([1]);
  expect([...Array.from(p.of("784"))]).toEqual([2]);
  expect([...Array.from(p.of("deploy"))]).toEqual([]); // whole words only: prefixes go through the vocabulary
  p.remove(1);
  expect([...Array.from(p.of("w120784"))]).toEqual([]);
});
