import type { Channel, ChannelType } from "../../core/protocol/runtime.ts";
import { fail } from "./channel.ts";
import { loadClient } from "./engine.ts";

/*
 * The actions on a channel taken from its dialogs and panels (create, leave, invite, kick, a new
 * link). Kept out of ./channel.ts, which /sync loads before its first interaction (issue 28), so they
 * load with the parts that use them.
 */

export async function createChannel(input: {
  name: string;
  type: ChannelType;
  description?: string;
}): Promise<{ channel: Channel; link: string | null }> {
  try {
    return await (await loadClient()).createChannel(input);
  } catch (e) {
    return fail("Failed to create channel", e);
  }
}

export async function leaveChannel(channelId: string): Promise<void> {
  try {
    await (await loadClient()).leave(channelId);
  } catch (e) {
    fail("Failed to leave channel", e);
  }
}

export async function inviteToChannel(channelId: string, handle: string): Promise<void> {
  await (await loadClient()).invite(channelId, handle);
}

export async function kickMember(channelId: string, did: string): Promise<void> {
  await (await loadClient()).kick(channelId, did);
}

/**
 * Owners of a secret channel: a new link (protocol §7). The old one stops working at once; members
 * see the new one in the channel's `link`.
 */
export async function rotateLink(channelId: string): Promise<string> {
  return (await loadClient()).rotateLink(channelId);
}

/** Owners: signs a retention (days, or null for none) into the channel's next epoch. */
export async function setRetention(channelId: string, days: number | null): Promise<void> {
  return (await loadClient()).setRetention(channelId, days);
}
