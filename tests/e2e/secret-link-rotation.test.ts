/**
 * Real Chromium against the real server: a secret channel's link after a kick (protocol §7). Alice
 * makes the channel and shares its link, Bob and Carol join by it, Alice kicks Carol from the
 * members panel. The old link then lets no one in (neither Carol again nor Dave, who never joined);
 * Alice and Bob see a new link in the info panel, made by Alice's client and sealed in the new
 * epoch; and the new link lets Dave in, where he reads what Alice writes next.
 */
import { expect } from "bun:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { parseJoinLink } from "../../core/protocol/runtime.ts";
import { call, ok } from "../server/harness.ts";
import {
  browserTest,
  e2eServer,
  newProfile,
  PASSWORD,
  registerInBrowser,
  saveKeysAndEnter,
  shot,
  uniqueHandle,
} from "./harness.ts";

/** Generous: a loaded 2-core machine runs four Chromium profiles, the server and the test. */
const WAIT = 30_000;

const t = e2eServer();

/** An access token from a session of its own: the page keeps its token in memory only. */
async function apiToken(handle: string): Promise<string> {
  return (await ok(t.url, "login", { identifier: handle, password: PASSWORD })).accessJwt;
}

interface Someone {
  handle: string;
  page: Page;
  context: BrowserContext;
  errors: string[];
}

async function signUp(name: string): Promise<Someone> {
  const handle = uniqueHandle(name);
  const { page, context, errors } = await newProfile();
  page.setDefaultTimeout(WAIT);
  await registerInBrowser(page, t.url, handle);
  await saveKeysAndEnter(page);
  return { handle, page, context, errors };
}

