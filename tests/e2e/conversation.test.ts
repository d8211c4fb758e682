/**
 * Real Chromium against the real server: the conversation flows of spec §2.8–2.13. Two people talk in
 * a secret channel (created in the dialog, joined by its link), a third who never joined sees nothing
 * of it; an invite channel invites by handle and shows the forward-secrecy text for what came before;
 * DISCONNECT logs out and wipes the keys.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { parseJoinLink } from "../../core/protocol/runtime.ts";
import { call, ok } from "../server/harness.ts";
import { createChannel as createChannelOverHttp, person } from "../server/people.ts";
import {
  createInDialog,
  expectMessage,
  openChannel,
  send,
  sidebarChannel,
  signUp as signUpAt,
  unlockTerminal,
  WAIT,
  waitConnected,
  waitKeysLoaded,
} from "./chat.ts";
import { browserTest, e2eServer, leaksSecrets, PASSWORD, pageSecrets, shot } from "./harness.ts";

const FORWARD_SECRECY = "Message encrypted before you joined (forward secrecy)";

const t = e2eServer();

/**
 * An access token for a user, from a session of its own: the page's token lives in its memory only
 * (docs/decisions/key-custody.md), out of reach of scripts and of this test.
 */
async function apiToken(handle: string): Promise<string> {
  return (await ok(t.url, "login", { identifier: handle, password: PASSWORD })).accessJwt;
}

/** A new browser profile that registers, saves its keys and lands on the board. */
const signUp = (name: string) => signUpAt(t.url, name);

async function safetyNumbersOf(page: Page, handle: string) {
  const member = page.locator('[data-testid="members"] li.member', { hasText: handle });
  await member.locator(".member-line").click();
  await member.getByRole("button", { name: "SAFETY_NUMBERS" }).click();
  const dl = member.locator("dl");
  await dl.waitFor();
  const dd = dl.locator("dd");
  const [mine, theirs, pair] = await Promise.all([0, 1, 2].map((i) => dd.nth(i).textContent()));
  return { mine, theirs, pair, member };
}

