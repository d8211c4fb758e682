import { lazy, Suspense, useEffect } from "react";
import { useSnapshot } from "valtio";
import { Spinner } from "../../components/Spinner.tsx";
import { authUi } from "../../state/auth.ts";
import { fetchChannels } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";
import { TerminalView } from "../terminal/TerminalView.tsx";
import { ChannelSidebar } from "./ChannelSidebar.tsx";
import { useIsMobile } from "./use-is-mobile.ts";

// What a first paint of /sync does not need loads when it is first used: the chat of a channel (after
// one is picked), the create dialog, the network overview and the mobile chrome.
const ChatView = lazy(() => import("./ChatView.tsx").then((m) => ({ default: m.ChatView })));
const MembersSidebar = lazy(() =>
  import("./MembersSidebar.tsx").then((m) => ({ default: m.MembersSidebar })),
);
const CreateChannelDialog = lazy(() =>
  import("./CreateChannelDialog.tsx").then((m) => ({ default: m.CreateChannelDialog })),
);
const NetworkOverview = lazy(() =>
  import("../network/NetworkOverview.tsx").then((m) => ({ default: m.NetworkOverview })),
);
const MobileChrome = lazy(() => import("./MobileChrome.tsx").then((m) => ({ default: m.MobileChrome })));
const KeyBackupDialog = lazy(() =>
  import("../keys/KeyBackupDialog.tsx").then((m) => ({ default: m.KeyBackupDialog })),
);

/**
 * The chat board (spec §2.8): channel list on the left (resizable), and on the right either the open
 * channel (chat view + members) or, with no channel selected, the terminal or the network overview.
 * The Key backup dialog opens from the channel list's menu or the info panel.
 */
export function Board() {
  const s = useSnapshot(engineState);
  const ui = useSnapshot(uiState);
  const { keyBackupOpen } = useSnapshot(authUi);
  const mobile = useIsMobile();
  useEffect(() => {
    void fetchChannels().catch(() => undefined);
  }, []);
  const currentId = s.currentChannelId;
  const current = currentId ? s.open[currentId] : undefined;
  return (
    <div className={`board${mobile ? " mobile" : ""}`} data-testid="board">
      {mobile ? (
        <Suspense fallback={null}>
          <MobileChrome />
        </Suspense>
      ) : null}
      <div className="board-body">
        <ChannelSidebar mobile={mobile} />
        <main className="board-main">
          <Suspense fallback={<Spinner label="Loading" />}>
            {current && currentId ? (
              <ChatView channelId={currentId} mobile={mobile} />
            ) : ui.networkView === "terminal" ? (
              <TerminalView />
            ) : (
              <NetworkOverview />
            )}
          </Suspense>
        </main>
        {current && currentId ? (
          <Suspense fallback={null}>
            <MembersSidebar channelId={currentId} mobile={mobile} />
          </Suspense>
        ) : null}
      </div>
      {ui.createDialogOpen ? (
        <Suspense fallback={null}>
          <CreateChannelDialog />
        </Suspense>
      ) : null}
      {keyBackupOpen ? (
        <Suspense fallback={null}>
          <KeyBackupDialog
            onClose={() => {
              authUi.keyBackupOpen = false;
            }}
          />
        </Suspense>
      ) : null}
    </div>
  );
}
