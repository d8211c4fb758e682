import { useEffect } from "react";
import { useSnapshot } from "valtio";
import { activityLevel, clockTime, dayLabel } from "../../../core/client/view/display.ts";
import { displaySafe } from "../../../core/slash-commands/display-safe.ts";
import { selectChannel } from "../../state/channel.ts";
import { engineState, loadClient } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";

/** Spec §3 channel card: last activity as a time string, or "No activity". */
function when(iso: string | null): string {
  if (!iso) return "No activity";
  return Number.isNaN(Date.parse(iso)) ? iso : `${dayLabel(iso)} ${clockTime(iso)}`;
}

/** While the overview shows, the channel list is read again at most this often after a change. */
export const COUNTS_REFRESH_MS = 1000;

/**
 * Keeps the overview's counts live: the channel list (members, messages, last activity) is read
 * when the overview opens, and again shortly after anything that changes a count arrives over the
 * socket (a message or a join/leave in a channel this client follows, a removal, an invite). One
 * read at a time, at most one per COUNTS_REFRESH_MS, however busy the channels are.
 */
function useLiveCounts(): void {
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let pending = false;
    let off = () => {};
    const read = async () => {
      if (running) {
        pending = true;
        return;
      }
      running = true;
      try {
        await (await loadClient()).refreshChannels();
      } catch {
        // Offline: the next change or the reconnection reads again.
      } finally {
        running = false;
        if (pending && live) {
          pending = false;
          soon();
        }
      }
    };
    const soon = () => {
      if (timer || !live) return;
      timer = setTimeout(() => {
        timer = undefined;
        void read();
      }, COUNTS_REFRESH_MS);
    };
    void read();
    void loadClient().then((c) => {
      if (!live) return;
      const offs = [c.events.on("item", soon), c.events.on("removed", soon), c.events.on("invited", soon)];
      off = () => {
        for (const o of offs) o();
      };
    });
    return () => {
      live = false;
      clearTimeout(timer);
      off();
    };
  }, []);
}

/**
 * The network overview (spec §2.11): the channels the user can see as nodes around a core, with
 * their activity. A card click selects and joins the channel, like the channel list.
 */
export function NetworkOverview() {
  const s = useSnapshot(engineState);
  useLiveCounts();
  const online = s.auth.isAuthenticated && s.connection === "connected";
  const messages = s.channels.reduce((n, c) => n + c.messageCount, 0);
  const id = s.currentChannelId;
  const active = id ? (s.open[id]?.channel ?? s.channels.find((c) => c.id === id)) : undefined;
  return (
    <section className="network" aria-label="Network overview">
      <header className="net-bar">
        <h2>SHADOW NETWORK</h2>
        <span className={`net-status${online ? " on" : ""}`} data-testid="net-status">
          <i aria-hidden="true" />
          {online ? "CONNECTED" : "OFFLINE"}
        </span>
        <button type="button" onClick={() => (uiState.networkView = "terminal")}>
          terminal
        </button>
      </header>
      <div className="net-core" data-testid="net-core">
        <b>CORE</b>
        <span>{s.channels.length} channels</span>
        <span>{messages} messages</span>
      </div>
      {s.channels.length === 0 ? (
        <div className="net-empty">
          <p>No channels available</p>
          <p className="net-hint">Create or join a channel to start</p>
        </div>
      ) : (
        <ul className="net-cards">
          {s.channels.map((c) => {
            const type = c.value.type || "public";
            const level = activityLevel(c.messageCount);
            return (
              <li key={c.id}>
                <button
                  type="button"
                  className={`net-card act-${level}`}
                  data-activity={level}
                  onClick={() => void selectChannel(c.id).catch(() => undefined)}
                >
                  <span className="net-head">
                    <span className="net-type" title={type}>
                      {type.charAt(0)}
                    </span>
                    <span className="net-name">#{displaySafe(c.value.name || "Unknown")}</span>
                    <span className="net-level">{level}</span>
                  </span>
                  <span>Members: {c.memberCount}</span>
                  <span>Messages: {c.messageCount}</span>
                  <span>Last activity: {when(c.lastActivity)}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <footer className="net-foot">
        <span>Total Channels: {s.channels.length}</span>
        <span>Total Messages: {messages}</span>
        <span>Active Channel: {active ? `#${displaySafe(active.value.name || "Unknown")}` : "None"}</span>
      </footer>
    </section>
  );
}
