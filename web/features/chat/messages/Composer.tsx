import { useEffect, useRef, useState } from "react";
import toast from "react-hot-toast/headless";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { SecurityText } from "../../../../core/client/view/security-text.ts";
import { CryptoText } from "../../../../core/crypto/errors.ts";
import { compose, sendEdit, sendReply } from "../../../state/compose.ts";
import { engineState } from "../../../state/engine.ts";
import { sendMessage, sendTyping } from "../../../state/message.ts";
import { getDraft, setDraft } from "../../../state/resume.ts";
import { onClearInput } from "../members/panel.ts";

/** A typing frame at most this often (the server's limit allows a few more). */
export const TYPING_EVERY_MS = 3000;

/** Spec §9: the haptic pulse on send, on mobile. */
export const HAPTIC_MS = 50;

/**
 * Whether one of this user's messages is on its way (not queued offline). Those not yet stored
 * (seq 0) are always at the end of the list: only that end is read, not every message of the
 * channel (a tracked read of the whole list on every change grew with the channel, issue 28).
 */
function sendInFlight(items: readonly { seq: number; sending?: boolean; queued?: boolean }[]): boolean {
  for (let n = items.length - 1; n >= 0; n--) {
    const i = items[n];
    if (i?.seq !== 0) return false;
    if (i.sending && !i.queued) return true;
  }
  return false;
}

/**
 * The message input (spec §5): Enter sends, Shift+Enter is a new line, Ctrl/Cmd+U clears. A send needs
 * text, a session, the open channel, no send in flight and the channel's epoch keys. While the message
 * is on its way the input is disabled and reads TRANSMITTING; it empties when the record comes back.
 * While a security check blocks sending (protocol §7) it says so; a send still goes to the engine,
 * which refuses it, and the refused message shows the reason in its row like any failed send.
 */
export function Composer({ channelId, mobile }: { channelId: string; mobile: boolean }) {
  const s = useSnapshot(engineState);
  const view = s.open[channelId];
  // A draft survives a session end (web/state/resume.ts): it starts from what was being written.
  const [text, setTextState] = useState(() => getDraft(channelId));
  const lastTyping = useRef(0);
  const setText = (t: string) => {
    setTextState(t);
    setDraft(channelId, t);
    // "… is typing" for the others: at most one frame every few seconds while the text grows.
    const now = Date.now();
    if (t.trim() && now - lastTyping.current > TYPING_EVERY_MS) {
      lastTyping.current = now;
      void sendTyping(channelId).catch(() => undefined);
    }
  };
  const [pending, setPending] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const refocus = useRef(false);
  // A message queued while offline does not hold the input: the next one can be written meanwhile.
  const busy = pending || (Array.isArray(view?.items) && sendInFlight(view.items));
  const keys = !!view?.keysLoaded;

  useEffect(
    () =>
      onClearInput(() => {
        setTextState("");
        setDraft(channelId, "");
      }),
    [channelId],
  );
  useEffect(() => {
    // A disabled textarea loses focus; give it back after a send.
    if (!busy && refocus.current) {
      refocus.current = false;
      input.current?.focus();
    }
  }, [busy]);

  // Answering or editing a message of this channel (web/state/compose.ts).
  const mode = useSnapshot(compose);
  const replyTo = mode.replyTo?.channelId === channelId ? mode.replyTo.uri : null;
  const editing = mode.editing?.channelId === channelId ? mode.editing.uri : null;
  const target = (uri: string | null) => (uri ? view?.items.find((i) => i.uri === uri) : undefined);
  const editingItem = target(editing);
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when editing starts.
  useEffect(() => {
    if (!editing) return;
    // The text being edited, as shown now (its newest edit, if any).
    const shown = document.getElementById(`m-${editingItem?.author.did}-${editingItem?.clientMsgId}`);
    setText(shown?.querySelector(".body")?.textContent ?? editingItem?.text ?? "");
    input.current?.focus();
  }, [editing]);
  const cancelMode = () => {
    if (compose.editing) setText("");
    compose.replyTo = null;
    compose.editing = null;
  };

  const send = async () => {
    const t = text.trim();
    if (!t || busy || !keys || !s.auth.isAuthenticated || s.currentChannelId !== channelId) return;
    setPending(true);
    if (mobile) navigator.vibrate?.(HAPTIC_MS);
    let queued = false;
    try {
      if (editing || replyTo) {
        if (editing) await sendEdit(channelId, editing, t);
        else if (replyTo) await sendReply(channelId, replyTo, t);
        compose.replyTo = null;
        compose.editing = null;
        setText("");
        return;
      }
      await sendMessage(channelId, t, {
        onQueued: () => {
          // Offline: the row shows it queued; the input is free for the next message.
          queued = true;
          setText("");
          setPending(false);
        },
      });
      if (!queued) setText("");
    } catch {
      toast.error("Failed to send message");
    } finally {
      refocus.current = true;
      setPending(false);
    }
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {view?.sendBlocked ? (
        <p className="chat-note warning send-blocked" role="status">
          {SecurityText.sendBlocked}
        </p>
      ) : null}
      {keys ? null : <p className="chat-note warning">{CryptoText.epochKeysNotLoaded}</p>}
      {replyTo || editing ? (
        <p className="compose-mode" data-testid="compose-mode">
          {editing
            ? "Editing your message"
            : `Replying to ${handleWithoutSuffix(target(replyTo)?.author.handle ?? "")}: ${(target(replyTo)?.text ?? "").slice(0, 80)}`}
          <button type="button" aria-label="Cancel reply or edit" onClick={cancelMode}>
            ✕
          </button>
        </p>
      ) : null}
      <div className="composer-row">
        <span className="prompt">&gt;</span>
        <textarea
          ref={input}
          value={text}
          rows={Math.min(5, text.split("\n").length)}
          disabled={busy}
          placeholder={busy ? "TRANSMITTING..." : "ENTER_MESSAGE"}
          aria-label="Message"
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              void send();
            } else if (e.key === "Escape" && (replyTo || editing)) {
              e.preventDefault();
              cancelMode();
            } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "u") {
              e.preventDefault();
              setText("");
            }
          }}
        />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "TRANSMITTING" : "SEND"}
        </button>
      </div>
    </form>
  );
}
