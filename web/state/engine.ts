import { proxy, ref } from "valtio";
import type { WebSocketCtor, WsyncClient } from "../../core/client/index.ts";
import { type ClientState, initialState, storeItemListsAs } from "../../core/client/view/state.ts";
import { BrowserStore, hasLegacyStorage } from "./browser-store.ts";

/*
 * A channel's item list is kept out of valtio's deep proxying (`ref`): the engine never changes a
 * list in place but assigns a new one (core/client/view/state.ts `setItems`), so a change costs one
 * assignment, not a proxy per item and a copy of every item's snapshot (issue 28).
 */
storeItemListsAs(ref);

/**
 * The engine's own state object is a valtio proxy: every mutation the engine makes is observed by
 * the views directly, with no copying. The slices (auth, channel, message, epoch) are views of it.
 */
export const engineState: ClientState = proxy(initialState());

let client: Promise<WsyncClient> | null = null;

/**
 * The one engine of this page. Its code (and the crypto under it) is a separate chunk, loaded on
 * first use: a first-time visitor's /login ships only the form until they act.
 */
export function loadClient(): Promise<WsyncClient> {
  client ??= (async () => {
    // The vault loads with the engine, not with the page's first script.
    const [{ WsyncClient }, { IdbVault }] = await Promise.all([
      import("../../core/client/client.ts"),
      import("./idb-vault.ts"),
    ]);
    const vault = new IdbVault();
    // A refresh cookie marked Secure is kept only on https (or localhost): elsewhere the session stays
    // a bearer one, held for this page only (docs/decisions/key-custody.md).
    const cookieSessions = window.isSecureContext;
    const fetch = (input: string, init?: RequestInit) => window.fetch(input, init);
    // The one-time move of an earlier version's localStorage, only where there is something to move.
    if (hasLegacyStorage(window.localStorage, cookieSessions)) {
      const { migrateLegacyStorage } = await import("./migrate-storage.ts");
      await migrateLegacyStorage({
        storage: window.localStorage,
        vault,
        cookieSessions,
        baseUrl: window.location.origin,
        fetch,
      });
    }
    return new WsyncClient({
      state: engineState,
      baseUrl: window.location.origin,
      fetch,
      WebSocket: window.WebSocket as unknown as WebSocketCtor,
      store: new BrowserStore(),
      vault,
      sessionMode: cookieSessions ? "cookie" : "bearer",
      refreshLock: (fn) => (navigator.locks ? navigator.locks.request("wsync-refresh", () => fn()) : fn()),
      log: (m) => console.warn(`[wsync] ${m}`),
    });
  })();
  return client;
}

/** Tests swap in an engine wired to a test server or fakes. */
export function dangerouslySetClient(c: WsyncClient | null): void {
  client = c ? Promise.resolve(c) : null;
}