browserTest(
  "secret channel: create in the dialog, copy the link, join by it, talk both ways, reload keeps it, an outsider sees nothing",
  async () => {
    const alice = await signUp("alice");
    const bob = await signUp("bob");
    const room = `den${Math.random().toString(36).slice(2, 7)}`;

    // The board starts on the terminal: the puzzle, then the prompt once a secret phrase is given.
    await alice.page.getByRole("region", { name: "Terminal" }).waitFor();
    await alice.page.getByText("how do the unheard find their voice?").waitFor();
    await unlockTerminal(alice.page);
    await shot(alice.page, "conv-board-terminal");

    // Create Channel: a secret channel shows its link in place, the dialog stays open.
    const dialog = await createInDialog(alice.page, room, "secret");
    const linkField = dialog.getByRole("textbox", { name: "Channel Link" });
    await linkField.waitFor();
    await dialog.getByText("Share this link with people you want to invite to the channel").waitFor();
    expect(await linkField.getAttribute("readonly")).not.toBeNull();
    await dialog.getByRole("button", { name: "Copy" }).click();
    await dialog.getByRole("button", { name: "Copied!" }).waitFor();
    const link = await alice.page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(await linkField.inputValue());
    const parsed = parseJoinLink(link);
    expect(parsed?.joinToken).toBeTruthy();
    const channelId = parsed?.channelId as string;
    expect(link).toContain(`/sync/join/${channelId}#`);
    // Cancel became Close; Create is gone.
    expect(await dialog.getByRole("button", { name: "Create" }).count()).toBe(0);
    await shot(alice.page, "conv-create-dialog-secret-link");
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });

    // The new channel is in Alice's list with a lock; she opens it.
    const aliceEntry = sidebarChannel(alice.page, room);
    await aliceEntry.waitFor();
    expect(await aliceEntry.getByRole("img", { name: "secret channel" }).count()).toBe(1);
    await openChannel(alice.page, room);
    expect(await alice.page.locator(".chat-type").textContent()).toBe("[secret +s]");
    await alice.page.getByText("NO_MESSAGES_YET").waitFor();

    // Bob pastes the link into the sidebar's form: the channel opens for him.
    await bob.page.getByRole("textbox", { name: "Secret channel link" }).fill(link);
    await bob.page.getByRole("button", { name: "Join Secret Channel" }).click();
    await bob.page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${room}` }).waitFor();
    await waitKeysLoaded(bob.page);
    await sidebarChannel(bob.page, room).waitFor();
    expect(await bob.page.getByRole("textbox", { name: "Secret channel link" }).inputValue()).toBe("");

    // Alice sees Bob join (members list and the → notice) before she writes.
    await alice.page.locator('[data-testid="members"] li.member', { hasText: bob.handle }).waitFor();
    await alice.page.locator(".chat-list .notice", { hasText: `${bob.handle} joined` }).waitFor();
    expect(await alice.page.locator(".chat-list .notice .sym").first().textContent()).toBe("→");

    const fromAlice = `hello bob, it is ${room} — ünïcödé & <b>not bold</b>`;
    const fromBob = "hi alice, reading you loud and clear";
    await send(alice.page, fromAlice);
    await expectMessage(alice.page, alice.handle, fromAlice);
    await expectMessage(bob.page, alice.handle, fromAlice);
    await send(bob.page, fromBob);
    await expectMessage(bob.page, bob.handle, fromBob);
    await expectMessage(alice.page, bob.handle, fromBob);
    // Plain text, never markup.
    expect(await bob.page.locator(".chat-list b b").count()).toBe(0);
    await shot(alice.page, "conv-chat-alice");
    await shot(bob.page, "conv-chat-bob");

    // Members: both listed, Alice as operator; the safety numbers agree across the two browsers.
    const members = alice.page.locator('[data-testid="members"]');
    expect(await members.locator("h3 .count").textContent()).toBe("[2]");
    expect(await members.locator("li.member", { hasText: alice.handle }).locator(".op").textContent()).toBe(
      "OP",
    );
    const aSees = await safetyNumbersOf(alice.page, bob.handle);
    const bSees = await safetyNumbersOf(bob.page, alice.handle);
    expect(aSees.mine).toMatch(/\d/);
    expect(aSees.mine).toBe(bSees.theirs);
    expect(aSees.theirs).toBe(bSees.mine);
    expect(aSees.pair).toBe(bSees.pair);
    expect(aSees.mine).not.toBe(aSees.theirs);
    await shot(alice.page, "conv-members-safety-numbers");

    // Reload keeps the session, the history and the open channel.
    for (const who of [bob, alice]) {
      await who.page.reload();
      await who.page.locator('[data-testid="board"]').waitFor();
      // The open channel is in the URL: a reload comes back to it.
      expect(who.page.url()).toEndWith(`/sync/c/${channelId}`);
      await openChannel(who.page, room);
      await expectMessage(who.page, alice.handle, fromAlice);
      await expectMessage(who.page, bob.handle, fromBob);
      expect(await who.page.locator(".chat-list .glitch").count()).toBe(0);
    }
    await shot(bob.page, "conv-chat-bob-after-reload");

    // Carol never joined: not in her sidebar, not in /wsync/list, and the server refuses her.
    const carol = await signUp("carol");
    const dave = await person(t.url, "dave");
    const lobby = await createChannelOverHttp(t.url, dave, "public", `lobby${room}`);
    await carol.page.reload();
    await sidebarChannel(carol.page, `lobby${room}`).waitFor();
    expect(await sidebarChannel(carol.page, room).count()).toBe(0);
    expect(await carol.page.locator("aside.channel-sidebar").textContent()).not.toContain(`#${room}`);
    await unlockTerminal(carol.page);
    const command = carol.page.getByRole("textbox", { name: "Command" });
    await command.fill("/wsync/list");
    await command.press("Enter");
    const head = carol.page.locator(".term-head");
    await head.filter({ hasText: /^FOUND \d+ CHANNELS?$/ }).waitFor();
    const listing = carol.page.locator(".term-list");
    await listing.getByText(`lobby${room}`).waitFor();
    const listed = (await listing.textContent()) ?? "";
    expect(listed).toContain(lobby.channel.id);
    expect(listed).not.toContain(channelId);
    expect(listed).not.toMatch(new RegExp(`\\b${room}\\b`));
    const carolToken = await apiToken(carol.handle);
    expect(carolToken.length).toBeGreaterThan(20);
    const refused = await call(t.url, "getMessages", { channelUri: channelId, limit: 50 }, carolToken);
    expect(refused.status).toBe(404);
    const refusedMembers = await call(t.url, "getMembers", { channelUri: channelId }, carolToken);
    expect(refusedMembers.status).toBe(404);
    // A link with a wrong token looks like no channel at all (and lets no one in).
    const forged = `${link.slice(0, link.indexOf("#") + 1)}${"A".repeat(22)}`;
    await carol.page.getByRole("textbox", { name: "Secret channel link" }).fill(forged);
    await carol.page.getByRole("button", { name: "Join Secret Channel" }).click();
    await carol.page.getByRole("status").filter({ hasText: "Channel not found" }).waitFor();
    expect(await carol.page.locator('[data-testid="chat-view"]').count()).toBe(0);
    expect(await sidebarChannel(carol.page, room).count()).toBe(0);
    const stillRefused = await call(t.url, "getMessages", { channelUri: channelId, limit: 50 }, carolToken);
    expect(stillRefused.status).toBe(404);
    // The members Alice sees are still the two of them.
    expect(await members.locator("h3 .count").textContent()).toBe("[2]");

    for (const who of [alice, bob, carol]) expect(who.errors).toEqual([]);
    for (const who of [alice, bob, carol]) await who.context.close();
  },
  240_000,
);

