/**
 * Where a signed-out user was going, carried across /login (issue: sign-in flows).
 *
 * - A session that ends (expired, revoked, signed out elsewhere) says why on /login, and after the
 *   same user signs in again the board reopens their channel with their unsent drafts.
 * - An invite link opened signed out (`/sync/join/{id}#{secret}`) is joined after sign-in and key
 *   validation. Its fragment is the channel's link secret: it is kept in this tab's sessionStorage
 *   only (never sent to the server, never put in a query string) and removed once used.
 *
 * sessionStorage is per tab and ends with it. Drafts are plaintext the user typed, as the page itself
 * shows them; they are given back only to the same account (did).
 */

const KEY = "wsync-resume";

export interface Resume {
  /** Why the last session ended, for /login to say. */
  reason?: "ended";
  /** The account whose channel and drafts these are. */
  did?: string;
  channelId?: string;
  drafts?: Record<string, string>;
  /** A join link's path and fragment, e.g. "/sync/join/abc#secret". */
  join?: string;
}

export function readResume(storage: Storage = sessionStorage): Resume | null {
  try {
    const raw = storage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Resume) : null;
  } catch {
    return null;
  }
}

export function saveResume(r: Resume, storage: Storage = sessionStorage): void {
  try {
    storage.setItem(KEY, JSON.stringify({ ...readResume(storage), ...r }));
  } catch {
    // Storage full or blocked: the user signs in without the resume.
  }
}

export function clearResume(fields?: (keyof Resume)[], storage: Storage = sessionStorage): void {
  if (!fields) {
    storage.removeItem(KEY);
    return;
  }
  const r = readResume(storage);
  if (!r) return;
  for (const f of fields) delete r[f];
  if (Object.keys(r).length === 0) storage.removeItem(KEY);
  else storage.setItem(KEY, JSON.stringify(r));
}

/** Where to go once signed in with keys ready: a pending join link, else the board. */
export function boardTarget(storage: Storage = sessionStorage): string {
  const join = readResume(storage)?.join;
  return join?.startsWith("/sync/join/") ? join : "/sync";
}

/** Unsent drafts by channel, kept as the user types so a session end can carry them. */
const drafts = new Map<string, string>();

export function setDraft(channelId: string, text: string): void {
  if (text) drafts.set(channelId, text);
  else drafts.delete(channelId);
}

export function getDraft(channelId: string): string {
  return drafts.get(channelId) ?? "";
}

/**
 * The session is over: remember why, the open channel and the drafts (for this account), then go to
 * /login, which says so.
 */
export function sessionEnded(input: { did: string | null; channelId: string | null }): void {
  saveResume({
    reason: "ended",
    ...(input.did ? { did: input.did } : {}),
    ...(input.channelId ? { channelId: input.channelId } : {}),
    drafts: Object.fromEntries(drafts),
  });
  window.location.assign("/login");
}

/**
 * After sign-in on the board: the same account gets its drafts back and the channel to reopen
 * (returned); another account gets nothing and the old drafts are dropped.
 */
export function takeResume(did: string): string | null {
  const r = readResume();
  if (!r || r.join) return null;
  clearResume(["reason", "did", "channelId", "drafts"]);
  if (r.did !== did) return null;
  for (const [id, text] of Object.entries(r.drafts ?? {})) drafts.set(id, text);
  return r.channelId ?? null;
}

/** Signed out on a join link: keep it (path and secret fragment) for after sign-in. */
export function rememberJoin(location: { pathname: string; hash: string }): void {
  if (location.pathname.startsWith("/sync/join/"))
    saveResume({ join: `${location.pathname}${location.hash}` });
}
