import { type FormEvent, type KeyboardEvent, type PointerEvent, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { displaySafe } from "../../../core/slash-commands/display-safe.ts";
import { toast } from "../../components/toast.ts";
import { authUi } from "../../state/auth.ts";
import { clearSelection, joinChannel, loadMoreChannels, selectChannel } from "../../state/channel.ts";
import { engineState, loadClient } from "../../state/engine.ts";
import { SIDEBAR_DEFAULT, SIDEBAR_MAX, SIDEBAR_MIN, setSidebarWidth, uiState } from "../../state/ui.ts";
import { KeyImageLink } from "../keys/KeyImageLink.tsx";
import { SearchButton } from "../search/SearchButton.tsx";
import { DirectSection } from "./direct/DirectSection.tsx";
import { unreadCounts } from "./use-activity.ts";

/** Spec §9: on mobile the drawer closes this long after a join. */
export const MOBILE_CLOSE_DELAY_MS = 300;
const KEY_STEP = 10;
/** Browse channels shown at first, and added by each "show more channels". */
export const BROWSE_PAGE = 20;

function Lock({ type }: { type: string }) {
  return (
    <svg
      className="lock"
      viewBox="0 0 16 16"
      width="12"
      height="12"
      role="img"
      aria-label={`${type} channel`}
    >
      <path fill="currentColor" d="M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7zm2 0h4V5a2 2 0 0 0-4 0z" />
    </svg>
  );
}

/** Drags the sidebar's right edge; the width is clamped to 233–500 px by setSidebarWidth. */
function startResize(e: PointerEvent) {
  e.preventDefault();
  const x0 = e.clientX;
  const w0 = uiState.sidebarWidth;
  const root = document.documentElement;
  const move = (ev: globalThis.PointerEvent) => setSidebarWidth(w0 + ev.clientX - x0);
  const end = () => {
    root.classList.remove("resizing");
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", end);
    window.removeEventListener("pointercancel", end);
  };
  root.classList.add("resizing");
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", end);
  window.addEventListener("pointercancel", end);
}

function resizeByKey(e: KeyboardEvent) {
  const w = uiState.sidebarWidth;
  const step = e.shiftKey ? KEY_STEP * 5 : KEY_STEP;
  const next = {
    ArrowLeft: w - step,
    ArrowRight: w + step,
    Home: SIDEBAR_MIN,
    End: SIDEBAR_MAX,
  }[e.key];
  if (next === undefined) return;
  e.preventDefault();
  setSidebarWidth(next);
}

/** "You were removed from #x by y" (the kicker's handle as the board shows handles). */
export function removedText(channelName: string | null, byHandle: string | null): string {
  const where = channelName ? `#${displaySafe(channelName)}` : "a channel";
  return byHandle
    ? `You were removed from ${where} by ${displaySafe(handleWithoutSuffix(byHandle))}`
    : `You were removed from ${where}`;
}

/**
 * The channel list (spec §2.9): channels, pending invites, the secret-link form and the way back to
 * the terminal or network view. Desktop: a column resizable by its right edge. Mobile: a drawer.
 */
export function ChannelSidebar({ mobile }: { mobile: boolean }) {
  const s = useSnapshot(engineState);
  const ui = useSnapshot(uiState);
  const [link, setLink] = useState("");
  const [joining, setJoining] = useState(false);
  const closeTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  // Spec §2.9/§8: the socket's error message shows as a toast. A kick is said too, with who kicked.
  useEffect(() => {
    let off: (() => void) | null = null;
    let live = true;
    void loadClient().then((c) => {
      if (!live) return;
      const offError = c.events.on("error", ({ message }) => void toast.error(message, { id: message }));
      const offRemoved = c.events.on("removed", (r) => {
        if (r.reason !== "kicked") return;
        const text = removedText(r.name, r.by?.handle ?? null);
        toast.error(text, { id: `removed:${r.channelId}` });
      });
      off = () => {
        offError();
        offRemoved();
      };
    });
    return () => {
      live = false;
      off?.();
      clearTimeout(closeTimer.current);
    };
  }, []);

  const closeDrawer = () => {
    uiState.sidebarOpen = false;
  };
  /** The menu's "key backup" and "link a device": a dialog on the board (web/features/keys/KeyDialogs.tsx). */
  const openKeyDialog = (dialog: "keyBackupOpen" | "linkDeviceOpen" | "sessionsOpen") => () => {
    authUi[dialog] = true;
    if (mobile) closeDrawer();
  };
  /** Runs a join; on mobile the drawer closes shortly after it succeeds. Failures already toast. */
  const afterJoin = (p: Promise<void>) =>
    p.then(
      () => {
        if (mobile) closeTimer.current = setTimeout(closeDrawer, MOBILE_CLOSE_DELAY_MS);
      },
      () => undefined,
    );
  const back = (view: "terminal" | "network") => {
    clearSelection();
    uiState.networkView = view;
    if (mobile) closeDrawer();
  };

  async function joinSecret(e: FormEvent) {
    e.preventDefault();
    const value = link.trim();
    if (!value || joining || !s.auth.isAuthenticated) return;
    setJoining(true);
    await afterJoin(joinChannel(value).then(() => setLink("")));
    setJoining(false);
  }

  const home = !s.currentChannelId;
  const [browseShown, setBrowseShown] = useState(BROWSE_PAGE);
  const joined = s.channels.filter((c) => c.isMember);
  const browse = s.channels.filter((c) => !c.isMember);
  const nameCount = new Map<string, number>();
  for (const c of s.channels) nameCount.set(c.value.name, (nameCount.get(c.value.name) ?? 0) + 1);
  const unread = unreadCounts(s).byChannel;
  const entry = (c: (typeof s.channels)[number]) => {
    const active = c.id === s.currentChannelId;
    const u = unread[c.id];
    const twin = (nameCount.get(c.value.name) ?? 0) > 1;
    return (
      <li key={c.id}>
        <button
          type="button"
          className={`sb-channel${active ? " active" : ""}${c.isMember ? "" : " other"}`}
          aria-current={active || undefined}
          onClick={() => void afterJoin(selectChannel(c.id))}
        >
          <span className="sb-name">#{displaySafe(c.value.name)}</span>
          {twin ? (
            <small className="sb-twin" title={`channel ${c.id}`}>
              {c.owner ? ` @${displaySafe(handleWithoutSuffix(c.owner.handle))}` : ""} ·{c.id.slice(-4)}
            </small>
          ) : null}
          {c.value.type === "public" ? null : <Lock type={c.value.type} />}
          {u?.count ? (
            <span
              className={`sb-unread${u.mentions ? " mention" : ""}`}
              data-testid="unread"
              title={`${u.count} unread${u.mentions ? `, ${u.mentions} mentioning you` : ""}`}
            >
              {u.mentions ? `@${u.mentions} · ` : ""}
              {u.count >= 50 ? "50+" : u.count}
            </span>
          ) : null}
        </button>
      </li>
    );
  };
  // On mobile the drawer's frame and the backdrop that closes it are the mobile chrome's (mobile.css).
  return (
    <aside
      className={`channel-sidebar${mobile ? ` drawer left${ui.sidebarOpen ? " open" : ""}` : ""}`}
      id="channel-sidebar"
      style={mobile ? undefined : { width: ui.sidebarWidth }}
      aria-label="Channels"
      inert={(mobile && !ui.sidebarOpen) || undefined}
    >
      <nav className="sb-nav">
        {(["terminal", "network"] as const).map((v) => (
          <button
            key={v}
            type="button"
            className={home && ui.networkView === v ? "on" : undefined}
            onClick={() => back(v)}
          >
            {v === "terminal" ? ">_ terminal" : "◉ network"}
          </button>
        ))}
        <SearchButton />
      </nav>
      <div className="sb-keys">
        <KeyImageLink />
        <button
          type="button"
          className="sb-key-backup"
          aria-haspopup="dialog"
          title="Back up your private key on the server, encrypted"
          onClick={openKeyDialog("keyBackupOpen")}
        >
          <span aria-hidden="true">◈ </span>key backup
        </button>
        <button
          type="button"
          className="sb-link-device"
          aria-haspopup="dialog"
          onClick={openKeyDialog("linkDeviceOpen")}
        >
          <span aria-hidden="true">⇄ </span>link a device
        </button>
        <button
          type="button"
          className="sb-sessions"
          aria-haspopup="dialog"
          title="Where this account is signed in; sign a session out"
          onClick={openKeyDialog("sessionsOpen")}
        >
          <span aria-hidden="true">⊙ </span>sessions
        </button>
      </div>
      <div className="sb-head">
        <h2>Channels</h2>
        <button
          type="button"
          className="sb-add"
          aria-label="Create channel"
          title="Create channel"
          onClick={() => {
            uiState.createDialogOpen = true;
            if (mobile) closeDrawer();
          }}
        >
          +
        </button>
      </div>
      <DirectSection />
      {/* Joined channels first, then public ones to browse; names that repeat say whose they are. */}
      <h3 className="sb-section">Your channels</h3>
      <ul className="sb-list sb-joined">
        {joined.map((c) => entry(c))}
        {joined.length === 0 ? <li className="sb-empty">No channels yet</li> : null}
      </ul>
      {browse.length > 0 ? (
        <>
          <h3 className="sb-section">Browse</h3>
          <ul className="sb-list sb-browse">{browse.slice(0, browseShown).map((c) => entry(c))}</ul>
          {browse.length > browseShown || s.channelsCursor ? (
            <button
              type="button"
              className="sb-more"
              onClick={() => {
                setBrowseShown((n) => n + BROWSE_PAGE);
                if (browse.length <= browseShown + BROWSE_PAGE && s.channelsCursor) void loadMoreChannels();
              }}
            >
              show more channels
            </button>
          ) : null}
        </>
      ) : null}
      {s.invites.length > 0 ? (
        <section className="sb-invites" aria-label="Invites">
          <h3>Invites</h3>
          <ul>
            {s.invites.map((i) => (
              <li key={i.channel.id}>
                <span className="sb-name">#{displaySafe(i.channel.value.name)}</span>
                <small>from {displaySafe(handleWithoutSuffix(i.from.handle))}</small>
                <button type="button" onClick={() => void afterJoin(joinChannel(i.channel.id))}>
                  Join
                </button>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <form className="sb-secret" onSubmit={joinSecret}>
        <input
          value={link}
          onChange={(e) => setLink(e.target.value)}
          placeholder="Paste secret channel link"
          aria-label="Secret channel link"
          autoComplete="off"
        />
        <button type="submit" disabled={!link.trim() || joining || !s.auth.isAuthenticated}>
          Join Secret Channel
        </button>
      </form>
      {mobile ? null : (
        // WAI-ARIA window splitter: a focusable separator (an <hr> is one) with its value; ←/→ resize
        // (Shift: by 50 px), Home/End go to the ends, a double click goes back to the default width.
        <hr
          className="sb-resize"
          aria-orientation="vertical"
          aria-label="Resize channel list"
          aria-controls="channel-sidebar"
          aria-valuetext={`${ui.sidebarWidth} px`}
          aria-valuemin={SIDEBAR_MIN}
          aria-valuemax={SIDEBAR_MAX}
          aria-valuenow={ui.sidebarWidth}
          tabIndex={0}
          onPointerDown={startResize}
          onKeyDown={resizeByKey}
          onDoubleClick={() => setSidebarWidth(SIDEBAR_DEFAULT)}
        />
      )}
    </aside>
  );
}
