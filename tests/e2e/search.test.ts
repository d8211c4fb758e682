/**
 * Issue 32, in Chromium: message search over what this browser can decrypt. A message far below the
 * first page is found (the backfill reads the whole history in the search worker), choosing it opens
 * the channel at that message, the index survives a reload without reading the history again, what
 * IndexedDB holds is ciphertext under a non-extractable key, and logging out deletes it.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { MemoryStore, WsyncClient } from "../../core/client/index.ts";
import { BACKFILL_PAGE } from "../../web/features/search/search-client.ts";
import { createInDialog, openChannel, sidebarChannel, signUp, unlockTerminal, WAIT } from "./chat.ts";
import { browserTest, e2eServer, PASSWORD, shot } from "./harness.ts";

const t = e2eServer();
const rnd = () => Math.random().toString(36).slice(2, 7);

/** Someone outside the browser (the engine in this process) who writes a long history. */
async function writer(url: string): Promise<{ client: WsyncClient; handle: string }> {
  const client = new WsyncClient({
    baseUrl: url,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store: new MemoryStore(),
  });
  const handle = `wr${rnd()}`;
  await client.register({ handle, email: `${handle}@example.com`, password: PASSWORD });
  await client.completeRegistration();
  return { client, handle };
}

/** Every value of the search database as the page's scripts could read it, without the key. */
async function rawSearchDb(
  page: Page,
): Promise<{ text: string; keys: string[]; cryptoKeys: boolean[] } | null> {
  return page.evaluate(async () => {
    const names = (await indexedDB.databases()).map((d) => d.name);
    if (!names.includes("wsync-search")) return null;
    const db = await new Promise<IDBDatabase>((ok, fail) => {
      const r = indexedDB.open("wsync-search");
      r.onsuccess = () => ok(r.result);
      r.onerror = () => fail(r.error);
    });
    const out: string[] = [];
    const keys: string[] = [];
    const cryptoKeys: boolean[] = [];
    const walk = (v: unknown) => {
      if (v instanceof CryptoKey) cryptoKeys.push(v.extractable);
      else if (v instanceof ArrayBuffer) out.push(new TextDecoder("latin1").decode(v));
      else if (ArrayBuffer.isView(v)) out.push(new TextDecoder("latin1").decode(v as Uint8Array));
      else if (typeof v === "string") out.push(v);
      else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
    };
    for (const store of [...db.objectStoreNames]) {
      const tx = db.transaction(store, "readonly");
      const os = tx.objectStore(store);
      const [ks, vs] = await Promise.all(
        [os.getAllKeys(), os.getAll()].map(
          (r) =>
            new Promise<unknown[]>((ok, fail) => {
              r.onsuccess = () => ok(r.result as unknown[]);
              r.onerror = () => fail(r.error);
            }),
        ),
      );
      for (const k of ks ?? []) keys.push(String(k));
      for (const v of vs ?? []) walk(v);
    }
    db.close();
    return { text: out.join("\n"), keys, cryptoKeys };
  });
}

const panel = (page: Page) => page.getByRole("dialog", { name: "Search messages" });
const result = (page: Page, text: string) =>
  panel(page).locator('[data-testid="search-results"] li', { hasText: text });

