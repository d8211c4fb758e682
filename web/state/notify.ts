import type { TimelineItem } from "../../core/client/view/state.ts";
import { mentions } from "../../core/client/view/unread.ts";

/**
 * Notifications for new messages: per channel "mentions" (the default), "all" or "mute", kept in
 * this browser per account (localStorage; a preference, not a secret). The browser's permission is
 * asked only when the user turns notifications on (a click), never on page load. An optional short
 * beep (WebAudio, off by default). Nothing about a notification goes to the server.
 *
 * What a notification shows is a setting of this device (docs/decisions/notification-content.md):
 * "Name and message", "Name only" (the default) or "Nothing". A notification leaves the page: the
 * operating system shows it on the lock screen, keeps it in its notification history and may mirror
 * it to a watch or another device, so the decrypted text goes there only when the user chose so.
 */

export type NotifyLevel = "mentions" | "all" | "mute";
export const NOTIFY_LEVELS: NotifyLevel[] = ["mentions", "all", "mute"];

/** What an OS notification carries: the channel, sender and text; the channel and sender; neither. */
export type NotifyContent = "name-and-message" | "name" | "nothing";
export const NOTIFY_CONTENTS: NotifyContent[] = ["name-and-message", "name", "nothing"];
export const NOTIFY_CONTENT_DEFAULT: NotifyContent = "name";

export const NotifyText = {
  content: { "name-and-message": "Name and message", name: "Name only", nothing: "Nothing" },
  contentLabel: "What notifications show",
  /** The title and body under "Nothing": no channel, no sender, no text. */
  anonymousTitle: "wsync",
  newMessage: "New message",
  newMessageFrom: (author: string) => `New message from ${author}`,
} as const;

const key = (did: string) => `wsync-notify:${did}`;

interface Prefs {
  levels: Record<string, NotifyLevel>;
  sound: boolean;
  content: NotifyContent;
}

const isContent = (v: unknown): v is NotifyContent => NOTIFY_CONTENTS.includes(v as NotifyContent);

export function loadPrefs(did: string): Prefs {
  try {
    const p = JSON.parse(localStorage.getItem(key(did)) ?? "{}") as Partial<Prefs>;
    return {
      levels: p.levels ?? {},
      sound: p.sound === true,
      content: isContent(p.content) ? p.content : NOTIFY_CONTENT_DEFAULT,
    };
  } catch {
    return { levels: {}, sound: false, content: NOTIFY_CONTENT_DEFAULT };
  }
}

export function savePrefs(did: string, prefs: Prefs): void {
  try {
    localStorage.setItem(key(did), JSON.stringify(prefs));
  } catch {
    // Storage refused: the setting lasts for this page only.
  }
}

/** The level of a channel: as set, else "all" in a direct conversation (issue 30) and "mentions" elsewhere. */
export function levelOf(did: string, channelId: string, direct = false): NotifyLevel {
  return loadPrefs(did).levels[channelId] ?? (direct ? "all" : "mentions");
}

export function setLevel(did: string, channelId: string, level: NotifyLevel): void {
  const p = loadPrefs(did);
  p.levels[channelId] = level;
  savePrefs(did, p);
}

export function contentOf(did: string): NotifyContent {
  return loadPrefs(did).content;
}

export function setContent(did: string, content: NotifyContent): void {
  const p = loadPrefs(did);
  p.content = content;
  savePrefs(did, p);
}

/**
 * The notification for one message under a content setting: exactly what the setting allows. The
 * tag (which replaces an earlier notification of the same channel) names the channel only where
 * the title does.
 */
export function notificationFor(
  content: NotifyContent,
  m: { channelName: string; author: string; text: string },
): { title: string; options: NotificationOptions } {
  if (content === "nothing") {
    return { title: NotifyText.anonymousTitle, options: { body: NotifyText.newMessage, tag: "wsync" } };
  }
  const body =
    content === "name-and-message"
      ? `${m.author}: ${m.text.slice(0, 140)}`
      : NotifyText.newMessageFrom(m.author);
  // A channel by its #name; a one-to-one conversation (which has no name) by who wrote, as Signal does.
  const tag = m.channelName || m.author;
  return { title: m.channelName ? `#${tag}` : tag, options: { body, tag } };
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
  /** Empty for a one-to-one conversation: the notification is titled by its author. */
  channelName: string;
  author: string;
  text: string;
  lookingAtIt: boolean;
}): void {
  if (input.lookingAtIt) return;
  const prefs = loadPrefs(input.did);
  if (notificationsAllowed()) {
    try {
      const { title, options } = notificationFor(prefs.content, input);
      new Notification(title, options);
    } catch {
      // Some browsers allow notifications only from a service worker: the badge still counts.
    }
  }
  if (prefs.sound) beep();
}
