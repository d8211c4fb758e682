import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { lazyPart } from "../../components/lazy-part.tsx";
import { Spinner } from "../../components/Spinner.tsx";
import { authUi } from "../../state/auth.ts";
import { fetchChannels, selectChannel } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { takeResume } from "../../state/resume.ts";
import { uiState } from "../../state/ui.ts";
import { TerminalView } from "../terminal/TerminalView.tsx";
import { ChannelSidebar } from "./ChannelSidebar.tsx";
import { useIsMobile } from "./use-is-mobile.ts";

// What a first paint of /sync does not need loads when it is first used: the chat of a channel (after
// one is picked), the create dialog, the network overview and the mobile chrome. Each part recovers from
// a failed load in its own place (web/components/lazy-part.tsx), never taking the board down.
const ChatView = lazyPart(
  () => import("./ChatView.tsx").then((m) => m.ChatView),
  "the chat view",
  <Spinner label="Loading" />,
);
const MembersSidebar = lazyPart(
  () => import("./MembersSidebar.tsx").then((m) => m.MembersSidebar),
  "the members",
);
const CreateChannelDialog = lazyPart(
  () => import("./CreateChannelDialog.tsx").then((m) => m.CreateChannelDialog),
  "the create dialog",
);
const NetworkOverview = lazyPart(
  () => import("../network/NetworkOverview.tsx").then((m) => m.NetworkOverview),
  "the network overview",
  <Spinner label="Loading" />,
);
const MobileChrome = lazyPart(
  () => import("./MobileChrome.tsx").then((m) => m.MobileChrome),
  "the mobile header",
);
const KeyBackupDialog = lazyPart(
  () => import("../keys/KeyBackupDialog.tsx").then((m) => m.KeyBackupDialog),
  "the key backup dialog",
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
    // Back after a session ended: the same user's channel reopens, with its draft (web/state/resume.ts).
    const did = engineState.auth.user?.did;
    const channelId = did ? takeResume(did) : null;
    if (channelId) void selectChannel(channelId).catch(() => undefined);
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
      {ui.createDialogOpen ? <CreateChannelDialog /> : null}
      {keyBackupOpen ? (
        <KeyBackupDialog
          onClose={() => {
            authUi.keyBackupOpen = false;
          }}
        />
      ) : null}
    </div>
  );
}
