import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from "react";
import { type Snapshot, useSnapshot } from "valtio";
import { presentTimeline } from "../../../../core/client/channel/rich.ts";
import { dayLabel } from "../../../../core/client/view/display.ts";
import type { ChannelView, TimelineItem } from "../../../../core/client/view/state.ts";
import { newestSeq } from "../../../../core/client/view/unread.ts";
import { FORWARD_SECRECY_TEXT } from "../../../../core/crypto/errors.ts";
import { display } from "../../../state/display.ts";
import { engineState } from "../../../state/engine.ts";
import { loadMore, markRead, resendMessage } from "../../../state/message.ts";
import { MessageRow, NoticeRow, shownTime } from "./MessageRow.tsx";
import { shownItems } from "./quiet-rows.ts";
import { EpochRow, MissingRow } from "./SecurityRows.tsx";

type Row = (p: { item: Snapshot<TimelineItem>; onRetry?: (uri: string) => void }) => ReactNode;
const ROWS: Record<TimelineItem["kind"], Row> = {
  message: MessageRow,
  notify: NoticeRow,
  epoch: EpochRow,
  missing: MissingRow,
};

/** How long the newest message must stay on screen before the channel counts as read. */
export const MARK_READ_DELAY_MS = 600;

/** Spec §4.5 / §9 scroll thresholds. */
export const STICK_PX = 10;
export const AWAY_PX = 100;

const toBottom = (el: HTMLElement | null) => {
  if (el) el.scrollTop = el.scrollHeight;
};

/**
 * The message list, oldest first, with date dividers. It follows new messages only while the reader
 * is at the bottom (within 10 px); scrolled up, it stays put and, on mobile, counts what arrived.
 */
export function MessageList({ channelId, mobile }: { channelId: string; mobile: boolean }) {
  const snap = useSnapshot(engineState);
  const view = snap.open[channelId];
  const me = snap.auth.user?.did;
  const items = view?.items;
  const hideQuiet = useSnapshot(display).hideMembership;
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const seen = useRef({ first: "", last: "", height: 0 });
  const [away, setAway] = useState(false);
  const [unread, setUnread] = useState(0);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const gap = el.scrollHeight - el.scrollTop - el.clientHeight;
    stick.current = gap <= STICK_PX;
    setAway(gap > AWAY_PX);
    if (stick.current) setUnread(0);
  };

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || !Array.isArray(items)) return;
    const prev = seen.current;
    const first = items[0]?.uri ?? "";
    const last = items.at(-1);
    if (stick.current || last?.sending) {
      stick.current = true;
      toBottom(el);
    } else {
      // An older page went in above: keep what the reader is looking at in place.
      if (prev.first && first !== prev.first) el.scrollTop += el.scrollHeight - prev.height;
      const at = items.findIndex((i) => i.uri === prev.last);
      if (at >= 0) setUnread((n) => n + items.length - 1 - at);
    }
    seen.current = { first, last: last?.uri ?? "", height: el.scrollHeight };
  }, [items]);

  // Read while it is on screen: at the bottom of a visible page, the newest record is read (debounced;
  // the server keeps the marker and tells this user's other devices).
  const newest = Array.isArray(items) ? newestSeq(view as ChannelView) : 0;
  const [visible, setVisible] = useState(true);
  useEffect(() => {
    const on = () => setVisible(document.visibilityState === "visible");
    on();
    document.addEventListener("visibilitychange", on);
    return () => document.removeEventListener("visibilitychange", on);
  }, []);
  useEffect(() => {
    if (!newest || away || !visible) return;
    const t = setTimeout(() => {
      if (stick.current) void markRead(channelId, newest).catch(() => undefined);
    }, MARK_READ_DELAY_MS);
    return () => clearTimeout(t);
  }, [channelId, newest, away, visible]);

  if (!view) return null;
  const retry = (uri: string) =>
    void resendMessage(channelId, uri).catch(() => {
      // The row shows ✗ again with the reason.
    });
  let body: ReactNode;
  if (!Array.isArray(items)) body = <p className="chat-error">Error loading messages</p>;
  else {
    const rows: ReactNode[] = [];
    let day = "";
    // Array.isArray narrows a snapshot's readonly array to any[]: give the items their type back.
    const all: readonly Snapshot<TimelineItem>[] = items;
    // The display setting may hide join/leave and routine epoch rows (never a warning): quiet-rows.ts.
    const list = shownItems(all, hideQuiet);
    // History a newcomer cannot read: a run of such rows is one line, not a wall of glitch blocks.
    const presented = new Map(
      presentTimeline(all as TimelineItem[], me ?? null).map((p) => [p.item.uri, p] as const),
    );
    const unreadable = (i: Snapshot<TimelineItem>) =>
      i.kind === "message" && i.text === null && i.error === FORWARD_SECRECY_TEXT && !i.deleted;
    for (let n = 0; n < list.length; n++) {
      const i = list[n] as Snapshot<TimelineItem>;
      if (unreadable(i) && n + 1 < list.length && unreadable(list[n + 1] as Snapshot<TimelineItem>)) {
        let end = n;
        while (end + 1 < list.length && unreadable(list[end + 1] as Snapshot<TimelineItem>)) end++;
        rows.push(
          <div className="msg fs-run" key={`fs${i.uri}`} data-testid="fs-run">
            {end - n + 1} messages encrypted before you joined (forward secrecy)
          </div>,
        );
        n = end;
        continue;
      }
      // A run of missing records has no time of its own: it never starts a day.
      const d = i.kind === "missing" ? day : dayLabel(shownTime(i));
      if (d !== day) {
        day = d;
        rows.push(
          <div className="day" key={`d${i.uri}`}>
            <span>{d}</span>
          </div>,
        );
      }
      // An unknown kind (a newer engine) still shows, as a message.
      const R = ROWS[i.kind] ?? MessageRow;
      // Reactions and edits are not rows: they show on the message they are about.
      if (i.rich?.type === "reaction" || i.rich?.type === "edit") continue;
      if (i.kind === "message")
        rows.push(
          <MessageRow
            key={i.uri}
            item={i}
            onRetry={retry}
            presented={presented.get(i.uri)}
            channelId={channelId}
          />,
        );
      else rows.push(<R key={i.uri} item={i} onRetry={retry} />);
    }
    body = (
      <>
        {view.hasMore ? (
          <button
            type="button"
            className="load-more"
            disabled={view.loadingMore}
            onClick={() => void loadMore(channelId).catch(() => undefined)}
          >
            {view.loadingMore ? "LOADING_DATA..." : "LOAD_MORE_DATA"}
          </button>
        ) : null}
        {rows}
        {items.length ? null : <p className="chat-note">{view.loading ? "LOADING..." : "NO_MESSAGES_YET"}</p>}
      </>
    );
  }
  return (
    <div className="chat-scroll">
      <div className="chat-list" ref={box} onScroll={onScroll} role="log" aria-live="polite">
        {body}
      </div>
      {mobile && away ? (
        <button
          type="button"
          className="to-bottom"
          aria-label="Scroll to bottom"
          onClick={() => {
            stick.current = true;
            toBottom(box.current);
          }}
        >
          ↓{unread ? <span className="badge">{unread}</span> : null}
        </button>
      ) : null}
    </div>
  );
}
