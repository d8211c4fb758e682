import { type ChannelType, ChannelTypes, Limits } from "../protocol/runtime.ts";
import { defineCommand } from "./define.ts";
import type { CreateCommand } from "./types.ts";

/**
 * `/wsync/create <name> <type>`: the type is the last word and every word before it is the name,
 * so `/wsync/create night shift invite` creates "night shift", matching the Create Channel dialog,
 * which allows spaces. Runs of whitespace inside the name become one space. A misplaced type
 * cannot slip through: `/wsync/create ops public x` fails because "x" is not a type.
 * The type ignores case and is returned lowercase. The caller still needs the stored public key.
 */
export const create = defineCommand<CreateCommand>({
  name: "create",
  aliases: [],
  arguments: [
    {
      name: "name",
      required: true,
      description: `channel name, may contain spaces, ${Limits.channelNameMax} characters at most`,
    },
    {
      name: "type",
      required: true,
      description: "public (open), invite (+i) or secret (+s, hidden, link only)",
    },
  ],
  usage: "/wsync/create <name> <type>",
  summary: "open a new channel: public, invite or secret",
  details: ["Secret channels stay off every list; share their link to let people in."],
  parse(args, fail) {
    if (args.length < 2) return fail("Need a channel name and a type.");
    const typeWord = args[args.length - 1] ?? "";
    const channelType = toChannelType(typeWord);
    if (!channelType) return fail(`Unknown channel type: ${typeWord}. Use public, invite or secret.`);
    const channelName = args.slice(0, -1).join(" ");
    if (channelName.length > Limits.channelNameMax) {
      return fail(`Channel name is longer than ${Limits.channelNameMax} characters.`);
    }
    return { name: "create", channelName, channelType };
  },
});

function toChannelType(word: string): ChannelType | null {
  const lower = word.toLowerCase();
  return ChannelTypes.find((t) => t === lower) ?? null;
}
