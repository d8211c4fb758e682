import { selectChannel } from "../../../state/channel.ts";
import { uiState } from "../../../state/ui.ts";

/** As ChannelSidebar.tsx MOBILE_CLOSE_DELAY_MS (spec §9), not imported: the sidebar is in the first script. */
const CLOSE_DELAY_MS = 300;

/** Opens a conversation from the sidebar as a channel opens: on a phone the drawer then closes. */
export async function openDirect(channelId: string): Promise<void> {
  await selectChannel(channelId).catch(() => undefined);
  if (uiState.sidebarOpen) setTimeout(() => (uiState.sidebarOpen = false), CLOSE_DELAY_MS);
}
