import type { WsyncClient } from "../../core/client/index.ts";
import { setItems } from "../../core/client/view/state.ts";
import { toast } from "../components/toast.ts";
import { failureText } from "./channel.ts";
import { engineState, loadClient } from "./engine.ts";

/**
 * Direct conversations on the board (`/msg handle text`, `/query handle` in the terminal, "Message"
 * on a member, Ctrl+K): opens this user's conversation with the person, the same one every time,
 * makes it the current view and sends the text when there is one. Failures toast, as the channel
 * actions do.
 */
export async function openConversation(handle: string, text: string | null): Promise<void> {
  try {
    const client = await loadClient();
    const { conversation } = await client.direct.open([handle], { focus: true });
    if (text) await client.send(conversation.channel.id, text);
  } catch (e) {
    toast.error(failureText("Could not open the conversation", e));
    throw e;
  }
}

async function act(text: string, f: (c: WsyncClient) => Promise<void>): Promise<void> {
  try {
    await f(await loadClient());
  } catch (e) {
    toast.error(failureText(text, e));
  }
}

/** Takes a message request in: it moves to "Direct messages" and notifies from then on. */
export const acceptRequest = (channelId: string) =>
  act("Could not accept the request", (c) => c.direct.accept(channelId));

/**
 * Deletes a conversation from the list (a one-to-one one comes back when something new arrives in it;
 * a group is left), closing it if it was open.
 */
export const deleteConversation = (channelId: string) =>
  act("Could not delete the conversation", (c) => c.direct.remove(channelId));

/**
 * Blocks a person, as Signal does from a request: the server refuses their messages to this user
 * and hides their new conversations, and the conversation they opened is deleted here.
 */
export const blockPerson = (did: string, channelId: string | null) =>
  act("Could not block", async (c) => {
    await c.direct.block(did);
    // What they already said in conversations goes from view at once (new messages are not placed:
    // core/client/view/blocked.ts); it shows again when a conversation is loaded after an unblock.
    // A list is replaced through setItems, never assigned (ChannelView.items).
    for (const view of Object.values(engineState.open)) {
      if (view.channel.value.type !== "direct") continue;
      const kept = view.items.filter((i) => i.kind !== "message" || i.author.did !== did);
      if (kept.length !== view.items.length) setItems(view, kept);
    }
    if (channelId) await c.direct.remove(channelId);
    toast.success("Blocked");
  });

export const unblockPerson = (did: string) => act("Could not unblock", (c) => c.direct.unblock(did));

/** The conversation of a channel, when it is one (null for a channel). */
export const conversationOf = (channelId: string) =>
  engineState.conversations?.find((c) => c.channel.id === channelId) ?? null;
