import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { fetchChannels } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";
import { NetworkOverview } from "../network/NetworkOverview.tsx";
import { TerminalView } from "../terminal/TerminalView.tsx";
import { ChannelSidebar } from "./ChannelSidebar.tsx";
import { ChatView } from "./ChatView.tsx";
import { CreateChannelDialog } from "./CreateChannelDialog.tsx";
import { MembersSidebar } from "./MembersSidebar.tsx";
import { MobileChrome } from "./MobileChrome.tsx";
import { useIsMobile } from "./use-is-mobile.ts";

/**
 * The chat board (spec §2.8): channel list on the left (resizable), and on the right either the open
 * channel (chat view + members) or, with no channel selected, the terminal or the network overview.
 */
export function Board() {
  const s = useSnapshot(engineState);
  const ui = useSnapshot(uiState);
  const mobile = useIsMobile();
  useEffect(() => {
    void fetchChannels().catch(() => undefined);
  }, []);
  const currentId = s.currentChannelId;
  const current = currentId ? s.open[currentId] : undefined;
  return (
    <div className={`board${mobile ? " mobile" : ""}`} data-testid="board">
      {mobile ? <MobileChrome /> : null}
      <div className="board-body">
        <ChannelSidebar mobile={mobile} />
        <main className="board-main">
          {current && currentId ? (
            <ChatView channelId={currentId} mobile={mobile} />
          ) : ui.networkView === "terminal" ? (
            <TerminalView />
          ) : (
            <NetworkOverview />
          )}
        </main>
        {current && currentId ? <MembersSidebar channelId={currentId} mobile={mobile} /> : null}
      </div>
      <CreateChannelDialog />
    </div>
  );
}
