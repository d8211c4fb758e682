import { useEffect, useState } from "react";
import type { Snapshot } from "valtio";
import {
  authorColor,
  clockTime,
  handleWithoutSuffix,
  notifySymbol,
} from "../../../../core/client/display.ts";
import type { TimelineItem } from "../../../../core/client/state.ts";
import { FORWARD_SECRECY_TEXT } from "../../../../core/crypto/errors.ts";
import { MessageText } from "./MessageText.tsx";
import { Deleted, hasWarningNote, Notes } from "./SecurityRows.tsx";

type Item = Snapshot<TimelineItem>;

/** Spec §2.13 / §9: the reveal of a new message, 10 steps of 50 ms over a 20-character scramble. */
export const REVEAL_STEPS = 10;
export const REVEAL_STEP_MS = 50;
export const SCRAMBLE_LENGTH = 20;
const SYMBOLS = "!@#$%^&*<>[]{}/\\|=+~?:;";

/** Uris already revealed: a message scrambles once, not again when its channel is reopened. */
const revealed = new Set<string>();

function scramble(): string {
  let s = "";
  for (let k = 0; k < SCRAMBLE_LENGTH; k++) s += SYMBOLS[Math.floor(Math.random() * SYMBOLS.length)];
  return s;
}

function Reveal({ uri, text }: { uri: string; text: string }) {
  const [step, setStep] = useState(() => (revealed.has(uri) ? REVEAL_STEPS : 0));
  useEffect(() => {
    if (revealed.has(uri)) return;
    // One timer for all steps: the reveal lasts 10 × 50 ms however long each render takes.
    let n = 0;
    const t = setInterval(() => {
      if (++n >= REVEAL_STEPS) {
        clearInterval(t);
        revealed.add(uri);
      }
      setStep(n);
    }, REVEAL_STEP_MS);
    return () => clearInterval(t);
  }, [uri]);
  return step < REVEAL_STEPS ? (
    <span className="decrypting" aria-hidden="true">
      {scramble()}
    </span>
  ) : (
    <MessageText text={text} />
  );
}

/** Spec §2.13: five glitch blocks stand in for text that cannot (or cannot yet) be read. */
function Glitch({ why }: { why: string | null }) {
  return (
    <span className="glitch" title={why ?? "decrypting"}>
      <i />
      <i />
      <i />
      <i />
      <i />
    </span>
  );
}

function Body({ item: i }: { item: Item }) {
  if (i.text === null) {
    // Only the forward-secrecy text is for the user (spec §8); other decryption failures show the
    // failed style and keep their reason in the tooltip.
    return (
      <>
        <Glitch why={i.error} />
        {i.error === FORWARD_SECRECY_TEXT ? <span className="msg-error">{i.error}</span> : null}
      </>
    );
  }
  return (
    <>
      {i.isNew && i.state === "success" ? (
        <Reveal uri={i.uri} text={i.text} />
      ) : (
        <MessageText text={i.text} />
      )}
      {/* An own message that failed to go out keeps its text, with the reason. */}
      {i.state === "failed" ? <span className="msg-error">{i.error}</span> : null}
    </>
  );
}

/** The time a message shows: its signed time when it has one (protocol §7), else the server's. */
export const shownTime = (i: Item) => i.signedAt ?? i.createdAt;

/** `onRetry`: sends a failed own message again (shown on its ✗ row). */
export function MessageRow({ item: i, onRetry }: { item: Item; onRetry?: (uri: string) => void }) {
  // The engine already clears `verified` for such notes; the row does not rely on it.
  const verified = i.verified && !hasWarningNote(i.notes);
  const mark = i.sending ? "…" : i.state === "failed" ? "✗" : verified ? "✓" : "?";
  const at = shownTime(i);
  return (
    <div className={`msg ${i.sending ? "sending" : i.state}${i.deleted ? " deleted" : ""}`}>
      <time dateTime={at}>{clockTime(at)}</time>
      <b className="who" style={{ color: authorColor(i.author.did) }}>
        {handleWithoutSuffix(i.author.handle)}
      </b>
      <span className={`mark${verified ? " ok" : ""}`} title={verified ? "verified" : "unverified"}>
        {mark}
      </span>
      <span className="text">
        {i.deleted ? <Deleted d={i.deleted} /> : <Body item={i} />}
        {i.sending ? (
          <span className="tx">
            {i.queued ? "QUEUED: sends when the connection is back" : "TRANSMITTING"}
          </span>
        ) : null}
        {i.state === "failed" && i.clientMsgId && i.text !== null && onRetry ? (
          <button type="button" className="retry" onClick={() => onRetry(i.uri)}>
            retry
          </button>
        ) : null}
      </span>
      {i.notes?.length ? <Notes notes={i.notes} /> : null}
    </div>
  );
}

const VERB: Record<string, string> = {
  joined: " joined",
  left: " left",
  kicked: " was removed",
  "key-changed": "'s encryption key changed",
};

/** Notification lines (spec §2.8): joined →, left ←, kicked ×, other •; a key change is a warning. */
export function NoticeRow({ item: i }: { item: Item }) {
  return (
    <div className={`notice${i.action === "key-changed" ? " warning" : ""}`}>
      <time dateTime={i.createdAt}>{clockTime(i.createdAt)}</time>
      <span className="sym">{notifySymbol(i.action)}</span>
      {handleWithoutSuffix(i.author.handle)}
      {VERB[i.action ?? ""] ?? ""}
    </div>
  );
}
