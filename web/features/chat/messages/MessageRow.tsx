import { useEffect, useState } from "react";
import type { Snapshot } from "valtio";
import type { PresentedItem } from "../../../../core/client/channel/rich.ts";
import {
  authorColor,
  clockTime,
  handleWithoutSuffix,
  notifySymbol,
} from "../../../../core/client/view/display.ts";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { FORWARD_SECRECY_TEXT } from "../../../../core/crypto/errors.ts";
import { AtprotoBadge } from "../../../components/AtprotoBadge.tsx";
import { lazyPart } from "../../../components/lazy-part.tsx";
import { Modal } from "../../../components/Modal.tsx";
import { toast } from "../../../components/toast.ts";
import { compose, toggleReaction } from "../../../state/compose.ts";
import { openConversation } from "../../../state/direct.ts";
import { deleteMessage } from "../../../state/message.ts";
import { Files } from "../files/lazy.tsx";
import { useIsAtprotoAuthor } from "./atproto-authors.ts";
import { MessageText } from "./MessageText.tsx";
import { Deleted, hasWarningNote, Notes } from "./SecurityRows.tsx";
import { useMyDid } from "./use-user.ts";

type Item = Snapshot<TimelineItem>;

/** Every emoji, searchable (issue 28); its code and table load when it is first opened. */
const EmojiPicker = lazyPart(
  () => import("../emoji/EmojiPicker.tsx").then((m) => m.EmojiPicker),
  "the emoji picker",
  <span className="emoji-picker loading">…</span>,
);

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

function Body({ item: i, text }: { item: Item; text: string | null }) {
  if (i.rich?.type === "unknown")
    return <span className="msg-unsupported">Unsupported message (sent by a newer client)</span>;
  if (text === null) {
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
      {i.isNew && i.state === "success" ? <Reveal uri={i.uri} text={text} /> : <MessageText text={text} />}
      {/* An own message that failed to go out keeps its text, with the reason. */}
      {i.state === "failed" ? <span className="msg-error">{i.error}</span> : null}
    </>
  );
}

/** The time a message shows: its signed time when it has one (protocol §7), else the server's. */
export const shownTime = (i: Item) => i.signedAt ?? i.createdAt;

/** What the message answers, above it; a click goes to it when it is loaded. */
function ReplyQuote({
  to,
  target,
}: {
  to: NonNullable<Item["rich"]>["to"];
  target: PresentedItem["replyTo"];
}) {
  if (!target || !to) return null;
  if (!target.loaded) return <div className="reply-quote">↳ reply to an earlier message</div>;
  return (
    <button
      type="button"
      className="reply-quote"
      onClick={() =>
        document.getElementById(`m-${to.did}-${to.clientMsgId}`)?.scrollIntoView({ block: "center" })
      }
    >
      ↳ {handleWithoutSuffix(target.author.handle)}: {(target.text ?? "…").slice(0, 120)}
    </button>
  );
}

const DeleteText = {
  title: "Delete this message?",
  body: "Delete this message for everyone? Its text is wiped on the server.",
  confirm: "Delete",
  cancel: "Cancel",
} as const;

/** Reply, react, edit and delete on a message (edit and delete on one's own). */
function Actions({ item: i, channelId, mine }: { item: Item; channelId: string; mine: boolean }) {
  const [picking, setPicking] = useState(false);
  const [deleting, setDeleting] = useState(false);
  if (!i.clientMsgId || i.seq <= 0 || i.deleted || i.state !== "success" || i.sending) return null;
  const fail = (e: unknown) => void toast.error(e instanceof Error ? e.message : "Failed");
  return (
    <span className="msg-actions">
      <button
        type="button"
        aria-label="Reply"
        title="Reply"
        onClick={() => {
          compose.editing = null;
          compose.replyTo = { channelId, uri: i.uri };
          document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')?.focus();
        }}
      >
        ↩
      </button>
      <button
        type="button"
        aria-label="React"
        title="React"
        aria-expanded={picking}
        onClick={() => setPicking(!picking)}
      >
        ☺
      </button>
      {picking ? (
        <EmojiPicker
          onClose={() => setPicking(false)}
          onPick={(e) => {
            setPicking(false);
            void toggleReaction(channelId, i.uri, e, false).catch(fail);
          }}
        />
      ) : null}
      {mine ? (
        <>
          <button
            type="button"
            aria-label="Edit"
            title="Edit"
            onClick={() => {
              compose.replyTo = null;
              compose.editing = { channelId, uri: i.uri };
            }}
          >
            ✎
          </button>
          <button type="button" aria-label="Delete" title="Delete" onClick={() => setDeleting(true)}>
            🗑
          </button>
          {deleting ? (
            // The app's own dialog (issue 28: the browser's confirm() looked like another site's),
            // opening on Cancel, the safe choice.
            <Modal
              title={DeleteText.title}
              labelledBy={`del-${i.clientMsgId}`}
              portal
              onEscape={() => setDeleting(false)}
            >
              <p>{DeleteText.body}</p>
              <div className="actions">
                <button
                  type="button"
                  className="danger"
                  onClick={() => {
                    setDeleting(false);
                    void deleteMessage(i.uri).catch(fail);
                  }}
                >
                  {DeleteText.confirm}
                </button>
                <button type="button" onClick={() => setDeleting(false)} data-autofocus>
                  {DeleteText.cancel}
                </button>
              </div>
            </Modal>
          ) : null}
        </>
      ) : null}
    </span>
  );
}

