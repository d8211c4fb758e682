import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { presentTimeline } from "../../../../core/client/channel/rich.ts";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { SecurityText } from "../../../../core/client/view/security-text.ts";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { CryptoText } from "../../../../core/crypto/errors.ts";
import { toast } from "../../../components/toast.ts";
import { compose, lastEditable, sendEdit, sendReply } from "../../../state/compose.ts";
import { engineState } from "../../../state/engine.ts";
import { sendMessage, sendTyping } from "../../../state/message.ts";
import { getDraft, setDraft } from "../../../state/resume.ts";
import { AttachButton } from "../files/AttachButton.tsx";
import { onClearInput } from "../members/panel.ts";
import { useCompletion } from "./Completion.tsx";

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
 * The message input (spec §5): Enter sends, Shift+Enter is a new line, Ctrl/Cmd+U clears; ↑ in an empty
 * input edits one's newest message in the channel and Esc cancels an edit or reply. A send needs
 * text, a session, the open channel, no send in flight and the channel's epoch keys (sent while they
 * are still loading, as during a join's rotation, it waits for them and then goes out). While the message
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
  // @ members and : emoji (Completion.tsx).
  const completion = useCompletion({
    id: channelId,
    text,
    setText,
    input,
    members: view?.members ?? [],
    me: s.auth.user?.did ?? null,
  });
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
  // Before the paint: the input shows the text being edited in the same frame as "Editing your message".
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when editing starts.
  useLayoutEffect(() => {
    if (!editing) return;
    // The text being edited as its author wrote it (the Markdown source, not the drawn text), in its
    // newest edit, if any.
    const items = (view?.items ?? []) as TimelineItem[];
    const source = presentTimeline(items, s.auth.user?.did ?? null).find((p) => p.item.uri === editing)?.text;
    setText(source ?? editingItem?.text ?? "");
    input.current?.focus();
  }, [editing]);
  const cancelMode = () => {
    if (compose.editing) setText("");
    compose.replyTo = null;
    compose.editing = null;
  };

  // Issue 28: a message sent while the channel is still getting its keys (a join's rotation running)
  // waits for them, shown as waiting, instead of Enter doing nothing; it goes out once they are in.
  const [waiting, setWaiting] = useState<string | null>(null);
  const loading = !!view?.loading;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the keys arrive or loading ends.
  useEffect(() => {
    if (waiting === null) return;
    if (keys) {
      setWaiting(null);
      void send(waiting);
    } else if (!loading) {
      // The channel could not get ready: the text comes back to the box, and the note says why.
      setWaiting(null);
      setText(waiting);
    }
  }, [keys, loading, waiting]);

  /** Sends what the box holds, or `waited`: the message that waited for the keys (the box is left alone). */
  const send = async (waited?: string) => {
    const t = (waited ?? text).trim();
    if (!t || busy || !s.auth.isAuthenticated || s.currentChannelId !== channelId) return;
    if (!keys) {
      if (waited === undefined && loading && waiting === null && !editing && !replyTo) {
        setWaiting(t);
        setText("");
      }
      return;
    }
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
          if (waited === undefined) setText("");
          setPending(false);
        },
      });
      if (!queued && waited === undefined) setText("");
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
      {waiting !== null ? (
        <p className="chat-note waiting" role="status" data-testid="compose-waiting">
          {`Getting the channel ready: your message goes out as soon as it is. ⧗ ${waiting}`}
        </p>
      ) : null}
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
      {completion.popup}
      <div className="composer-row">
        <span className="prompt">&gt;</span>
        <textarea
          ref={input}
          value={text}
          rows={Math.min(5, text.split("\n").length)}
          disabled={busy}
          placeholder={busy ? "TRANSMITTING..." : "ENTER_MESSAGE"}
          aria-label="Message"
          {...completion.inputProps}
          onChange={(e) => {
            setText(e.target.value);
            completion.track(e.target);
          }}
          onSelect={(e) => completion.track(e.currentTarget)}
          onKeyDown={(e) => {
            if (completion.onKeyDown(e)) return;
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              void send();
            } else if (e.key === "Escape" && (replyTo || editing)) {
              e.preventDefault();
              cancelMode();
            } else if (
              e.key === "ArrowUp" &&
              text === "" &&
              !editing &&
              !e.defaultPrevented &&
              !(e.shiftKey || e.altKey || e.ctrlKey || e.metaKey)
            ) {
              // ↑ in an empty input edits one's newest message here (Esc cancels, like the ✕).
              const uri = Array.isArray(view?.items) ? lastEditable(view.items, s.auth.user?.did) : null;
              if (uri) {
                e.preventDefault();
                compose.replyTo = null;
                compose.editing = { channelId, uri };
              }
            } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "u") {
              e.preventDefault();
              setText("");
            }
          }}
        />
        {/* After the input: Tab goes from the message list straight to the input (issue 28). */}
        <AttachButton channelId={channelId} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "TRANSMITTING" : "SEND"}
        </button>
      </div>
    </form>
  );
}
