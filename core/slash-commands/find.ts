import { defineCommand } from "./define.ts";
import type { FindCommand } from "./types.ts";

/**
 * `/wsync/find <query>` (and `/find`): searches the messages this device can decrypt (issue 32;
 * docs/search.md for the syntax). Not `/search`: `/wsync/search` is the spec's channel search (§9),
 * and a `/search` alias for another command would read as that one.
 */
export const find = defineCommand<FindCommand>({
  name: "find",
  aliases: ["/find"],
  arguments: [
    {
      name: "query",
      required: true,
      description: "words, in:#channel, from:handle, before:/after:, has:file",
    },
  ],
  usage: "/wsync/find <query>",
  summary: "search your messages",
  details: [],
  parse(args, fail) {
    if (args.length === 0) return fail("Missing search query.");
    return { name: "find", query: args.join(" ") };
  },
});
