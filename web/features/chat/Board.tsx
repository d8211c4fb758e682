import { useRouter } from "@tanstack/react-router";
import { useCallback, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { lazyPart } from "../../components/lazy-part.tsx";
import { Spinner } from "../../components/Spinner.tsx";
import { authUi } from "../../state/auth.ts";
import { clearSelection, fetchChannels, selectChannel } from "../../state/channel.ts";
import { engineState, loadClient } from "../../state/engine.ts";
import { takeResume } from "../../state/resume.ts";
import { uiState } from "../../state/ui.ts";
import { KeyNag, ProofNag } from "../keys/KeyNag.tsx";
import { TerminalView } from "../terminal/TerminalView.tsx";
import { useBoardKeys } from "./board-keys.ts";
import { ChannelSidebar } from "./ChannelSidebar.tsx";
import { useActivity } from "./use-activity.ts";
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
const QuickSwitcher = lazyPart(
  () => import("./QuickSwitcher.tsx").then((m) => m.QuickSwitcher),
  "the channel switcher",
);
const KeyDialogs = lazyPart(
  () => import("../keys/KeyDialogs.tsx").then((m) => m.KeyDialogs),
  "the key dialogs",
);

/** `/sync/c/{id}` → the channel id in it, else null. */
export function channelIdInPath(pathname: string): string | null {
  const m = /^\/sync\/c\/([^/]+)\/?$/.exec(pathname);
  return m ? decodeURIComponent(m[1] as string) : null;
}

/**
 * Keeps the open channel and the URL together: opening a channel (a click, a create, a join, a
 * command) pushes `/sync/c/{id}`, going back to the terminal pushes `/sync`; a URL that changes by
 * itself (Back, Forward, a reload, a bookmark) opens its channel or closes it.
 */
function useChannelInUrl(currentId: string | null) {
  // Outside a router (component tests render the board alone) there is no URL to keep.
  const router = useRouter({ warn: false }) as ReturnType<typeof useRouter> | undefined;
  const [pathname, setPathname] = useState(() => router?.state.location.pathname ?? "");
  useEffect(() => {
    if (!router) return;
    setPathname(router.state.location.pathname);
    return router.subscribe("onResolved", () => setPathname(router.state.location.pathname));
  }, [router]);
  const navigate = useCallback(
    (to: { to: "/sync" } | { to: "/sync/c/$channelId"; params: { channelId: string } }, replace = false) =>
      router?.navigate({ ...to, replace }),
    [router],
  );
  const urlId = channelIdInPath(pathname);
  const onBoard = pathname === "/sync" || pathname === "/sync/" || urlId !== null;
  // URL → state.
  useEffect(() => {
    if (!onBoard || urlId === engineState.currentChannelId) return;
    if (urlId) {
      void selectChannel(urlId)
        .catch(() => undefined)
        .then(() => {
          // Not a channel this user can open: the URL follows what is open instead.
          if (engineState.currentChannelId !== urlId) {
            const now = engineState.currentChannelId;
            void navigate(
              now ? { to: "/sync/c/$channelId", params: { channelId: now } } : { to: "/sync" },
              true,
            );
          }
        });
    } else clearSelection();
  }, [urlId, onBoard, navigate]);
  // State → URL (not on the first render: a deep link is opened by the effect above first).
  const previous = useRef(currentId);
  useEffect(() => {
    if (previous.current === currentId) return;
    previous.current = currentId;
    if (!onBoard || currentId === urlId) return;
    void navigate(
      currentId ? { to: "/sync/c/$channelId", params: { channelId: currentId } } : { to: "/sync" },
    );
  }, [currentId, urlId, onBoard, navigate]);
}

/**
 * The chat board (spec §2.8): channel list on the left (resizable), and on the right either the open
 * channel (chat view + members) or, with no channel selected, the terminal or the network overview.
 * The Key backup and Link a device dialogs open from the channel list's menu or the info panel.
 */
export function Board() {
  const s = useSnapshot(engineState);
  const ui = useSnapshot(uiState);
  const { keyBackupOpen, linkDeviceOpen, keyCustody, sessionsOpen, deleteAccountOpen } = useSnapshot(authUi);
  const mobile = useIsMobile();
  useChannelInUrl(s.currentChannelId);
  const { switcherOpen, closeSwitcher } = useBoardKeys();
  useActivity();
  useEffect(() => {
    void fetchChannels().catch(() => undefined);
    // Back after a session ended: the same user's channel reopens, with its draft (web/state/resume.ts).
    const did = engineState.auth.user?.did;
    const channelId = did ? takeResume(did) : null;
    if (channelId) void selectChannel(channelId).catch(() => undefined);
  }, []);
  // Whether the key is kept anywhere but here: while not, the board reminds (issue 28).
  useEffect(() => {
    if (s.auth.keyState !== "ready" || authUi.keyCustody !== undefined) return;
    void loadClient()
      .then((c) => c.keyCustody())
      .then(
        (custody) => {
          authUi.keyCustody ??= custody;
        },
        () => undefined,
      );
  }, [s.auth.keyState]);
  const currentId = s.currentChannelId;
  const current = currentId ? s.open[currentId] : undefined;
  return (
    <div
      className={`board${mobile ? " mobile" : ""}`}
      data-testid="board"
      data-key-custody={keyCustody ?? "checking"}
    >
      {mobile ? <MobileChrome /> : null}
      {keyCustody === "unsecured" ? <KeyNag /> : s.auth.proof === "failed" ? <ProofNag /> : null}
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
      {switcherOpen ? <QuickSwitcher onClose={closeSwitcher} /> : null}
      {keyBackupOpen || linkDeviceOpen || sessionsOpen || deleteAccountOpen ? <KeyDialogs /> : null}
    </div>
  );
}
