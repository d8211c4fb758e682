/**
 * Search's switches that the first script and logout need without loading search itself: whether it
 * is off on this device, whether it was used here (so a later visit keeps the index filling), and
 * the wipe (logout, turning it off): the running worker stops and the whole IndexedDB database (the
 * sealed snapshot and the device key) is deleted.
 */

const OFF = "wsync-search-off";
const USED = "wsync-search-used";
/** Kept in sync with worker-protocol.ts (not imported: this file is in the first script). */
const DB = "wsync-search";

const local = (): Storage | null => {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
};

export const searchOff = (): boolean => local()?.getItem(OFF) === "1";
export const searchUsed = (): boolean => local()?.getItem(USED) === "1";

export function setSearchOff(off: boolean): void {
  if (off) local()?.setItem(OFF, "1");
  else local()?.removeItem(OFF);
}

export function markSearchUsed(): void {
  local()?.setItem(USED, "1");
}

let stopper: (() => void) | null = null;

/** search-client.ts registers how to stop the running worker. */
export function setStopper(stop: (() => void) | null): void {
  stopper = stop;
}

/** Stops indexing and deletes the index and its key from this browser; `off` also turns search off. */
export async function wipeSearchIndex(opts: { off?: boolean } = {}): Promise<void> {
  stopper?.();
  stopper = null;
  local()?.removeItem(USED);
  if (opts.off) setSearchOff(true);
  if (typeof indexedDB === "undefined") return;
  await new Promise<void>((resolve) => {
    const req = indexedDB.deleteDatabase(DB);
    req.onsuccess = () => resolve();
    req.onerror = () => resolve();
    // Another tab still holds it open: the deletion completes when that tab lets go.
    req.onblocked = () => resolve();
  });
}