browserTest(
  "search finds a message below the first page, opens the channel at it, survives a reload; IndexedDB holds only ciphertext; logout wipes it",
  async () => {
    const alice = await signUp(t.url, "alice");
    const room = `deep${rnd()}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    await openChannel(alice.page, room);
    const channelId = decodeURIComponent(new URL(alice.page.url()).pathname.split("/").pop() as string);

    // A history of 140 messages; the one to find is the oldest, three pages below the first.
    const w = await writer(t.url);
    await w.client.join(channelId);
    await w.client.send(channelId, "The Zebracorn deploy happens at dawn");
    for (let i = 0; i < 139; i++) await w.client.send(channelId, `filler message number ${i}`);
    w.client.disconnect();

    // The sidebar button opens the panel; indexing starts on first use and reaches the old message.
    await alice.page.locator(".sb-nav .sb-search").click();
    await panel(alice.page).waitFor();
    await panel(alice.page).getByRole("searchbox", { name: "Search messages" }).fill("zebrac dep");
    const hit = result(alice.page, "Zebracorn deploy");
    await hit.waitFor({ timeout: WAIT * 2 });
    // The match is marked (accents and case aside, prefix and substring), as text.
    expect(await hit.locator("mark").allTextContents()).toEqual(["Zebrac", "dep"]);
    expect(await hit.textContent()).toContain(`#${room}`);
    await panel(alice.page)
      .locator('[data-status="ready"]')
      .waitFor({ timeout: WAIT * 2 });
    await shot(alice.page, "search-results");

    // Choosing it opens the channel at that message: older pages loaded, the row in view and marked.
    await alice.page.keyboard.press("Escape");
    await panel(alice.page).waitFor({ state: "detached" });
    await alice.page.locator(".sb-nav button", { hasText: "terminal" }).click();
    await alice.page.locator(".sb-nav .sb-search").click();
    await panel(alice.page).getByRole("searchbox", { name: "Search messages" }).fill("zebracorn");
    await result(alice.page, "Zebracorn deploy").click();
    const found = alice.page.locator(".chat-list .msg[data-found]");
    await found.waitFor({ timeout: WAIT });
    // A message shown for the first time plays its reveal (spec §2.13) before its text settles.
    await found
      .locator(".text", { hasText: "The Zebracorn deploy happens at dawn" })
      .waitFor({ timeout: WAIT });
    expect(await found.locator(".text").textContent()).toBe("The Zebracorn deploy happens at dawn");
    expect(alice.page.url()).toContain(`/sync/c/${encodeURIComponent(channelId)}`);
    const inView = await found.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const box = (el.closest(".chat-list") as HTMLElement).getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    });
    expect(inView).toBe(true);
    await shot(alice.page, "search-opened-at-message");

    // What IndexedDB holds: a sealed snapshot and a CryptoKey that cannot be exported; no text.
    const raw = await rawSearchDb(alice.page);
    expect(raw).not.toBeNull();
    expect(raw?.keys.sort()).toEqual(["device-key", "snapshot"]);
    expect(raw?.cryptoKeys).toEqual([false]);
    expect(raw?.text.length).toBeGreaterThan(100);
    for (const word of ["Zebracorn", "zebracorn", "filler", "dawn", room])
      expect(raw?.text).not.toContain(word);

    // After a reload: Ctrl+F on the board, the same answer, and no history read again by search's
    // backfill (its pages are BACKFILL_PAGE records; the board may itself load an older page of the
    // open channel as its list settles, with its own page size, which is not search's doing).
    const reads: string[] = [];
    alice.page.on("request", (r) => {
      if (!r.url().endsWith("/api/channel/get-messages")) return;
      const body = JSON.parse(r.postData() ?? "{}") as { cursor?: unknown; limit?: unknown };
      if (body.cursor && body.limit === BACKFILL_PAGE) reads.push(r.url());
    });
    await alice.page.reload();
    await alice.page.locator('[data-testid="board"]').waitFor();
    await alice.page
      .locator("body")
      .click({ position: { x: 1, y: 1 } })
      .catch(() => undefined);
    await alice.page.keyboard.press("Control+f");
    await panel(alice.page).waitFor();
    await panel(alice.page).getByRole("searchbox", { name: "Search messages" }).fill("zebracorn");
    await result(alice.page, "Zebracorn deploy").waitFor({ timeout: WAIT });
    await panel(alice.page).locator('[data-status="ready"]').waitFor({ timeout: WAIT });
    expect(reads).toEqual([]);
    await alice.page.keyboard.press("Escape");
    await panel(alice.page).waitFor({ state: "detached" });

    // The terminal's /find (an alias of /wsync/find) opens the same panel with the query typed in.
    await alice.page.locator(".sb-nav button", { hasText: "terminal" }).click();
    await unlockTerminal(alice.page);
    const command = alice.page.getByRole("textbox", { name: "Command" });
    await command.fill(`/find from:${w.handle} dawn`);
    await command.press("Enter");
    await result(alice.page, "Zebracorn deploy").waitFor({ timeout: WAIT });
    expect(await panel(alice.page).getByRole("searchbox", { name: "Search messages" }).inputValue()).toBe(
      `from:${w.handle} dawn`,
    );
    await alice.page.keyboard.press("Escape");
    await panel(alice.page).waitFor({ state: "detached" });

    // Logout (DISCONNECT) deletes the index and its key.
    await sidebarChannel(alice.page, room).click();
    const info = alice.page.locator('[data-testid="info-panel"]');
    await info.getByRole("button", { name: "DISCONNECT" }).click();
    const confirm = alice.page.getByRole("dialog", { name: "Log out of this device?" });
    await confirm.getByRole("button", { name: "Log out", exact: true }).click();
    await alice.page.waitForURL("**/login", { timeout: WAIT });
    await alice.page.waitForFunction(
      async () => !(await indexedDB.databases()).some((d) => d.name === "wsync-search"),
      undefined,
      { timeout: WAIT },
    );
    expect(await rawSearchDb(alice.page)).toBeNull();
    expect(alice.errors).toEqual([]);
    await alice.context.close();
  },
  240_000,
);
