import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { helpLines } from "../../../core/slash-commands/help-text.ts";
import { formatStatus } from "../../../core/slash-commands/status.ts";
import { Modal } from "../../components/Modal.tsx";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";
import { channelTitle } from "./direct/title.ts";
import { clearInput, panel } from "./members/panel.ts";

/** Spec §3 storage key and §9 delay of the one-time fullscreen prompt. */
export const FULLSCREEN_DISMISSED_KEY = "fullscreen-prompt-dismissed";
export const FULLSCREEN_PROMPT_DELAY_MS = 2000;

/** Once per page: the prompt does not come back when another channel is opened. */
let prompted = false;

const closeDrawers = () => {
  uiState.sidebarOpen = false;
  uiState.membersOpen = false;
};

/** Opens the members drawer on the member list or the info panel; the same button again closes it. */
const toggleMembers = (info: boolean) => {
  const open = !(uiState.membersOpen && panel.info === info);
  closeDrawers();
  uiState.membersOpen = open;
  panel.info = info;
};

const toggleFullscreen = () => {
  const d = document;
  // Either may be refused (no user gesture, iOS Safari): the button then simply does nothing.
  const p = d.fullscreenElement ? d.exitFullscreen?.() : d.documentElement.requestFullscreen?.();
  p?.catch(() => undefined);
};

/**
 * The mobile frame of the board (spec §2.8 mobile, at most 768 px): a terminal-style header with the
 * channel, members, info and fullscreen buttons, the link status bar, quick actions, the backdrop of
 * the drawers, and the one-time fullscreen prompt.
 */
export function MobileChrome() {
  const s = useSnapshot(engineState);
  const ui = useSnapshot(uiState);
  const { info } = useSnapshot(panel);
  const [out, setOut] = useState<string[] | null>(null);
  const [prompt, setPrompt] = useState(false);
  const id = s.currentChannelId;
  const channel = id ? s.open[id]?.channel : undefined;
  const online = s.connection === "connected";

  useEffect(() => {
    if (!id || prompted || localStorage.getItem(FULLSCREEN_DISMISSED_KEY) || document.fullscreenElement)
      return;
    const t = setTimeout(() => {
      prompted = true;
      setPrompt(true);
    }, FULLSCREEN_PROMPT_DELAY_MS);
    return () => clearTimeout(t);
  }, [id]);

  return (
    <div className="m-chrome">
      <header className="m-head">
        <button
          type="button"
          aria-label="Channels"
          aria-pressed={ui.sidebarOpen}
          onClick={() => {
            const open = !uiState.sidebarOpen;
            closeDrawers();
            uiState.sidebarOpen = open;
          }}
        >
          ≡
        </button>
        {/* Short of room, the prompt gives way before the channel's name does. */}
        <span className="m-title">
          <span className="m-prompt">root@wsync:</span>
          <b>{channel && id ? channelTitle(s, id) : "~"}</b>$
        </span>
        <button
          type="button"
          aria-label="Members"
          aria-pressed={ui.membersOpen && !info}
          disabled={!channel}
          onClick={() => toggleMembers(false)}
        >
          ◉
        </button>
        <button
          type="button"
          aria-label="Info"
          aria-pressed={ui.membersOpen && info}
          disabled={!channel}
          onClick={() => toggleMembers(true)}
        >
          i
        </button>
        <button type="button" aria-label="Fullscreen" onClick={toggleFullscreen}>
          [ ]
        </button>
      </header>
      <div className={`m-link ${online ? "ok" : "lost"}`} role="status">
        {online ? "SECURED_CONNECTION" : "CONNECTION_LOST"}
      </div>
      <nav className="m-quick">
        <button type="button" onClick={() => setOut(helpLines())}>
          /help
        </button>
        <button
          type="button"
          onClick={() =>
            setOut(
              formatStatus({
                handle: handleWithoutSuffix(s.auth.user?.handle ?? ""),
                // Joined channels, as the terminal's and the CLI's /wsync/status count them.
                channelCount: s.channels.filter((c) => c.isMember).length,
                connected: online,
              }),
            )
          }
        >
          /status
        </button>
        <button
          type="button"
          onClick={() => {
            setOut(null);
            clearInput();
          }}
        >
          clear
        </button>
        <button
          type="button"
          onClick={() => {
            closeDrawers();
            document.querySelector<HTMLElement>(".board-main .composer textarea")?.focus();
          }}
        >
          focus
        </button>
      </nav>
      {out ? (
        <button type="button" className="m-out" aria-label="Close output" onClick={() => setOut(null)}>
          <pre>{out.join("\n")}</pre>
        </button>
      ) : null}
      {ui.sidebarOpen || ui.membersOpen ? (
        <button type="button" className="m-scrim" aria-label="Close panel" onClick={closeDrawers} />
      ) : null}
      {prompt ? (
        <Modal title="ENTER FULL IMMERSION" labelledBy="fs-title">
          <p>Hide the browser's bars and give the terminal the whole screen.</p>
          <div className="actions">
            <button
              type="button"
              className="primary"
              onClick={() => {
                setPrompt(false);
                toggleFullscreen();
              }}
            >
              ENGAGE FULLSCREEN
            </button>
            <button
              type="button"
              onClick={() => {
                setPrompt(false);
                localStorage.setItem(FULLSCREEN_DISMISSED_KEY, "true");
              }}
            >
              SKIP FOR NOW
            </button>
          </div>
        </Modal>
      ) : null}
    </div>
  );
}