const chatTitle = (page: Page, room: string) =>
  page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${room}` });

const memberRow = (page: Page, handle: string): Locator =>
  page.locator('[data-testid="members"] li.member', { hasText: handle });

/** The link field of the info panel (members of a secret channel only). */
const linkField = (page: Page) => page.locator('[data-testid="channel-link"] input');

/** Waits until the chat view has its input and the epoch keys are in. */
async function waitKeysLoaded(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      !!document.querySelector('[data-testid="chat-view"] textarea[aria-label="Message"]') &&
      ![...document.querySelectorAll(".chat-note.warning")].some((n) =>
        n.textContent?.includes("Encryption keys not loaded"),
      ),
    undefined,
    { timeout: WAIT },
  );
}

/** Pastes a link into the Channels sidebar's form and presses Join Secret Channel. */
async function pasteLink(page: Page, link: string): Promise<void> {
  await page.getByRole("textbox", { name: "Secret channel link" }).fill(link);
  await page.getByRole("button", { name: "Join Secret Channel" }).click();
}

async function joinByLink(who: Someone, link: string, room: string): Promise<void> {
  await pasteLink(who.page, link);
  await chatTitle(who.page, room).waitFor();
  await waitKeysLoaded(who.page);
}

/** A join the server refuses: a link that does not work looks like no channel at all. */
async function expectRefused(who: Someone, link: string): Promise<void> {
  const toast = who.page.getByRole("status").filter({ hasText: "Channel not found" });
  await pasteLink(who.page, link);
  await toast.first().waitFor();
  // No channel opened for it.
  expect(await who.page.locator('[data-testid="chat-view"]').count()).toBe(0);
}

/** Waits until the info panel shows a link other than `old`, and returns it. */
async function newLinkIn(page: Page, old: string): Promise<string> {
  await page.waitForFunction(
    (was) => {
      const v = document.querySelector<HTMLInputElement>('[data-testid="channel-link"] input')?.value;
      return !!v && v !== was;
    },
    old,
    { timeout: WAIT },
  );
  return linkField(page).inputValue();
}

async function send(page: Page, text: string): Promise<void> {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text);
  await input.press("Enter");
  await page.waitForFunction(
    (t) => {
      const box = document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
      const mine = [...document.querySelectorAll(".chat-list .msg")].find(
        (r) => r.querySelector(".text")?.textContent === t,
      );
      return !!mine && !mine.classList.contains("sending") && box?.value === "" && !box.disabled;
    },
    text,
    { timeout: WAIT },
  );
}

/** `text` from `author`, decrypted and verified. */
async function expectMessage(page: Page, author: string, text: string): Promise<void> {
  const row = page.locator(".chat-list .msg").filter({ has: page.locator(".text", { hasText: text }) });
  await row.waitFor();
  expect(await row.locator(".who").textContent()).toBe(author);
  expect(await row.locator(".mark").textContent()).toBe("✓");
}

browserTest(
  "secret link: a kick voids the old link for everyone, members see the new one, and it lets a newcomer in",
  async () => {
    const alice = await signUp("alice");
    const bob = await signUp("bob");
    const carol = await signUp("carol");
    const room = `vault${Math.random().toString(36).slice(2, 7)}`;

    // Alice creates the secret channel in the dialog and copies its link.
    await alice.page.getByRole("button", { name: "Create channel" }).click();
    const dialog = alice.page.getByRole("dialog", { name: "Create Channel" });
    await dialog.locator('input[name="name"]').fill(room);
    await dialog.locator('input[type="radio"][value="secret"]').check();
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByRole("button", { name: "Copy" }).click();
    await dialog.getByRole("button", { name: "Copied!" }).waitFor();
    const oldLink = await alice.page.evaluate(() => navigator.clipboard.readText());
    expect(oldLink).toBe(await dialog.getByRole("textbox", { name: "Channel Link" }).inputValue());
    const channelId = parseJoinLink(oldLink)?.channelId as string;
    expect(parseJoinLink(oldLink)?.joinToken).toBeTruthy();
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    await alice.page.locator(".sb-list .sb-channel", { hasText: `#${room}` }).click();
    await chatTitle(alice.page, room).waitFor();
    await waitKeysLoaded(alice.page);
    // The info panel has the same link for her, with the owner's Rotate link control.
    expect(await linkField(alice.page).inputValue()).toBe(oldLink);
    expect(await alice.page.getByRole("button", { name: "Rotate link" }).count()).toBe(1);

    // Bob and Carol join with it; Bob sees the link too, without the owner's control.
    await joinByLink(bob, oldLink, room);
    await joinByLink(carol, oldLink, room);
    await memberRow(alice.page, bob.handle).waitFor();
    await memberRow(alice.page, carol.handle).waitFor();
    await expect(linkField(bob.page).inputValue()).resolves.toBe(oldLink);
    expect(await bob.page.getByRole("button", { name: "Rotate link" }).count()).toBe(0);

    // Alice kicks Carol from the members panel, as a user would.
    const carolRow = memberRow(alice.page, carol.handle);
    await carolRow.locator(".member-line").click();
    await carolRow.getByRole("button", { name: "KICK" }).click();
    await carolRow.waitFor({ state: "detached" });

    // Alice and Bob see a new link in the info panel: Alice's client made it with the kick's epoch.
    const newLink = await newLinkIn(alice.page, oldLink);
    expect(newLink).not.toBe(oldLink);
    expect(parseJoinLink(newLink)?.channelId).toBe(channelId);
    expect(parseJoinLink(newLink)?.joinToken).not.toBe(parseJoinLink(oldLink)?.joinToken);
    expect(await newLinkIn(bob.page, oldLink)).toBe(newLink);
    // The timeline says so, from the signed commit.
    const commit = alice.page.locator(".chat-list .notice.epoch", { hasText: `removed ${carol.handle}` });
    await commit.waitFor();
    expect(await commit.textContent()).toContain("made a new secret link");
    await shot(alice.page, "link-rotated-alice");
    await shot(bob.page, "link-rotated-bob");

    // Copy gives Alice the new link to share.
    await alice.page.locator('[data-testid="channel-link"]').getByRole("button", { name: "Copy" }).click();
    expect(await alice.page.evaluate(() => navigator.clipboard.readText())).toBe(newLink);

    // The old link lets no one in: not Carol again, not Dave who never joined.
    await expectRefused(carol, oldLink);
    const carolToken = await apiToken(carol.handle);
    const aliceToken = await apiToken(alice.handle);
    const refused = await call(t.url, "getMessages", { channelUri: channelId, limit: 50 }, carolToken);
    expect([403, 404]).toContain(refused.status);
    const dave = await signUp("dave");
    await expectRefused(dave, oldLink);
    const members = async () =>
      (await ok(t.url, "getMembers", { channelUri: channelId }, aliceToken)).members.map((m) => m.handle);
    const before = await members();
    expect(before.some((h) => h.startsWith(`${carol.handle}.`) || h === carol.handle)).toBe(false);
    expect(before.some((h) => h.startsWith(`${dave.handle}.`) || h === dave.handle)).toBe(false);
    expect(before).toHaveLength(2);

    // The new link lets Dave in, and he reads what Alice writes next.
    await joinByLink(dave, newLink, room);
    await memberRow(alice.page, dave.handle).waitFor();
    expect(await linkField(dave.page).inputValue()).toBe(newLink);
    const hello = `welcome dave, ${room} is yours too`;
    await send(alice.page, hello);
    await expectMessage(dave.page, alice.handle, hello);
    await expectMessage(bob.page, alice.handle, hello);
    await shot(dave.page, "link-rotated-dave-joined");

    // Nothing in this honest run tripped a security check.
    for (const who of [alice, bob, dave]) expect(await who.page.locator(".chat-warn").count()).toBe(0);
    for (const who of [alice, bob, carol, dave]) expect(who.errors).toEqual([]);
    for (const who of [alice, bob, carol, dave]) await who.context.close();
  },
  300_000,
);

