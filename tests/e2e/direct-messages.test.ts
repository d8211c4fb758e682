/**
 * Issue 30 in real Chromium: conversations with people. Alice types `/msg bob hi` in the terminal and
 * the conversation opens for her; Bob, who shares a channel with her, finds it under "Direct
 * messages" with an unread count and gets a notification. A stranger's conversation lands apart, in
 * "Requests", and is accepted; another stranger's is blocked: it is gone, their next message is
 * refused, and it does not come back on reload. Conversations never show among the channels; "Message"
 * on a member's row and Ctrl+K reach the same one conversation.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { signedUp } from "../core/client/engine-harness.ts";
import {
  createInDialog,
  expectMessage,
  openChannel,
  send,
  sidebarChannel,
  signUp,
  unlockTerminal,
  WAIT,
  waitKeysLoaded,
} from "./chat.ts";
import { browserTest, e2eServer, shot } from "./harness.ts";

const t = e2eServer();
const shortHandle = (h: string) => h.split(".")[0] as string;
const rnd = () => Math.random().toString(36).slice(2, 7);

/** Records the notifications the page shows; this profile has already allowed them. */
async function recordNotifications(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const shown: { title: string; body: string }[] = [];
    (window as unknown as { __shown: typeof shown }).__shown = shown;
    class FakeNotification {
      static permission = "granted";
      static requestPermission = async () => "granted";
      constructor(title: string, opts?: { body?: string }) {
        shown.push({ title, body: opts?.body ?? "" });
      }
    }
    (window as unknown as { Notification: unknown }).Notification = FakeNotification;
  });
}
const shown = (page: Page) =>
  page.evaluate(() => (window as unknown as { __shown: { title: string; body: string }[] }).__shown);

/** A conversation in the sidebar's "Direct messages", by the other person's handle. */
const dm = (page: Page, handle: string) =>
  page.locator(".sb-dms .sb-dm", { has: page.locator(".sb-name", { hasText: new RegExp(`^${handle}$`) }) });
const request = (page: Page, handle: string) =>
  page.getByRole("region", { name: "Message requests" }).getByTestId("request").filter({ hasText: handle });
const chatTitle = (page: Page, text: string) =>
  page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: new RegExp(`^${text}$`) });

