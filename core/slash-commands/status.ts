import { defineCommand } from "./define.ts";
import { displaySafe } from "./display-safe.ts";
import type { StatusCommand } from "./types.ts";

export const status = defineCommand<StatusCommand>({
  name: "status",
  aliases: [],
  arguments: [],
  usage: "/wsync/status",
  summary: "show who you are, your channels and the link",
  details: [],
  parse: () => ({ name: "status" }),
});

export interface StatusInput {
  /** As shown in USER_DATA: without the provider's suffix (the caller strips it). */
  readonly handle: string;
  readonly channelCount: number;
  readonly connected: boolean;
}

export function formatStatus({ handle, channelCount, connected }: StatusInput): string[] {
  return [
    `USER      ${displaySafe(handle)}`,
    `CHANNELS  ${channelCount}`,
    `LINK      ${connected ? "CONNECTED" : "DISCONNECTED"}`,
  ];
}