browserTest(
  "invite channel: invite by handle, the invitee joins from the sidebar; earlier messages stay sealed (forward secrecy)",
  async () => {
    const alice = await signUp("olga");
    const carol = await signUp("carl");
    const room = `inv${Math.random().toString(36).slice(2, 7)}`;
    // Carol must be online to see the invite arrive live.
    await waitConnected(carol.page);

    // An invite channel closes the dialog (no link) and is listed with a lock.
    const dialog = await createInDialog(alice.page, room, "invite");
    await dialog.waitFor({ state: "detached" });
    await sidebarChannel(alice.page, room).getByRole("img", { name: "invite channel" }).waitFor();
    await openChannel(alice.page, room);
    expect(await alice.page.locator(".chat-type").textContent()).toBe("[invite +i]");
    const before = "sent before carol was invited";
    await send(alice.page, before);
    await expectMessage(alice.page, alice.handle, before);

    // Carol cannot read it with her token: she is neither a member nor invited yet.
    const carolToken = await apiToken(carol.handle);
    const aliceToken = await apiToken(alice.handle);
    const { channels } = await ok(t.url, "getChannels", {}, aliceToken);
    const channelId = channels.find((c) => c.value.name === room)?.id as string;
    expect(channelId).toBeTruthy();
    const early = await call(t.url, "getMessages", { channelUri: channelId, limit: 50 }, carolToken);
    expect(early.status).toBe(403);

    // The invite section of the members sidebar: a handle and SEND.
    const invite = alice.page.locator('[data-testid="members"] form.invite');
    await invite.getByText("INVITE_NODE").waitFor();
    expect(await invite.getByRole("button", { name: "SEND" }).isDisabled()).toBe(true);
    await invite.getByRole("textbox", { name: "Handle to invite" }).fill(carol.handle);
    await invite.getByRole("button", { name: "SEND" }).click();
    await alice.page
      .getByRole("status")
      .filter({ hasText: `Invite sent to ${carol.handle}` })
      .waitFor();
    expect(await invite.getByRole("textbox", { name: "Handle to invite" }).inputValue()).toBe("");

    // Carol sees the pending invite in her sidebar and joins from it.
    const pending = carol.page.getByRole("region", { name: "Invites" });
    await pending.getByText(`#${room}`).waitFor();
    await pending.getByText(`from ${alice.handle}`).waitFor();
    // The name is readable, not squeezed to "#in…" by the line it shares.
    expect(await pending.locator(".sb-name").evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await shot(carol.page, "conv-invite-pending");
    await pending.getByRole("button", { name: "Join" }).click();
    await carol.page.locator('[data-testid="chat-view"] .chat-title h2', { hasText: `#${room}` }).waitFor();
    await waitKeysLoaded(carol.page);

    // The message from before she joined: glitch blocks and the forward-secrecy text, never plaintext.
    const sealed = carol.page.locator(".chat-list .msg", { hasText: FORWARD_SECRECY });
    await sealed.waitFor();
    expect(await sealed.count()).toBe(1);
    expect(await sealed.locator(".who").textContent()).toBe(alice.handle);
    expect(await sealed.locator(".glitch i").count()).toBe(5);
    expect(await sealed.locator(".mark").textContent()).toBe("✗");
    expect(await carol.page.locator(".chat-list").textContent()).not.toContain(before);
    await pending.waitFor({ state: "detached" });

    // New messages both ways are readable.
    await alice.page.locator('[data-testid="members"] li.member', { hasText: carol.handle }).waitFor();
    const after = "welcome carol, this one you can read";
    await send(alice.page, after);
    await expectMessage(carol.page, alice.handle, after);
    const reply = "thanks for the invite";
    await send(carol.page, reply);
    await expectMessage(alice.page, carol.handle, reply);
    await expectMessage(alice.page, alice.handle, before);
    expect(await carol.page.locator(".chat-list .msg", { hasText: FORWARD_SECRECY }).count()).toBe(1);
    await shot(carol.page, "conv-invite-forward-secrecy");

    for (const who of [alice, carol]) expect(who.errors).toEqual([]);
    for (const who of [alice, carol]) await who.context.close();
  },
  180_000,
);

browserTest(
  "DISCONNECT in the info panel asks first, then logs out, wipes the keys from the vault and lands on /login",
  async () => {
    const dan = await signUp("dan");
    await waitConnected(dan.page);
    const room = `pub${Math.random().toString(36).slice(2, 7)}`;
    // A public channel closes the dialog and appears without a lock.
    const dialog = await createInDialog(dan.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    await sidebarChannel(dan.page, room).waitFor();
    expect(await sidebarChannel(dan.page, room).locator("svg.lock").count()).toBe(0);
    await openChannel(dan.page, room);
    await send(dan.page, "anyone here?");
    await expectMessage(dan.page, dan.handle, "anyone here?");
    // A public channel has no invite section.
    expect(await dan.page.locator('[data-testid="members"] form.invite').count()).toBe(0);

    const info = dan.page.locator('[data-testid="info-panel"]');
    await info.getByText("AUTHORIZED").waitFor();
    expect(await info.textContent()).toContain("PUBLIC_KEY: PRESENT");
    expect(await info.textContent()).toContain("PRIVATE_KEY: PRESENT");
    expect(await info.textContent()).toContain(`HANDLE: ${dan.handle}`);
    expect(await info.textContent()).not.toContain(`HANDLE: ${dan.handle}.`);
    // Key custody: the key is in the vault (not exportable), the tokens nowhere a script reads.
    const before = await pageSecrets(dan.page);
    expect(leaksSecrets(before, dan.keys.privateKey)).toEqual([]);
    expect(before.vault.publicKey).toBe(dan.keys.publicKey);
    const auth = JSON.parse(before.local.auth as string) as { did: string };
    expect(await info.locator("code").textContent()).toBe(auth.did);
    const refreshCookie = (await dan.context.cookies()).find((c) => c.name === "wsync_refresh")
      ?.value as string;
    expect(refreshCookie.length).toBeGreaterThan(20);
    await shot(dan.page, "conv-info-panel");

    // Logging out ends the session, so the server closes this page's socket, usually before the
    // logout call is answered. A slow answer makes that certain: the page must still wipe the keys
    // and go to /login, not leave for "/" on the closed socket with the keys still stored.
    await dan.page.route("**/api/auth/refresh/logout", async (route) => {
      const answer = await route.fetch();
      await new Promise((r) => setTimeout(r, 1000));
      await route.fulfill({ response: answer }).catch(() => undefined);
    });
    const went: string[] = [];
    dan.page.on("framenavigated", (f) => {
      if (f === dan.page.mainFrame()) went.push(new URL(f.url()).pathname);
    });
    await info.getByRole("button", { name: "DISCONNECT" }).click();
    // Nothing destroys a key silently: the dialog says what this device loses first.
    const confirm = dan.page.getByRole("dialog", { name: "Log out of this device?" });
    await confirm.waitFor();
    // The safe choice has the focus: Enter right away does not log out (issue 28).
    await dan.page.waitForFunction(() => document.activeElement?.textContent === "Cancel");
    await confirm.getByRole("button", { name: "Log out", exact: true }).click();
    await dan.page.waitForURL("**/login", { timeout: WAIT });
    await dan.page.locator('input[name="identifier"]').waitFor();
    expect(went).toEqual(["/login"]);
    const afterAll = await pageSecrets(dan.page);
    const after = afterAll.local;
    expect(after.publicKey).toBeUndefined();
    expect(after.auth).toBeUndefined();
    expect(after.token).toBeUndefined();
    expect(Object.keys(after).filter((k) => k.startsWith("wsync-"))).toEqual([]);
    expect(afterAll.vault).toMatchObject({ publicKey: null, epochKeys: 0 });
    // The server ended the session too: the old refresh cookie is refused.
    const refused = await fetch(`${t.url}/api/auth/refresh`, {
      method: "POST",
      headers: { "x-wsync-session": "cookie", cookie: `wsync_refresh=${refreshCookie}` },
    });
    expect(refused.status).toBe(401);
    // And the board is guarded again.
    await dan.page.goto(`${t.url}/sync`);
    await dan.page.waitForURL("**/login", { timeout: WAIT });
    expect(dan.errors).toEqual([]);
    await dan.context.close();
  },
);
