import MiniSearch from "minisearch";
import type { MakePostings, Postings } from "../../web/features/search/web-index.ts";

/**
 * MiniSearch 7.2.0 as the browser index's postings: the first choice, kept so that
 * `npm run bench:search:web` compares it with FlexSearch (which the worker uses) in Chromium, and the
 * index's tests run over both (docs/decisions/search.md).
 */
class MiniSearchPostings implements Postings {
  // The text is already normalized and joined by single spaces (core's searchBody).
  private readonly ms = new MiniSearch<{ id: number; text: string }>({
    fields: ["text"],
    tokenize: (s) => (s ? s.split(" ") : []),
    processTerm: (t) => t,
  });
  add(id: number, text: string): void {
    this.ms.add({ id, text });
  }
  remove(id: number): void {
    this.ms.discard(id);
  }
  of(word: string): ArrayLike<number> {
    return this.ms.search(word, { prefix: false, fuzzy: false }).map((r) => r.id as number);
  }
}

export const miniSearch: MakePostings = () => new MiniSearchPostings();