/** `onRetry`: sends a failed own message again (shown on its ✗ row). */
export function MessageRow({
  item: i,
  onRetry,
  presented,
  channelId,
}: {
  item: Item;
  onRetry?: (uri: string) => void;
  presented?: PresentedItem;
  channelId?: string;
}) {
  const me = useMyDid();
  // The badge of an ATProto account (Member.atproto), from the list's set of such members.
  const atproto = useIsAtprotoAuthor(i.author.did);
  const text = presented ? presented.text : i.text;
  // The engine already clears `verified` for such notes; the row does not rely on it.
  const verified = i.verified && !hasWarningNote(i.notes);
  const mark = i.sending ? "…" : i.state === "failed" ? "✗" : verified ? "✓" : "?";
  const at = shownTime(i);
  return (
    <div
      className={`msg ${i.sending ? "sending" : i.state}${i.deleted ? " deleted" : ""}`}
      id={i.clientMsgId && i.author.did ? `m-${i.author.did}-${i.clientMsgId}` : undefined}
    >
      {i.rich?.type === "reply" ? <ReplyQuote to={i.rich.to} target={presented?.replyTo ?? null} /> : null}
      <time dateTime={at}>{clockTime(at)}</time>
      {/* Issue 30: another person's (signed) name is a way to write to them; a name only the
          server vouches for ("did:… (unverified name)") is not. */}
      {channelId && me && i.author.did && i.author.did !== me && !i.author.handle.startsWith("did:") ? (
        <button
          type="button"
          className="who"
          style={{ color: authorColor(i.author.did) }}
          title={`Message ${handleWithoutSuffix(i.author.handle)}`}
          onClick={() => void openConversation(i.author.handle, null).catch(() => undefined)}
        >
          {handleWithoutSuffix(i.author.handle)}
        </button>
      ) : (
        <b className="who" style={{ color: authorColor(i.author.did) }}>
          {handleWithoutSuffix(i.author.handle)}
        </b>
      )}
      {atproto ? <AtprotoBadge /> : null}
      <span className={`mark${verified ? " ok" : ""}`} title={verified ? "verified" : "unverified"}>
        {mark}
      </span>
      <span className="text">
        {i.deleted ? <Deleted d={i.deleted} /> : <Body item={i} text={text} />}
        {presented?.edited ? <small className="edited"> (edited)</small> : null}
        {presented?.editConflict ? <small className="edited"> (edit conflict)</small> : null}
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
      {i.file && <Files item={i} />}
      {i.notes?.length ? <Notes notes={i.notes} /> : null}
      {presented?.reactions.length && channelId ? (
        <span className="reactions">
          {presented.reactions.map((r) => (
            <button
              key={r.emoji}
              type="button"
              className={r.mine ? "mine" : undefined}
              aria-pressed={r.mine}
              aria-label={`${r.emoji} ${r.count}`}
              onClick={() => void toggleReaction(channelId, i.uri, r.emoji, r.mine).catch(() => undefined)}
            >
              {r.emoji} {r.count}
            </button>
          ))}
        </span>
      ) : null}
      {channelId ? <Actions item={i} channelId={channelId} mine={!!me && i.author.did === me} /> : null}
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
