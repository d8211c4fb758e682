import { REVEAL_EVENT, type RevealRequest } from "../chat/messages/reveal.ts";
import { host } from "./host.ts";

/**
 * "Open the channel at this message" (a search result, issue 32): opens the channel, loads older
 * pages until the message is in its view, then scrolls its row to the middle and marks it. A small
 * function beside the message list rather than a change to it: the list keeps its own scrolling,
 * and this only asks for the row by its id (`m-{did}-{clientMsgId}`, MessageRow.tsx).
 */

export interface MessageTarget {
  channelId: string;
  uri: string;
  seq: number;
  author: { did: string };
  clientMsgId: string | null;
}

/** Records per older page while looking for the message (the protocol's page maximum). */
const PAGE = 100;

/** Whether the channel's view holds the message now (loading older pages as needed). */
export async function loadUntil(target: MessageTarget): Promise<boolean> {
  const { state, client: load } = host();
  const client = await load();
  for (;;) {
    const view = state.open[target.channelId];
    if (!view) return false;
    if (view.items.some((i) => i.uri === target.uri)) return true;
    const oldest = view.items.find((i) => i.seq > 0)?.seq ?? 0;
    if (!view.hasMore || (oldest > 0 && oldest < target.seq)) return false;
    const before = view.items.length;
    await client.loadMore(target.channelId, PAGE);
    if (state.open[target.channelId]?.items.length === before) return false;
  }
}

const rowId = (t: MessageTarget) => (t.clientMsgId ? `m-${t.author.did}-${t.clientMsgId}` : null);

/** The row once it is drawn (a few frames after the view changed); null if it never is. */
function rowOf(t: MessageTarget, frames = 120): Promise<HTMLElement | null> {
  const id = rowId(t);
  if (!id) return Promise.resolve(null);
  return new Promise((resolve) => {
    let n = 0;
    const look = () => {
      const el = document.getElementById(id);
      if (el || ++n >= frames) resolve(el);
      else requestAnimationFrame(look);
    };
    look();
  });
}

/** Scrolls a message's row into the middle and marks it (`data-found`, until another is found). */
export function revealRow(el: HTMLElement): void {
  for (const old of document.querySelectorAll("[data-found]")) old.removeAttribute("data-found");
  el.setAttribute("data-found", "");
}

/**
 * Asks the open message list to bring the message's row into view (it is virtualized: the row may
 * not be rendered until the list scrolls to it). Falls back to the row by its id when no list answers.
 */
function askList(target: MessageTarget): Promise<HTMLElement | null> {
  return new Promise((resolve) => {
    let answered = false;
    const detail: RevealRequest = {
      channelId: target.channelId,
      uri: target.uri,
      done: (row) => {
        answered = true;
        resolve(row);
      },
    };
    window.dispatchEvent(new CustomEvent(REVEAL_EVENT, { detail }));
    if (!answered)
      void rowOf(target).then((row) => {
        if (answered) return;
        row?.scrollIntoView({ block: "center" });
        resolve(row);
      });
  });
}

/** Opens the channel at the message; false when it could not be shown (deleted since, not loadable). */
export async function openAtMessage(target: MessageTarget): Promise<boolean> {
  const { state, select } = host();
  await select(target.channelId);
  if (state.currentChannelId !== target.channelId) return false;
  if (!(await loadUntil(target))) return false;
  // The list draws the new page first (a frame), then finds the row.
  await new Promise((r) => requestAnimationFrame(() => r(undefined)));
  const el = await askList(target);
  if (!el) return false;
  revealRow(el);
  return true;
}
