import type { Channel, ChannelType } from "../../core/protocol/runtime.ts";
import { toast } from "../components/toast.ts";
import { engineState, loadClient } from "./engine.ts";

/*
 * The channel slice (spec §3 "Channel state"): the list, the current channel, and the actions on
 * channels. The data is the engine's (engineState.channels, .currentChannelId); views read it with
 * useSnapshot(engineState) and call these actions. Failures become the spec's texts (§8).
 */
/** What a failed action says: the error's own message, else `text`. */
export const failureText = (text: string, e: unknown): string =>
  e instanceof Error && e.message ? e.message : text;

function fail(text: string, e: unknown): never {
  toast.error(failureText(text, e));
  throw e instanceof Error ? e : new Error(text);
}

export async function fetchChannels(): Promise<Channel[]> {
  try {
    return await (await loadClient()).refreshChannels();
  } catch (e) {
    return fail("Failed to fetch channels", e);
  }
}

/** The next page of channels to browse. */
export async function loadMoreChannels(): Promise<void> {
  try {
    await (await loadClient()).loadMoreChannels();
  } catch (e) {
    fail("Failed to fetch channels", e);
  }
}

/** Selects and opens a channel (joins a public one): members, epoch keys, the last 50 records. */
export async function selectChannel(channelId: string): Promise<void> {
  try {
    const wasMember = engineState.channels.find((c) => c.id === channelId)?.isMember;
    await (await loadClient()).open(channelId, { reuse: true });
    // Opening a public channel joined it: it moves from "Browse" to "Your channels".
    if (!wasMember) void fetchChannels().catch(() => undefined);
  } catch (e) {
    fail("Failed to join channel", e);
  }
}

/** Back to the terminal / network view. */
export function clearSelection(): void {
  engineState.currentChannelId = null;
}

/** Joins by hash, uri, secret link or `{id}#{token}`, then opens it. */
export async function joinChannel(input: string): Promise<void> {
  try {
    await (await loadClient()).join(input);
  } catch (e) {
    fail("Failed to join channel", e);
  }
}

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
