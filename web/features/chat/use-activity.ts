import { useEffect, useRef } from "react";
import { type Snapshot, useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import type { ClientState } from "../../../core/client/view/state.ts";
import { newestSeq, type Unread, unreadOf } from "../../../core/client/view/unread.ts";
import { engineState, loadClient } from "../../state/engine.ts";
import { levelOf, notify, shouldNotify } from "../../state/notify.ts";

/** Joined channels kept live in the background for their counts (the rest count when opened). */
export const LIVE_CHANNELS_MAX = 30;
const TITLE = "wsync";

/**
 * The channels kept live: direct conversations (not requests: a stranger's stays unread until taken
 * in) first, then joined channels.
 */
export function liveIds(snap: Snapshot<ClientState>): string[] {
  const dms = (snap.conversations ?? []).filter((c) => !c.request).map((c) => c.channel.id);
  return [...dms, ...snap.channels.filter((c) => c.isMember).map((c) => c.id)];
}

/** Unread counts and mentions per joined channel and conversation (none for the one being read), and the totals. */
export function unreadCounts(snap: Snapshot<ClientState>): {
  byChannel: Record<string, Unread>;
  total: number;
  mentions: number;
} {
  // Read-only use of a snapshot.
  const s = snap as ClientState;
  const me = s.auth.user;
  const byChannel: Record<string, Unread> = {};
  let total = 0;
  let mentions = 0;
  if (!me) return { byChannel, total, mentions };
  for (const id of liveIds(s)) {
    const view = s.open[id];
    if (!view || id === s.currentChannelId) continue;
    const u = unreadOf(view, s.readMarkers[id] ?? 0, me);
    byChannel[id] = u;
    total += u.count;
    mentions += u.mentions;
  }
  return { byChannel, total, mentions };
}

/**
 * The board's background work for "what is new": the read markers from the server, joined channels
 * kept live, the window title with the totals, and notifications for new messages.
 */
export function useActivity(): void {
  const s = useSnapshot(engineState);
  const joinedKey = liveIds(s).join(",");
  const authed = s.auth.isAuthenticated;

  useEffect(() => {
    if (!authed) return;
    void loadClient().then(async (c) => {
      await c.refreshReadMarkers().catch(() => undefined);
      const ids = joinedKey ? joinedKey.split(",").slice(0, LIVE_CHANNELS_MAX) : [];
      await c.openInBackground(ids);
    });
  }, [authed, joinedKey]);

  const { total, mentions } = unreadCounts(s);
  useEffect(() => {
    document.title = total ? `(${total}${mentions ? ` · @${mentions}` : ""}) ${TITLE}` : TITLE;
  }, [total, mentions]);

  // New live messages notify once each; what was loaded (history) never does (but see
  // direct/DirectList.tsx for a conversation that arrived while the board was open).
  const notified = useRef<Record<string, number>>({});
  useEffect(() => {
    const me = engineState.auth.user;
    if (!me) return;
    for (const [id, view] of Object.entries(engineState.open)) {
      const newest = newestSeq(view);
      const last = notified.current[id];
      notified.current[id] = Math.max(last ?? 0, newest);
      if (last === undefined) continue;
      // The new ones are at the end (items are in seq order): not a walk of the whole channel.
      let from = view.items.length;
      while (from > 0) {
        const seq = view.items[from - 1]?.seq ?? 0;
        if (seq !== 0 && seq <= last) break;
        from--;
      }
      for (const i of view.items.slice(from)) {
        if (i.kind !== "message" || !i.isNew || i.seq <= last || i.author.did === me.did) continue;
        if (!shouldNotify(levelOf(me.did, id, view.channel.value.type === "direct"), i, me.handle)) continue;
        notify({
          did: me.did,
          channelName: view.channel.value.name,
          author: handleWithoutSuffix(i.author.handle),
          text: i.text ?? "",
          lookingAtIt: document.visibilityState === "visible" && engineState.currentChannelId === id,
        });
      }
    }
  });
}
