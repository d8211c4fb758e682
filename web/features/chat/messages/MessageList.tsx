import { useVirtualizer } from "@tanstack/react-virtual";
import {
  type KeyboardEvent,
  memo,
  type ReactNode,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";
import { flushSync } from "react-dom";
import { type Snapshot, snapshot, subscribe, useSnapshot } from "valtio";
import type { ChannelView, TimelineItem } from "../../../../core/client/view/state.ts";
import { newestSeq } from "../../../../core/client/view/unread.ts";
import { Limits } from "../../../../core/protocol/limits.ts";
import { display } from "../../../state/display.ts";
import { engineState } from "../../../state/engine.ts";
import { loadMore, markRead, resendMessage } from "../../../state/message.ts";
import { AtprotoAuthors, useAtprotoAuthorSet } from "./atproto-authors.ts";
import { ESTIMATE_PX, useLearnedEstimate } from "./learned-estimate.ts";
import { firstUnread, focusable, type ListRow, readUpTo, UNREAD_KEY } from "./list-rows.ts";
import { MessageRow, NoticeRow } from "./MessageRow.tsx";
import { REVEAL_EVENT, type RevealRequest } from "./reveal.ts";
import { RowBuilder } from "./row-builder.ts";
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

/** Scrolling up loads the next older page this far (px) before the top is reached. */
export const LOAD_AHEAD_PX = 600;
/** A page loaded by scrolling: the server's largest (LOAD_MORE_DATA keeps the spec's 20). */
export const SCROLL_PAGE = Limits.pageMax;
/** A virtualized row's place: the virtualizer moves it (its transform) as rows are measured. */
const ROW_STYLE: React.CSSProperties = { position: "absolute", top: 0, left: 0, right: 0 };

const INTERACTIVE = "button, a[href], input, textarea, select, [tabindex]";

const toBottom = (el: HTMLElement | null) => {
  if (el) el.scrollTop = el.scrollHeight;
};

const retry = (channelId: string) => (uri: string) =>
  void resendMessage(channelId, uri).catch(() => {
    // The row shows ✗ again with the reason.
  });

/** What a row shows; drawn again only when what it shows changed (see sameRow). */
const RowContent = memo(function RowContent({
  row: r,
  channelId,
  loadingMore,
}: {
  row: ListRow;
  channelId: string;
  loadingMore: boolean;
}): ReactNode {
  switch (r.type) {
    case "more":
      return (
        <button
          type="button"
          className="load-more"
          disabled={loadingMore}
          onClick={() => void loadMore(channelId).catch(() => undefined)}
        >
          {loadingMore ? "LOADING_DATA..." : "LOAD_MORE_DATA"}
        </button>
      );
    case "day":
      return (
        <div className="day">
          <span>{r.label}</span>
        </div>
      );
    case "unread":
      return (
        <div className="unread-divider" data-testid="unread-divider">
          <span>new messages</span>
        </div>
      );
    case "fs":
      return (
        <div className="msg fs-run" data-testid="fs-run">
          {r.count} messages encrypted before you joined (forward secrecy)
        </div>
      );
    case "item": {
      const i = r.item;
      if (i.kind === "message")
        return (
          <MessageRow item={i} onRetry={retry(channelId)} presented={r.presented} channelId={channelId} />
        );
      // An unknown kind (a newer engine) still shows, as a message.
      const R = ROWS[i.kind] ?? MessageRow;
      return <R item={i} onRetry={retry(channelId)} />;
    }
  }
}, sameRow);

/**
 * Whether a row shows the same: the same item (a snapshot is a new object only when the item
 * changed) and the same replies, reactions and edits on it. Only changed rows render again when a
 * message arrives or the list scrolls, however long the channel.
 */
function sameRow(
  a: { row: ListRow; channelId: string; loadingMore: boolean },
  b: { row: ListRow; channelId: string; loadingMore: boolean },
): boolean {
  if (a.channelId !== b.channelId || a.loadingMore !== b.loadingMore) return false;
  const x = a.row;
  const y = b.row;
  if (x === y) return true;
  if (x.type !== y.type || x.key !== y.key) return false;
  if (x.type === "day" && y.type === "day") return x.label === y.label;
  if (x.type === "fs" && y.type === "fs") return x.count === y.count;
  if (x.type !== "item" || y.type !== "item") return true;
  if (x.item !== y.item) return false;
  const p = x.presented;
  const q = y.presented;
  if (!p || !q) return p === q;
  if (p.text !== q.text || p.edited !== q.edited || p.editConflict !== q.editConflict) return false;
  if (JSON.stringify(p.reactions) !== JSON.stringify(q.reactions)) return false;
  return JSON.stringify(p.replyTo) === JSON.stringify(q.replyTo);
}

/**
 * The open channel's view as a plain snapshot, without valtio's access tracking: the list reads
 * every item, and a tracked read of thousands of them on every change was the cost that grew with
 * the channel (issue 28). The snapshot of a view that did not change is the same object, so a
 * change elsewhere (typing, presence, another channel) does not render the list again.
 */
function useView(channelId: string): Snapshot<ChannelView> | undefined {
  const get = useCallback(() => snapshot(engineState).open[channelId], [channelId]);
  return useSyncExternalStore(watchEngine, get, get);
}

/** One subscription for the list's life (a new function per render subscribed again each time). */
const watchEngine = (cb: () => void) => subscribe(engineState, cb);

/**
 * The message list, oldest first, with date dividers (docs/decisions/message-list.md).
 * - Only the rows near the viewport are in the page (@tanstack/react-virtual); older pages load as
 *   the reader scrolls up, and the reading position stays put when they go in above.
 * - It follows new messages only while the reader is at the bottom (within 10 px); scrolled up, it
 *   stays put, counts what arrived and offers "↓ new messages".
 * - A "new messages" divider stands before the first message that was unread when the channel was
 *   opened, with "jump to first unread" while it is above the viewport.
 * - One tab stop: ↑/↓, Home/End and PageUp/PageDown move between messages, Enter (or →) reaches a
 *   message's actions, Esc (in the list or the message input) goes to the bottom and marks read.
 */
export function MessageList({ channelId, mobile }: { channelId: string; mobile: boolean }) {
  const view = useView(channelId);
  const me = useSnapshot(engineState).auth.user?.did ?? null;
  const hideQuiet = useSnapshot(display).hideMembership;
  const atprotoAuthors = useAtprotoAuthorSet(view?.members);
  const items = view?.items;
  const loaded = Array.isArray(items);
  const box = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const seen = useRef({ first: "", last: "", height: 0 });
  const [away, setAway] = useState(false);
  const [arrived, setArrived] = useState(0);
  // Rows are virtualized once the list has a size (a browser); without a layout (a hidden page,
  // happy-dom in the component tests) every row is rendered.
  const [sized, setSized] = useState(true);

  // ---- the "new messages" divider: the read marker as it was when the channel was opened -----------
  const [readAt, setReadAt] = useState<number | null>(null);
  const [dividerAbove, setDividerAbove] = useState(false);
  useEffect(() => {
    if (readAt !== null || !loaded || view?.loading) return;
    setReadAt(engineState.readMarkers[channelId] ?? 0);
  }, [readAt, loaded, view?.loading, channelId]);
  const unread = useMemo(
    () =>
      loaded ? firstUnread(items as readonly Snapshot<TimelineItem>[], readAt, me, !!view?.hasMore) : null,
    [loaded, items, readAt, me, view?.hasMore],
  );
  // The first unread may be older than what is loaded: more pages are needed to reach it.
  const unreadNotLoaded = useMemo(
    () =>
      readAt !== null &&
      readAt > 0 &&
      !unread &&
      !!view?.hasMore &&
      loaded &&
      (items as readonly Snapshot<TimelineItem>[]).some(
        (i) => i.kind === "message" && i.seq > readAt + 1 && i.author.did !== me,
      ) &&
      !(items as readonly Snapshot<TimelineItem>[]).some((i) => readUpTo(i, readAt)),
    [readAt, unread, view?.hasMore, loaded, items, me],
  );

  // The rows are kept up to date change by change (row-builder.ts): a send or a page costs the
  // rows of what changed, not of the whole channel.
  const builder = useRef<RowBuilder | null>(null);
  const rows = useMemo(() => {
    if (!loaded) return [];
    builder.current ??= new RowBuilder();
    return builder.current.build(
      items as readonly Snapshot<TimelineItem>[],
      me,
      !!view?.hasMore,
      unread?.uri ?? null,
      hideQuiet,
    );
  }, [loaded, items, me, view?.hasMore, unread, hideQuiet]);
  const rowsRef = useRef(rows);
  rowsRef.current = rows;
  // Where the "new messages" divider is (-1: none), found once per change of the rows.
  const unreadRow = useRef(-1);
  unreadRow.current = useMemo(
    () => (unread ? rows.findIndex((r) => r.key === UNREAD_KEY) : -1),
    [rows, unread],
  );

  // ---- keyboard: the focused row stays rendered ------------------------------------------------------
  const [activeKey, setActiveKey] = useState<string | null>(null);
  const activeIndex = useMemo(
    () => (activeKey ? rows.findIndex((r) => r.key === activeKey) : -1),
    [rows, activeKey],
  );
  const focusKey = useRef<string | null>(null);

  // The virtualizer recomputes every row's position when its key function changes (its measurements
  // are memoized on it): it changes with the rows, not on every render (each row measured renders
  // the list again, which cost a walk of the whole list per row).
  const getItemKey = useCallback((n: number) => rows[n]?.key ?? n, [rows]);
  const [revealing, setRevealing] = useState(false);
  const getScrollElement = useCallback(() => box.current, []);
  const { estimateSize, measureElement: measureRow } = useLearnedEstimate();
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement,
    estimateSize,
    measureElement: measureRow,
    getItemKey,
    overscan: 10,
    // Positions and the list's height are written to the DOM by the virtualizer: a row measured or
    // a scroll within the same rows renders nothing (issue 28: each measured row of a page going in
    // above rendered the list again, inside the scroll event).
    directDomUpdates: true,
    // A change of the rendered rows (a scroll, a row measured) renders in a task of its own, not
    // inside the task that caused it: the task that places a page of history and the list's render
    // of it were one long task (issue 28). A reveal (search's "open at") renders synchronously: the
    // virtualizer's scroll to an index measures the rows it renders on the way.
    useFlushSync: revealing,
    paddingStart: 8,
    paddingEnd: 8,
    rangeExtractor: (range) => {
      const out: number[] = [];
      const from = Math.max(0, range.startIndex - range.overscan);
      const to = Math.min(range.count - 1, range.endIndex + range.overscan);
      if (activeIndex >= 0 && activeIndex < from) out.push(activeIndex);
      for (let n = from; n <= to; n++) out.push(n);
      if (activeIndex > to && activeIndex < range.count) out.push(activeIndex);
      return out;
    },
  });

  // The rows' box is the virtualizer's too (it writes the box's height).
  const contentRef = useCallback(
    (el: HTMLDivElement | null) => {
      content.current = el;
      virt.containerRef(el);
    },
    [virt],
  );

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const check = () => setSized(el.clientHeight > 0);
    check();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(check);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const updateDivider = useCallback(() => {
    const el = box.current;
    if (!el) return;
    const at = unreadRow.current;
    // No divider (most of the time): nothing to look up in the page on a scroll.
    if (at < 0) return setDividerAbove(false);
    const d = el.querySelector<HTMLElement>(`[data-key="${UNREAD_KEY}"]`);
    let above = false;
    if (d) above = d.getBoundingClientRect().bottom < el.getBoundingClientRect().top;
    else if (at >= 0) {
      const first = el.querySelector<HTMLElement>(".row[data-index]");
      above = first ? at < Number(first.dataset.index) : false;
    }
    setDividerAbove(above);
  }, []);

  // The rows on screen change in a render of their own (useFlushSync: false), after the scroll event
  // that moved them: where the divider is, is looked at again once they are rendered ("jump to first
  // unread" went on showing with the divider on screen).
  const rangeKey = `${virt.range?.startIndex ?? -1}:${virt.range?.endIndex ?? -1}`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the rendered rows change.
  useLayoutEffect(() => updateDivider(), [rangeKey, updateDivider]);

  const loadOlder = useCallback(() => {
    const v = engineState.open[channelId];
    if (!v?.hasMore || v.loadingMore || v.loading) return;
    void loadMore(channelId, SCROLL_PAGE).catch(() => undefined);
  }, [channelId]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const gap = el.scrollHeight - el.scrollTop - el.clientHeight;
    stick.current = gap <= STICK_PX;
    setAway(gap > AWAY_PX);
    if (stick.current) setArrived(0);
    // Older pages come in as the reader nears the top: no click needed (LOAD_MORE_DATA stays).
    if (sized && !stick.current && el.scrollTop < LOAD_AHEAD_PX) loadOlder();
    updateDivider();
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the items change, and only then.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el || !loaded) return;
    const list = items as readonly Snapshot<TimelineItem>[];
    const prev = seen.current;
    // The oldest record (not an epoch row, which the client places and may keep first).
    const first = list.find((i) => Number.isInteger(i.seq) && i.seq > 0)?.uri ?? "";
    const last = list.at(-1);
    if (stick.current || last?.sending) {
      stick.current = true;
      toBottom(el);
    } else {
      // An older page went in above: keep what the reader is looking at in place.
      if (prev.first && first !== prev.first) el.scrollTop += el.scrollHeight - prev.height;
      // Searched from the end: what arrived is there.
      let at = list.length - 1;
      while (at >= 0 && (list[at] as Snapshot<TimelineItem>).uri !== prev.last) at--;
      if (at >= 0) setArrived((n) => n + list.length - 1 - at);
    }
    seen.current = { first, last: last?.uri ?? "", height: el.scrollHeight };
    updateDivider();
  }, [items]);

  // Rows measured after they render change the height below a reader who follows the bottom.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the rows' box is another element once the list has a size or items.
  useEffect(() => {
    const el = content.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(() => {
      const list = box.current;
      if (!list) return;
      if (stick.current) toBottom(list);
      seen.current.height = list.scrollHeight;
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [sized, loaded]);

  // A page that does not fill the screen yet: the next one loads (only once the list has a size).
  // biome-ignore lint/correctness/useExhaustiveDependencies: checked again after each change of the items.
  useEffect(() => {
    const el = box.current;
    if (!el || !sized || !loaded || view?.loading) return;
    if (el.scrollHeight <= el.clientHeight + LOAD_AHEAD_PX / 2 && view?.hasMore) loadOlder();
  }, [sized, loaded, items, view?.hasMore, view?.loading, loadOlder]);

  // Keep the message row out of the Tab order: the list is one tab stop (issue 28), and a message's
  // buttons and links are reached from the focused message (Enter), not by tabbing through each.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the rows' box is another element once the list has a size or items.
  useLayoutEffect(() => {
    const el = content.current;
    if (!el) return;
    const quiet = (root: Element) => {
      for (const n of root.querySelectorAll<HTMLElement>(INTERACTIVE))
        if (!n.classList.contains("row") && n.tabIndex !== -1) n.tabIndex = -1;
    };
    quiet(el);
    if (typeof MutationObserver === "undefined") return;
    // Only what was added is looked at (a page of rows going in, not every row on screen again).
    const mo = new MutationObserver((records) => {
      for (const r of records)
        for (const n of r.addedNodes) {
          if (!(n instanceof HTMLElement)) continue;
          if (n.matches(INTERACTIVE) && !n.classList.contains("row") && n.tabIndex !== -1) n.tabIndex = -1;
          quiet(n);
        }
    });
    mo.observe(el, { subtree: true, childList: true });
    return () => mo.disconnect();
  }, [sized, loaded]);

  // Read while it is on screen: at the bottom of a visible page, the newest record is read (debounced;
  // the server keeps the marker and tells this user's other devices).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the newest seq changes with the items only.
  const newest = useMemo(() => (loaded ? newestSeq(view as ChannelView) : 0), [loaded, items]);
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

  /** Esc: to the newest message, the channel read, the divider gone (as in Slack). */
  const toLatest = useCallback(
    (opts: { read: boolean }) => {
      stick.current = true;
      setArrived(0);
      toBottom(box.current);
      if (opts.read) {
        const v = engineState.open[channelId];
        const n = v ? newestSeq(v) : 0;
        if (n) void markRead(channelId, n).catch(() => undefined);
        setReadAt(n || 0);
      }
    },
    [channelId],
  );

  /** The jump bar's ✕: read, without moving. */
  const markHereRead = () => {
    const v = engineState.open[channelId];
    const n = v ? newestSeq(v) : 0;
    if (n) void markRead(channelId, n).catch(() => undefined);
    setReadAt(n || 0);
  };

  // Esc in the message input (when it is not cancelling a reply or an edit) does the same;
  // Shift+Esc (all channels read, web/features/chat/board-keys.ts) clears the divider here too.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (e.shiftKey) {
        setReadAt(newestSeq(engineState.open[channelId]));
        return;
      }
      if (t?.closest?.(".composer") && t.tagName === "TEXTAREA") toLatest({ read: true });
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [channelId, toLatest]);

  /** Moves the focus to a row (scrolled into view first: it may not be rendered yet). */
  const focusRow = useCallback(
    (n: number) => {
      const row = rowsRef.current[n];
      if (!row) return;
      stick.current = false;
      setActiveKey(row.key);
      focusKey.current = row.key;
      if (sized) virt.scrollToIndex(n, { align: "auto" });
      const el = box.current?.querySelector<HTMLElement>(`.row[data-key="${CSS.escape(row.key)}"]`);
      if (el) {
        el.focus({ preventScroll: sized });
        if (!sized) el.scrollIntoView?.({ block: "nearest" });
        focusKey.current = null;
      }
    },
    [sized, virt],
  );
  // "Open at this message" (a search result, web/features/search/open-at.ts): the list scrolls the
  // message's row into the middle, rendering it if the virtualizer had not, and marks it.
  useEffect(() => {
    const onReveal = (e: Event) => {
      const d = (e as CustomEvent<RevealRequest>).detail;
      if (d.channelId !== channelId) return;
      const n = rowsRef.current.findIndex((r) => r.key === d.uri);
      if (n < 0) return d.done(null);
      stick.current = false;
      flushSync(() => setRevealing(true));
      if (sized) virt.scrollToIndex(n, { align: "center" });
      let frames = 0;
      const look = () => {
        const el = box.current?.querySelector<HTMLElement>(`.row[data-key="${CSS.escape(d.uri)}"] .msg`);
        if (el || ++frames > 120) {
          if (el && !sized) el.scrollIntoView?.({ block: "center" });
          setRevealing(false);
          d.done(el ?? null);
        } else requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    };
    window.addEventListener(REVEAL_EVENT, onReveal);
    return () => window.removeEventListener(REVEAL_EVENT, onReveal);
  }, [channelId, sized, virt]);

  // A row asked for before it was rendered gets the focus once it is.
  useLayoutEffect(() => {
    const key = focusKey.current;
    if (!key) return;
    const el = box.current?.querySelector<HTMLElement>(`.row[data-key="${CSS.escape(key)}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      focusKey.current = null;
    }
  });

  const step = (from: number, dir: 1 | -1, by = 1): number => {
    let n = from;
    let found = from;
    for (let moved = 0; moved < by; ) {
      n += dir;
      if (n < 0 || n >= rows.length) break;
      if (focusable(rows[n])) {
        found = n;
        moved++;
      }
    }
    return found;
  };
  const lastFocusable = () => step(rows.length, -1);
  const firstFocusable = () => step(-1, 1);

  const onListFocus = (e: React.FocusEvent<HTMLDivElement>) => {
    const el = box.current;
    const t = e.target as HTMLElement;
    if (!el) return;
    if (t.classList.contains("row") && t.dataset.key && t.dataset.key !== activeKey)
      setActiveKey(t.dataset.key);
    // Tabbing in (not a click) lands on the last row the reader was on, else on the newest one on
    // screen.
    if (t !== el || !el.matches(":focus-visible")) return;
    if (activeIndex >= 0) return focusRow(activeIndex);
    const shown = [...el.querySelectorAll<HTMLElement>(".row[data-index]")].filter((r) => {
      const b = r.getBoundingClientRect();
      const top = el.getBoundingClientRect();
      return b.top >= top.top - 1 && b.bottom <= top.bottom + 1;
    });
    const newestShown = shown.reverse().find((r) => focusable(rows[Number(r.dataset.index)]));
    const n = newestShown ? Number(newestShown.dataset.index) : lastFocusable();
    if (n >= 0 && n < rows.length) focusRow(n);
  };

  const onListKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const el = box.current;
    if (!el) return;
    const target = e.target as HTMLElement;
    // Keys in a dialog opened from a message (rendered elsewhere, bubbling here through React) are its own.
    if (!el.contains(target)) return;
    const rowEl = target.closest<HTMLElement>(".row[data-index]");
    const onRow = target === rowEl;
    if (e.key === "Tab") {
      // Out of the list in one step either way: Shift+Tab must not land on the list itself.
      if (e.shiftKey) {
        el.tabIndex = -1;
        setTimeout(() => {
          el.tabIndex = 0;
        }, 0);
      }
      return;
    }
    if (rowEl && !onRow) {
      // Inside a message: ←/→ between its buttons and links, Esc back to the message.
      const controls = [...rowEl.querySelectorAll<HTMLElement>(INTERACTIVE)].filter((c) => c !== rowEl);
      const at = controls.indexOf(target);
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        rowEl.focus();
      } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        e.preventDefault();
        const next = controls[at + (e.key === "ArrowRight" ? 1 : -1)];
        next?.focus();
      }
      return;
    }
    const current = rowEl ? Number(rowEl.dataset.index) : activeIndex;
    let to: number | null = null;
    const page = Math.max(1, Math.floor(el.clientHeight / (ESTIMATE_PX * 1.5)));
    switch (e.key) {
      case "ArrowUp":
        to = current < 0 ? lastFocusable() : step(current, -1);
        if (to === current && view?.hasMore) loadOlder();
        break;
      case "ArrowDown":
        to = current < 0 ? lastFocusable() : step(current, 1);
        break;
      case "PageUp":
        to = step(current < 0 ? rows.length : current, -1, page);
        break;
      case "PageDown":
        to = step(current < 0 ? -1 : current, 1, page);
        break;
      case "Home":
        to = firstFocusable();
        if (view?.hasMore) loadOlder();
        break;
      case "End":
        to = lastFocusable();
        break;
      case "Enter":
      case "ArrowRight":
      case "F2":
        if (rowEl) {
          // The message's own actions first (Reply), not its author's name (which opens a conversation).
          const controls = [...rowEl.querySelectorAll<HTMLElement>(INTERACTIVE)].filter((c) => c !== rowEl);
          const first = controls.find((c) => !c.classList.contains("who")) ?? controls[0];
          if (first) {
            e.preventDefault();
            first.focus();
          }
        }
        return;
      case "Escape":
        if (e.shiftKey) return;
        e.preventDefault();
        toLatest({ read: true });
        if (rows.length) setActiveKey(rows[lastFocusable()]?.key ?? null);
        return;
      default:
        return;
    }
    e.preventDefault();
    if (to !== null && to >= 0) focusRow(to);
  };

  const [jumping, setJumping] = useState(0);
  const jumpToUnread = async () => {
    // Older pages until the first unread message is loaded (or there is nothing older).
    for (let n = 0; n < 200; n++) {
      const v = engineState.open[channelId];
      if (!v?.hasMore || readAt === null) break;
      if (v.items.some((i) => readUpTo(i, readAt))) break;
      await loadMore(channelId, SCROLL_PAGE).catch(() => undefined);
    }
    stick.current = false;
    setJumping((n) => n + 1);
  };
  // The divider is in the rows once the render after the last page is done: then go to it.
  useLayoutEffect(() => {
    if (!jumping) return;
    const at = rows.findIndex((r) => r.key === UNREAD_KEY);
    if (at < 0) return;
    setJumping(0);
    stick.current = false;
    if (sized) virt.scrollToIndex(at, { align: "start" });
    else box.current?.querySelector(`[data-key="${UNREAD_KEY}"]`)?.scrollIntoView?.({ block: "start" });
    updateDivider();
  }, [jumping, rows, sized, virt, updateDivider]);

  if (!view) return null;

  const wrap = (r: ListRow, n: number, style?: React.CSSProperties) => (
    <div
      key={r.key}
      className={`row${r.key === activeKey ? " active" : ""}`}
      data-index={n}
      data-key={r.key}
      ref={sized ? virt.measureElement : undefined}
      tabIndex={focusable(r) ? -1 : undefined}
      style={style}
    >
      <RowContent row={r} channelId={channelId} loadingMore={r.type === "more" && !!view.loadingMore} />
    </div>
  );

  let body: ReactNode;
  if (!loaded) body = <p className="chat-error">Error loading messages</p>;
  else if (!sized) body = <div ref={content}>{rows.map((r, n) => wrap(r, n))}</div>;
  else {
    const shown = virt.getVirtualItems();
    body = (
      <div ref={contentRef} className="rows">
        {shown.map((v) => {
          const r = rows[v.index];
          // The virtualizer sets each row's transform and the box's height (directDomUpdates).
          return r ? wrap(r, v.index, ROW_STYLE) : null;
        })}
      </div>
    );
  }
  const showJump = (dividerAbove && !!unread) || unreadNotLoaded;
  return (
    <div className="chat-scroll">
      {showJump ? (
        <div className="jump-unread" role="status">
          <button type="button" onClick={() => void jumpToUnread()}>
            ↑ jump to first unread
          </button>
          <button type="button" aria-label="Mark as read" onClick={markHereRead}>
            ✕
          </button>
        </div>
      ) : null}
      {away ? (
        <button
          type="button"
          className={`to-bottom${mobile ? "" : " desktop"}`}
          aria-label="Scroll to bottom"
          onClick={() => toLatest({ read: false })}
        >
          ↓{!mobile && arrived ? " new messages" : ""}
          {arrived ? <span className="badge">{arrived}</span> : null}
        </button>
      ) : null}
      <div
        className={`chat-list${sized ? " virtual" : ""}`}
        ref={box}
        onScroll={onScroll}
        onFocus={onListFocus}
        onKeyDown={onListKey}
        role="log"
        aria-live="polite"
        aria-label="Messages"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the list is one tab stop; the arrow keys move between its messages.
        tabIndex={0}
      >
        <AtprotoAuthors.Provider value={atprotoAuthors}>{body}</AtprotoAuthors.Provider>
        {loaded && !items.length ? (
          <p className="chat-note">{view.loading ? "LOADING..." : "NO_MESSAGES_YET"}</p>
        ) : null}
      </div>
    </div>
  );
}
