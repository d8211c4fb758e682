/**
 * Issue 28 defect 4: a session ended from another device ends at once, and nothing is lost.
 * Alice is signed in on a laptop and a second browser. On the laptop she is writing in #x; from the
 * second browser's "Sessions" she signs the laptop out. The laptop is told at once; its socket and
 * its access token are refused from then on (a send with it does not land). When she signs in again
 * on the laptop, in a new tab, she is back in #x with her draft in the composer.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { WsClose } from "../../core/protocol/index.ts";
import { ok, startTestServer, type TestServer } from "../server/harness.ts";
import { createInDialog, openChannel, send, sidebarChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, closeBrowser, newProfile, PASSWORD, shot } from "./harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await closeBrowser();
  await t?.stop();
});

async function signIn(page: import("playwright-core").Page, handle: string): Promise<void> {
  await page.locator('input[name="identifier"]').fill(handle);
  await page.locator('input[name="password"]').fill(PASSWORD);
  await page.getByRole("button", { name: "Enter" }).click();
}

/** Whether a socket authenticated with `token` is refused, and how (the close code). */
function socketCloseCode(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${t.wsUrl}`);
    ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "auth", data: { token } })));
    ws.addEventListener("message", (ev) => {
      if (String(ev.data).includes('"ready"')) {
        ws.close();
        reject(new Error("the ended session's token was accepted on a new socket"));
      }
    });
    ws.addEventListener("close", (ev) => resolve(ev.code));
  });
}

browserTest(
  "a session signed out from another device is told at once; its draft and channel come back",
  async () => {
    const alice = await signUp(t.url, "alice");
    const laptop = alice.page;
    const room = `x${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(laptop, room, "public");
    await sidebarChannel(laptop, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await openChannel(laptop, room);
    await send(laptop, "before the other browser stepped in");
    // The laptop's access token, as its own calls carry it (it lives in the page's memory only).
    let laptopToken = "";
    laptop.on("request", (r) => {
      const h = r.headers().authorization;
      if (h?.startsWith("Bearer ") && r.url().includes("/api/")) laptopToken = h.slice(7);
    });
    await laptop.reload();
    await openChannel(laptop, room);
    expect(laptopToken).not.toBe("");
    const channelId = new URL(laptop.url()).pathname.split("/").pop() as string;
    const did = await laptop.evaluate(
      () => (JSON.parse(localStorage.getItem("auth") ?? "{}") as { did: string }).did,
    );
    const draft = "half a thought, never sent";
    await laptop.getByRole("textbox", { name: "Message" }).fill(draft);

    // A second browser of the same account (the key pasted in, as on any new device).
    const other = await newProfile();
    other.page.setDefaultTimeout(WAIT);
    await other.page.goto(`${t.url}/login`);
    await signIn(other.page, alice.handle);
    await other.page.getByText("Private Key Validation").waitFor();
    await other.page.fill('textarea[name="privateKey"]', alice.keys.privateKey);
    await other.page.click('button:has-text("Validate Key")');
    await other.page.locator('[data-testid="board"]').waitFor();
    await other.page.getByRole("button", { name: "sessions" }).click();
    const sessions = other.page.getByRole("dialog", { name: "Sessions" });
    await sessions.waitFor();
    await sessions.locator('[data-testid="session"]').nth(1).waitFor();
    expect(await sessions.locator('[data-testid="session"].current').count()).toBe(1);
    await shot(other.page, "sessions-dialog");
    await sessions.getByRole("button", { name: /^Sign out: session signed in/ }).click();
    await sessions.getByText("1 session signed out.").waitFor();
    await sessions.getByText("No other session is signed in.").waitFor();

    // The laptop is told at once, without a reload or a click.
    await laptop.waitForURL("**/login", { timeout: WAIT });
    await laptop.getByText("Your session ended. Sign in again to continue where you left off.").waitFor();
    await shot(laptop, "session-revoked-told");
    // Its token is refused: on HTTP (a send does not land) and on a new socket (4403: session ended).
    const clientMsgId = "f".repeat(32);
    const sendWithOld = await fetch(`${t.url}/api/channel/send`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${laptopToken}` },
      body: JSON.stringify({ channelUri: channelId, content: "{}", clientMsgId }),
    });
    expect(sendWithOld.status).toBe(401);
    expect(await t.storage.timeline.byClientMsgId(did, clientMsgId)).toBeNull();
    expect(await socketCloseCode(laptopToken)).toBe(WsClose.sessionEnded);

    // Signing in again, in a new tab (the old one closed): back in #x with the draft.
    const tab = await alice.context.newPage();
    tab.setDefaultTimeout(WAIT);
    await laptop.close();
    await tab.goto(`${t.url}/login`);
    await signIn(tab, alice.handle);
    await tab.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${room}` }).waitFor();
    await tab.waitForFunction(
      (d) => document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')?.value === d,
      draft,
    );
    expect(other.errors).toEqual([]);
    await other.context.close();
  },
);

browserTest(
  "a session ended while its tab was closed: found on opening, then the channel and draft come back",
  async () => {
    const alice = await signUp(t.url, "alice");
    const page = alice.page;
    const room = `y${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(page, room, "public");
    await sidebarChannel(page, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await openChannel(page, room);
    const address = page.url();
    const draft = "written before closing the laptop";
    await page.getByRole("textbox", { name: "Message" }).fill(draft);
    await page.close();

    // Meanwhile, from another device: "Sign out everywhere else".
    const phone = await ok(t.url, "login", { identifier: alice.handle, password: PASSWORD });
    expect((await ok(t.url, "revokeOtherSessions", {}, phone.accessJwt)).revoked).toBe(1);

    // The laptop opens the channel's address again: told the session ended, then back after sign-in.
    const tab = await alice.context.newPage();
    tab.setDefaultTimeout(WAIT);
    await tab.goto(address);
    await tab.waitForURL("**/login");
    await tab.getByText("Your session ended. Sign in again to continue where you left off.").waitFor();
    await signIn(tab, alice.handle);
    await tab.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${room}` }).waitFor();
    await tab.waitForFunction(
      (d) => document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')?.value === d,
      draft,
    );
  },
);
