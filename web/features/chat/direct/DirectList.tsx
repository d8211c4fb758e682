import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { conversationTitle } from "../../../../core/client/view/conversation-title.ts";
import { handleWithoutSuffix } from "../../../../core/client/view/display.ts";
import { displaySafe } from "../../../../core/slash-commands/display-safe.ts";
import { lazyPart } from "../../../components/lazy-part.tsx";
import { engineState } from "../../../state/engine.ts";
import { levelOf, notify, shouldNotify } from "../../../state/notify.ts";
import { unreadCounts } from "../use-activity.ts";
import { openDirect } from "./open.ts";

const DirectRequests = lazyPart(
  () => import("./DirectRequests.tsx").then((m) => m.DirectRequests),
  "the message requests",
);

/** Messages already notified from the history of conversations that arrived (once each, per page). */
const notified = new Set<string>();

/**
 * A conversation someone opened while the board was open comes with its first messages already
 * stored: the board loads them as history, which never notifies (use-activity.ts), so they notify
 * here, once each, as live messages would (not those read already, nor this user's own).
 */
function useArrivedNotifications(): void {
  useEffect(() => {
    const me = engineState.auth.user;
    if (!me) return;
    for (const id of engineState.arrived ?? []) {
      const view = engineState.open[id];
      const c = engineState.conversations?.find((x) => x.channel.id === id);
      if (!view || !c || c.request) continue;
      const read = engineState.readMarkers[id] ?? 0;
      for (const i of view.items) {
        if (i.kind !== "message" || i.isNew || i.seq <= read || i.author.did === me.did) continue;
        if (notified.has(i.uri) || !shouldNotify(levelOf(me.did, id, true), i, me.handle)) continue;
        notified.add(i.uri);
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

/**
 * The conversations (not the requests): each named by its people (a group by its name if it has one,
 * notes to self as such), with its unread count and, one to one, whether the other person is online.
 */
export function DirectList() {
  const s = useSnapshot(engineState);
  useArrivedNotifications();
  const me = s.auth.user?.did ?? null;
  const unread = unreadCounts(s).byChannel;
  const connected = s.connection === "connected";
  const list = s.conversations ?? [];
  return (
    <>
      <ul className="sb-list sb-dms" aria-label="Direct messages">
        {list
          .filter((c) => !c.request)
          .map((c) => {
            const id = c.channel.id;
            const active = id === s.currentChannelId;
            const u = unread[id];
            const other = c.kind === "pair" ? c.members.find((m) => m.did !== me) : undefined;
            // Presence comes with the conversation's members once it is live (use-activity opens it).
            const online = !!other && !!s.open[id]?.members.find((m) => m.did === other.did)?.online;
            return (
              <li key={id}>
                <button
                  type="button"
                  className={`sb-channel sb-dm${active ? " active" : ""}`}
                  aria-current={active || undefined}
                  data-kind={c.kind}
                  onClick={() => void openDirect(id)}
                >
                  {other ? (
                    <span
                      className={`dot ${online && connected ? "on" : "off"}`}
                      data-testid="presence"
                      title={connected ? (online ? "online" : "offline") : "unknown while you are offline"}
                    />
                  ) : null}
                  <span className="sb-name">
                    {displaySafe(conversationTitle(c, me, handleWithoutSuffix))}
                  </span>
                  {u?.count ? (
                    <span
                      className={`sb-unread${u.mentions ? " mention" : ""}`}
                      data-testid="unread"
                      title={`${u.count} unread`}
                    >
                      {u.count >= 50 ? "50+" : u.count}
                    </span>
                  ) : null}
                </button>
              </li>
            );
          })}
      </ul>
      {list.some((c) => c.request) || s.blocked?.length ? <DirectRequests /> : null}
    </>
  );
}
