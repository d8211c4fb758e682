import { parseJoinLink } from "../protocol/runtime.ts";
import { commandWord, defineCommand } from "./define.ts";
import type { JoinCommand } from "./types.ts";

/**
 * `/wsync/join <hash|link>` accepts everything a user may have been handed: a channel id, a channel
 * uri, a secret link `https://host/sync/join/{id}#{token}` or the short `{id}#{token}`. Only the
 * first argument counts (spec §5: "at least 1 argument"); a link never contains spaces. The caller
 * builds the channel address from the user's did and `channelId` and checks the access token.
 */
export const join = defineCommand<JoinCommand>({
  name: "join",
  aliases: [],
  arguments: [
    {
      name: "hash|link",
      required: true,
      description: "a channel hash or uri, or a secret link you were sent",
    },
  ],
  usage: "/wsync/join <hash|link>",
  summary: "join a channel by hash or secret link",
  details: ["Links look like https://host/sync/join/{hash}#{token} or {hash}#{token}."],
  parse(args, fail) {
    const target = args[0];
    if (target === undefined) return fail("Missing channel hash or link.");
    const link = parseJoinLink(target);
    if (!link) return fail(`Not a channel hash or join link: ${target}.`);
    return { name: "join", channelId: link.channelId, joinToken: link.joinToken };
  },
});

/** The line a click on a listed channel puts into the prompt (spec §2.8). */
export function joinCommandFor(channelId: string): string {
  return `${commandWord("join")} ${channelId}`;
}