browserTest(
  "a message typed and sent right after joining by the link, while the join's rotation runs, reaches the other member",
  async () => {
    const alice = await signUp("alice");
    const bob = await signUp("bob");
    const room = `first${Math.random().toString(36).slice(2, 7)}`;
    await alice.page.getByRole("button", { name: "Create channel" }).click();
    const dialog = alice.page.getByRole("dialog", { name: "Create Channel" });
    await dialog.locator('input[name="name"]').fill(room);
    await dialog.locator('input[type="radio"][value="secret"]').check();
    await dialog.getByRole("button", { name: "Create" }).click();
    const link = await dialog.getByRole("textbox", { name: "Channel Link" }).inputValue();
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    await alice.page.locator(".sb-list .sb-channel", { hasText: `#${room}` }).click();
    await chatTitle(alice.page, room).waitFor();
    await waitKeysLoaded(alice.page);

    // Bob's join rotates the channel (create-epoch): held back here until he has typed and pressed
    // Enter, so the message is certainly sent while the rotation runs, as a quick typist's would be.
    let release: () => void = () => undefined;
    const typed = new Promise<void>((r) => {
      release = r;
    });
    let held = 0;
    await bob.page.route("**/api/channel/create-epoch", async (route) => {
      held++;
      await typed;
      await route.continue();
    });
    await pasteLink(bob.page, link);
    await chatTitle(bob.page, room).waitFor();
    const input = bob.page.getByRole("textbox", { name: "Message" });
    const first = "hello, just joined";
    await input.fill(first);
    await input.press("Enter");
    // Not ignored (the text used to stay in the box): the box empties, and the composer says the
    // message waits for the channel.
    await bob.page.waitForFunction(
      () => document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')?.value === "",
    );
    await bob.page.locator('[data-testid="compose-waiting"]', { hasText: first }).waitFor();
    // The join's rotation is the one held (a condition, not a delay: it polls until it is so).
    for (let i = 0; held === 0 && i < 600; i++) await new Promise((r) => setTimeout(r, 50));
    expect(held).toBe(1);
    await shot(bob.page, "compose-waiting-for-keys");
    release();

    // Once the channel is ready it goes out, and Alice reads it, signed by Bob (his name is verified
    // from the join's commit, which may come in just after the message).
    const row = alice.page
      .locator(".chat-list .msg")
      .filter({ has: alice.page.locator(".text", { hasText: first }) });
    await row.locator(".who", { hasText: new RegExp(`^${bob.handle}$`) }).waitFor();
    await expectMessage(alice.page, bob.handle, first);
    await expectMessage(bob.page, bob.handle, first);
    await bob.page.locator('[data-testid="compose-waiting"]').waitFor({ state: "detached" });
    for (const who of [alice, bob]) expect(who.errors).toEqual([]);
    for (const who of [alice, bob]) await who.context.close();
  },
  180_000,
);
