import { defineCommand } from "./define.ts";
import { displaySafe } from "./display-safe.ts";
import { joinCommandFor } from "./join.ts";
import type { ChannelLike, ListCommand } from "./types.ts";

/** Extra words after `/wsync/list` are ignored: there is nothing to get wrong. */
export const list = defineCommand<ListCommand>({
  name: "list",
  aliases: [],
  arguments: [],
  usage: "/wsync/list",
  summary: "list the channels you can see",
  details: ["Click a line (or copy its hash) to fill in the join command."],
  parse: () => ({ name: "list" }),
});

export interface ChannelListLine<C extends ChannelLike> {
  readonly channel: C;
  /** Display-safe name, type and hash, for views that lay out their own columns. */
  readonly name: string;
  readonly type: string;
  readonly hash: string;
  /** `name  [type]  hash`, names padded to one column, for plain-text terminals. */
  readonly text: string;
  /** What a click on the line puts into the prompt. */
  readonly joinCommand: string;
}

export interface ChannelListing<C extends ChannelLike> {
  /** Always "FOUND n CHANNELS", as the spec words it, even for 0 and 1. */
  readonly header: string;
  readonly lines: readonly ChannelListLine<C>[];
}

export function formatChannelList<C extends ChannelLike>(channels: readonly C[]): ChannelListing<C> {
  const names = channels.map((c) => displaySafe(c.value.name));
  const width = Math.max(0, ...names.map((n) => n.length));
  const lines = channels.map((channel, i) => {
    const name = names[i] ?? "";
    const type = displaySafe(channel.value.type);
    const hash = displaySafe(channel.id);
    return {
      channel,
      name,
      type,
      hash,
      text: `${name.padEnd(width)}  [${type}]  ${hash}`,
      joinCommand: joinCommandFor(channel.id),
    };
  });
  return { header: `FOUND ${channels.length} CHANNELS`, lines };
}