browserTest(
  "/msg bob hi opens the conversation; bob sees it with an unread count and a notification; requests are accepted or blocked",
  async () => {
    const alice = await signUp(t.url, "alice");
    const bob = await signUp(t.url, "bob");
    await recordNotifications(bob.page);

    // They know each other: a channel in common (so alice's conversation is no request for bob).
    const room = `lobby${rnd()}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await sidebarChannel(alice.page, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await bob.page.reload();
    await openChannel(bob.page, room);

    // Alice, in the terminal: `/msg bob hi` opens the conversation with her first message in it.
    await alice.page.locator(".sb-nav button", { hasText: "terminal" }).click();
    await unlockTerminal(alice.page);
    const command = alice.page.getByRole("textbox", { name: "Command" });
    await command.fill(`/msg ${bob.handle} hi`);
    await command.press("Enter");
    await chatTitle(alice.page, bob.handle).waitFor();
    await waitKeysLoaded(alice.page);
    await expectMessage(alice.page, alice.handle, "hi");
    await dm(alice.page, bob.handle).waitFor();

    // Bob, reading the channel: the conversation under "Direct messages" with one unread, notified.
    const toBob = dm(bob.page, alice.handle);
    await toBob.locator('[data-testid="unread"]', { hasText: /^1$/ }).waitFor();
    await bob.page.waitForFunction(
      (from) => (window as unknown as { __shown: { title: string }[] }).__shown.some((n) => n.title === from),
      alice.handle,
      { timeout: WAIT },
    );
    const note = (await shown(bob.page)).find((n) => n.title === alice.handle);
    // The default content: who wrote, not what (docs/decisions/notification-content.md).
    expect(note?.body).toBe(`New message from ${alice.handle}`);
    // Alice and bob are online: the one-to-one entry says so.
    await toBob.locator('[data-testid="presence"].on').waitFor();
    await shot(bob.page, "dm-sidebar-unread");
    await toBob.click();
    await chatTitle(bob.page, alice.handle).waitFor();
    await expectMessage(bob.page, alice.handle, "hi");
    await toBob.locator('[data-testid="unread"]').waitFor({ state: "detached" });

    // A stranger (no channel in common, never written to) writes: a request, apart, not notified.
    // (Engine clients in this process; the board shows handles without the server's suffix.)
    const carol = await signedUp(t.url, "carol");
    const carolName = shortHandle(carol.handle);
    const before = (await shown(bob.page)).length;
    const fromCarol = await carol.client.direct.open([bob.handle]);
    await carol.client.send(fromCarol.conversation.channel.id, "hello from a stranger");
    await request(bob.page, carolName).waitFor();
    expect(await dm(bob.page, carolName).count()).toBe(0);
    await shot(bob.page, "dm-request");
    await request(bob.page, carolName).getByRole("button", { name: "Accept" }).click();
    await dm(bob.page, carolName).waitFor();
    await request(bob.page, carolName).waitFor({ state: "detached" });
    await dm(bob.page, carolName).click();
    await chatTitle(bob.page, carolName).waitFor();
    await expectMessage(bob.page, carolName, "hello from a stranger");
    expect((await shown(bob.page)).length).toBe(before);

    // Another stranger is blocked: the request goes, their next message is refused.
    const dave = await signedUp(t.url, "dave");
    const daveName = shortHandle(dave.handle);
    const fromDave = await dave.client.direct.open([bob.handle]);
    const daveId = fromDave.conversation.channel.id;
    await dave.client.send(daveId, "buy my stuff");
    await request(bob.page, daveName).getByRole("button", { name: "Block" }).click();
    await request(bob.page, daveName).waitFor({ state: "detached" });
    await bob.page.locator(".sb-blocked summary", { hasText: "Blocked (1)" }).waitFor();
    const refused = await dave.client.send(daveId, "are you there?").then(
      (item) => item.error ?? `sent (${item.state})`,
      (e: Error) => e.message,
    );
    expect(refused).toContain("You cannot send messages to this person");

    // After a reload: alice's and carol's conversations, nothing of dave's; none among the channels.
    await bob.page.reload();
    await dm(bob.page, alice.handle).waitFor();
    await dm(bob.page, carolName).waitFor();
    await sidebarChannel(bob.page, room).waitFor();
    expect(await request(bob.page, daveName).count()).toBe(0);
    expect(await dm(bob.page, daveName).count()).toBe(0);
    expect(await bob.page.locator(".sb-blocked li", { hasText: daveName }).count()).toBe(1);
    const channelEntries = await bob.page
      .locator(".sb-joined .sb-channel, .sb-browse .sb-channel")
      .allTextContents();
    expect(channelEntries.every((e) => e.startsWith("#") && e.length > 1)).toBe(true);
    for (const who of [alice.handle, carolName, daveName])
      expect(channelEntries.some((e) => e.includes(who))).toBe(false);
    // Alice's view of Browse has no conversation either.
    await alice.page.reload();
    await dm(alice.page, bob.handle).waitFor();
    const aliceChannels = await alice.page
      .locator(".sb-joined .sb-channel, .sb-browse .sb-channel")
      .allTextContents();
    expect(aliceChannels.every((e) => e.startsWith("#") && e.length > 1)).toBe(true);

    // "Message" on a member's row and Ctrl+K find the same one conversation with a person.
    await openChannel(alice.page, room);
    await alice.page.getByRole("button", { name: `Message ${bob.handle}` }).click();
    await chatTitle(alice.page, bob.handle).waitFor();
    await expectMessage(alice.page, alice.handle, "hi");
    // So does a person's name on their message.
    await openChannel(bob.page, room);
    await send(bob.page, "anyone for lunch?");
    await openChannel(alice.page, room);
    await alice.page
      .locator(".chat-list .msg", { hasText: "anyone for lunch?" })
      .locator("button.who")
      .click();
    await chatTitle(alice.page, bob.handle).waitFor();
    await expectMessage(alice.page, alice.handle, "hi");
    expect(await alice.page.locator(".sb-dms .sb-dm").count()).toBe(1);
    await openChannel(bob.page, room);
    await bob.page.keyboard.press("Control+k");
    await bob.page.getByRole("dialog", { name: "Switch channel" }).waitFor();
    await bob.page.keyboard.type(`@${carolName}`);
    await bob.page.keyboard.press("Enter");
    await chatTitle(bob.page, carolName).waitFor();
    await expectMessage(bob.page, carolName, "hello from a stranger");
    expect(await bob.page.locator(".sb-dms .sb-dm").count()).toBe(2);

    carol.client.disconnect();
    dave.client.disconnect();
    for (const p of [alice, bob]) expect(p.errors).toEqual([]);
  },
  180_000,
);
