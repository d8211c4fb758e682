import { useEffect, useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { engineState } from "../../state/engine.ts";
import {
  askPermission,
  levelOf,
  loadPrefs,
  NOTIFY_CONTENT_DEFAULT,
  NOTIFY_CONTENTS,
  NOTIFY_LEVELS,
  type NotifyContent,
  type NotifyLevel,
  NotifyText,
  notificationsAllowed,
  savePrefs,
  setContent,
  setLevel,
} from "../../state/notify.ts";

const LABEL: Record<NotifyLevel, string> = { mentions: "@ mentions", all: "all messages", mute: "muted" };

/**
 * The channel's notification setting in its header: mentions (default), all, or mute; the browser is
 * asked for permission only here, when the user picks something that notifies; and, for this device
 * (every channel), what a notification shows (name and message, name only, nothing) and the beep.
 */
export function NotifySetting({ channelId }: { channelId: string }) {
  const snap = useSnapshot(engineState);
  const did = snap.auth.user?.did ?? "";
  // A direct conversation notifies for every message unless set otherwise (issue 30).
  const direct = snap.open[channelId]?.channel.value.type === "direct";
  const [level, setLevelState] = useState<NotifyLevel>(() =>
    did ? levelOf(did, channelId, direct) : "mentions",
  );
  const [sound, setSound] = useState(() => (did ? loadPrefs(did).sound : false));
  const [content, setContentState] = useState<NotifyContent>(() =>
    did ? loadPrefs(did).content : NOTIFY_CONTENT_DEFAULT,
  );
  const [allowed, setAllowed] = useState(false);
  useEffect(() => setAllowed(notificationsAllowed()), []);
  useEffect(() => {
    if (did) {
      setLevelState(levelOf(did, channelId, direct));
      setContentState(loadPrefs(did).content);
    }
  }, [did, channelId, direct]);
  if (!did) return null;
  return (
    <span className="notify-setting">
      <label>
        <span className="sr-only">Notify for</span>
        <select
          aria-label="Notifications for this channel"
          value={level}
          onChange={(e) => {
            const next = e.target.value as NotifyLevel;
            setLevel(did, channelId, next);
            setLevelState(next);
            // Asked from this choice (a user action), never when the page loads.
            if (next !== "mute") void askPermission().then(setAllowed);
          }}
        >
          {NOTIFY_LEVELS.map((l) => (
            <option key={l} value={l}>
              {LABEL[l]}
            </option>
          ))}
        </select>
      </label>
      {level !== "mute" && !allowed ? (
        <button type="button" className="notify-enable" onClick={() => void askPermission().then(setAllowed)}>
          enable notifications
        </button>
      ) : null}
      <label className="notify-content">
        <span className="sr-only">{NotifyText.contentLabel}</span>
        <select
          aria-label={NotifyText.contentLabel}
          title={NotifyText.contentLabel}
          value={content}
          onChange={(e) => {
            const next = e.target.value as NotifyContent;
            setContent(did, next);
            setContentState(next);
          }}
        >
          {NOTIFY_CONTENTS.map((c) => (
            <option key={c} value={c}>
              {NotifyText.content[c]}
            </option>
          ))}
        </select>
      </label>
      <label className="notify-sound">
        <input
          type="checkbox"
          checked={sound}
          onChange={(e) => {
            const p = loadPrefs(did);
            p.sound = e.target.checked;
            savePrefs(did, p);
            setSound(p.sound);
          }}
        />
        beep
      </label>
    </span>
  );
}

/** "alice is typing…" under the messages, for as long as their typing frames keep coming. */
export function TypingLine({ channelId }: { channelId: string }) {
  const s = useSnapshot(engineState);
  const [now, setNow] = useState(() => Date.now());
  const list = (s.typing[channelId] ?? []).filter((t) => t.until > now);
  const any = list.length > 0;
  useEffect(() => {
    if (!any) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [any]);
  if (!any) return <p className="typing-line" aria-live="polite" />;
  const names = list.map((t) => handleWithoutSuffix(t.handle));
  const who = names.length > 2 ? `${names.slice(0, 2).join(", ")} and others` : names.join(" and ");
  return (
    <p className="typing-line" aria-live="polite" data-testid="typing">
      {who} {names.length > 1 ? "are" : "is"} typing…
    </p>
  );
}
