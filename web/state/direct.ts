import { toast } from "../components/toast.ts";
import { loadClient } from "./engine.ts";

/**
 * Direct conversations on the board (`/msg handle text`, `/query handle` in the terminal): opens this
 * user's conversation with the person, the same one every time, makes it the current view and sends
 * the text when there is one. Failures toast, as the channel actions do.
 */
export async function openConversation(handle: string, text: string | null): Promise<void> {
  try {
    const client = await loadClient();
    const { conversation } = await client.direct.open([handle], { focus: true });
    if (text) await client.send(conversation.channel.id, text);
  } catch (e) {
    toast.error(e instanceof Error && e.message ? e.message : "Could not open the conversation");
    throw e;
  }
}
