import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { leaveChannel } from "../../state/channel-actions.ts";
import { deleteConversation } from "../../state/direct.ts";
import { display, loadDisplay } from "../../state/display.ts";
import { engineState } from "../../state/engine.ts";
import { NotifySetting, TypingLine } from "./ChannelActivity.tsx";
import { ConnectionState } from "./ConnectionState.tsx";
import { channelTitle } from "./direct/title.ts";
import { Composer } from "./messages/Composer.tsx";
import { MessageList } from "./messages/MessageList.tsx";
import { SecurityWarnings } from "./SecurityWarnings.tsx";

const FLAG: Record<string, string> = { invite: " +i", secret: " +s" };

let displayLoaded = false;
function loadDisplayOnce(): void {
  if (displayLoaded) return;
  displayLoaded = true;
  loadDisplay();
}

/**
 * The open channel (spec §2.8 chat view): header, security warnings, the message list and the
 * input. Everything shown comes from the engine's view of the channel; actions go through the slices.
 */
export function ChatView({ channelId, mobile }: { channelId: string; mobile: boolean }) {
  const snap = useSnapshot(engineState);
  const view = snap.open[channelId];
  const { fontSize } = useSnapshot(display);
  // This browser's display settings (web/state/display.ts), read once the chat first opens.
  useEffect(loadDisplayOnce, []);
  if (!view) return null;
  const c = view.channel.value;
  // A direct conversation is named by its people; LEAVE deletes it from the list (a pair comes back
  // with the next message, a group is left).
  const direct = c.type === "direct";
  return (
    <section className="chat" data-testid="chat-view" data-font-size={fontSize}>
      <header className="chat-head">
        <div className="chat-title">
          <h2>{channelTitle(snap, channelId)}</h2>
          <span className="chat-type">
            [{c.type}
            {FLAG[c.type]}]
          </span>
          {c.description ? <p>{c.description}</p> : null}
        </div>
        <div className="chat-actions">
          {/* On a phone the notification settings are in the info drawer (issue 28: here they covered the name). */}
          {mobile ? null : <NotifySetting channelId={channelId} />}
          <ConnectionState />
          <button
            type="button"
            className="danger"
            onClick={() =>
              void (direct ? deleteConversation(channelId) : leaveChannel(channelId).catch(() => {}))
            }
          >
            {direct ? "DELETE" : "LEAVE"}
          </button>
        </div>
      </header>
      <SecurityWarnings warnings={view.warnings} />
      {/* Keyed: another channel starts with its own scroll position, unread count and input. */}
      <MessageList key={`l${channelId}`} channelId={channelId} mobile={mobile} />
      <TypingLine channelId={channelId} />
      <Composer key={`c${channelId}`} channelId={channelId} mobile={mobile} />
    </section>
  );
}
