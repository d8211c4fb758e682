import type { TimelineItem } from "../../core/client/state.ts";
import { mentions } from "../../core/client/unread.ts";

/**
 * Notifications for new messages: per channel "mentions" (the default), "all" or "mute", kept in
 * this browser per account (localStorage; a preference, not a secret). The browser's permission is
 * asked only when the user turns notifications on (a click), never on page load. An optional short
 * beep (WebAudio, off by default). The notification's text is the decrypted message, shown by this
 * browser only; nothing about it goes to the server.
 */

export type NotifyLevel = "mentions" | "all" | "mute";
export const NOTIFY_LEVELS: NotifyLevel[] = ["mentions", "all", "mute"];

const key = (did: string) => `wsync-notify:${did}`;

interface Prefs {
  levels: Record<string, NotifyLevel>;
  sound: boolean;
}

export function loadPrefs(did: string): Prefs {
  try {
    const p = JSON.parse(localStorage.getItem(key(did)) ?? "{}") as Partial<Prefs>;
    return { levels: p.levels ?? {}, sound: p.sound === true };
  } catch {
    return { levels: {}, sound: false };
  }
}

export function savePrefs(did: string, prefs: Prefs): void {
  try {
    localStorage.setItem(key(did), JSON.stringify(prefs));
  } catch {
    // Storage refused: the setting lasts for this page only.
  }
}

export function levelOf(did: string, channelId: string): NotifyLevel {
  return loadPrefs(did).levels[channelId] ?? "mentions";
}

export function setLevel(did: string, channelId: string, level: NotifyLevel): void {
  const p = loadPrefs(did);
  p.levels[channelId] = level;
  savePrefs(did, p);
}

export function notificationsAllowed(): boolean {
  return typeof Notification !== "undefined" && Notification.permission === "granted";
}

/** Asks the browser (call from a click). */
export async function askPermission(): Promise<boolean> {
  if (typeof Notification === "undefined") return false;
  if (Notification.permission === "granted") return true;
  return (await Notification.requestPermission()) === "granted";
}

let audio: AudioContext | null = null;
function beep(): void {
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.05;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.12);
  } catch {
    // No audio here.
  }
}

/** Whether a new message should notify, by the channel's level. */
export function shouldNotify(
  level: NotifyLevel,
  item: Pick<TimelineItem, "text">,
  myHandle: string,
): boolean {
  if (level === "mute" || !item.text) return false;
  return level === "all" || mentions(item.text, myHandle);
}

/** Shows one (when allowed and the page is not what the user is looking at) and beeps if wanted. */
export function notify(input: {
  did: string;
  channelName: string;
  author: string;
  text: string;
  lookingAtIt: boolean;
}): void {
  if (input.lookingAtIt) return;
  if (notificationsAllowed()) {
    try {
      new Notification(`#${input.channelName}`, {
        body: `${input.author}: ${input.text.slice(0, 140)}`,
        tag: input.channelName,
      });
    } catch {
      // Some browsers allow notifications only from a service worker: the badge still counts.
    }
  }
  if (loadPrefs(input.did).sound) beep();
}
