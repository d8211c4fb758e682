/**
 * Where a signed-out user was going, carried across /login (issue: sign-in flows).
 *
 * - A session that ends (expired, revoked, signed out elsewhere) says why on /login, and after the
 *   same user signs in again the board reopens their channel with their unsent drafts (kept per
 *   account in localStorage, below).
 * - An invite link opened signed out (`/sync/join/{id}#{secret}`) is joined after sign-in and key
 *   validation. Its fragment is the channel's link secret: it is kept in this tab's sessionStorage
 *   only (never sent to the server, never put in a query string) and removed once used.
 *
 * The resume (why, a join link) is in sessionStorage: per tab, it ends with it. Drafts are plaintext
 * the user typed, as the page itself shows them; they are given back only to the same account (did).
 */

import { keptKey } from "./browser-store.ts";

const KEY = "wsync-resume";

export interface Resume {
  /** Why the last session ended, for /login to say. */
  reason?: "ended";
  /** The account whose session ended. */
  did?: string;
  /** Older pages kept these here (now per account in localStorage); cleared when read. */
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

/**
 * Per account, in this browser's localStorage (never sent to the server): the unsent draft of each
 * channel, kept as the user types, and the channel that was open when a session ended (revoked from
 * another device, expired, noticed only on a reload). They come back after the same account signs in
 * again, in any tab. Sending or clearing a draft removes it; logging out (DISCONNECT) removes them
 * all (docs/decisions/session-end.md).
 */
interface Kept {
  drafts: Record<string, string>;
  /** The session ended with this channel open: reopen it after the next sign-in. */
  ended?: string;
}

let owner: string | null = null;

function readKept(did: string): Kept {
  try {
    const k = JSON.parse(localStorage.getItem(keptKey(did)) ?? "null") as Kept | null;
    if (k && typeof k.drafts === "object" && k.drafts) return k;
  } catch {
    // Unreadable: start again.
  }
  return { drafts: {} };
}

function writeKept(did: string, change: (k: Kept) => void): void {
  const k = readKept(did);
  change(k);
  try {
    localStorage.setItem(keptKey(did), JSON.stringify(k));
  } catch {
    // Storage full or blocked: the draft stays in the page only.
  }
}

/** The signed-in account whose drafts these are (null: nobody; drafts are then not kept). */
export function setDraftOwner(did: string | null): void {
  owner = did;
}

export function setDraft(channelId: string, text: string): void {
  if (owner)
    writeKept(owner, (k) => {
      if (text) k.drafts[channelId] = text;
      else delete k.drafts[channelId];
    });
}

export function getDraft(channelId: string): string {
  return owner ? (readKept(owner).drafts[channelId] ?? "") : "";
}

/**
 * The session is over: remember why (and for whom), mark the account's open channel for reopening,
 * then go to /login, which says so.
 */
export function sessionEnded(input: { did: string | null; channelId: string | null }): void {
  const { did, channelId } = input;
  saveResume({ reason: "ended", ...(did ? { did } : {}) });
  if (did && channelId)
    writeKept(did, (k) => {
      k.ended = channelId;
    });
  owner = null;
  window.location.assign("/login");
}

/** After sign-in on the board: the channel to reopen if this account's last session ended in it. */
export function takeResume(did: string): string | null {
  const r = readResume();
  if (r?.join) return null;
  clearResume(["reason", "did", "channelId", "drafts"]);
  const { ended } = readKept(did);
  if (ended)
    writeKept(did, (k) => {
      delete k.ended;
    });
  return ended ?? null;
}

/** Signed out on a join link: keep it (path and secret fragment) for after sign-in. */
export function rememberJoin(location: { pathname: string; hash: string }): void {
  if (location.pathname.startsWith("/sync/join/"))
    saveResume({ join: `${location.pathname}${location.hash}` });
}
