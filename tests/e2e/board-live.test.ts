/**
 * Issue 28 defect 10, what the board must tell without a reload:
 * - the network overview's counts (members, messages) follow what happens in the channels;
 * - a member kicked from a channel is told so, and by whom ("You were removed from #x by y").
 */
import { afterAll, beforeAll } from "bun:test";
import { handleWithoutSuffix } from "../../core/client/view/display.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { createInDialog, openChannel, send, sidebarChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, closeBrowser, shot } from "./harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await closeBrowser();
  await t?.stop();
});

const room = (p: string) => `${p}${Math.random().toString(36).slice(2, 7)}`;

async function newChannel(page: import("playwright-core").Page, name: string): Promise<void> {
  const dialog = await createInDialog(page, name, "public");
  await sidebarChannel(page, name).waitFor();
  if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
}

browserTest("the network overview's counts stay live while it is open", async () => {
  const alice = await signUp(t.url, "alice");
  const bob = await signUp(t.url, "bob");
  const name = room("net");
  await newChannel(alice.page, name);
  await openChannel(alice.page, name);
  await send(alice.page, "the first word");
  await alice.page.locator(".sb-nav button", { hasText: "network" }).click();
  const card = alice.page.locator(".net-card", { hasText: `#${name}` });
  await card.filter({ hasText: "Members: 1" }).filter({ hasText: "Messages: 1" }).waitFor();

  // Bob joins and talks; Alice's overview follows without a reload.
  await bob.page.reload();
  await openChannel(bob.page, name);
  await card.filter({ hasText: "Members: 2" }).waitFor({ timeout: WAIT });
  await send(bob.page, "and a second");
  await send(bob.page, "and a third");
  await card.filter({ hasText: "Messages: 3" }).waitFor({ timeout: WAIT });
  await alice.page.locator('[data-testid="net-core"]', { hasText: "3 messages" }).waitFor();
  await shot(alice.page, "network-live-counts");
});

browserTest("a kicked member is told at once, and by whom", async () => {
  const alice = await signUp(t.url, "alice");
  const bob = await signUp(t.url, "bob");
  const name = room("kick");
  await newChannel(alice.page, name);
  await openChannel(alice.page, name);
  await send(alice.page, "welcome");
  await bob.page.reload();
  await openChannel(bob.page, name);
  const bobRow = alice.page.locator('[data-testid="members"] li.member', { hasText: bob.handle });
  await bobRow.waitFor({ timeout: WAIT });
  await bobRow.locator(".member-line").click();
  await bobRow.getByRole("button", { name: "KICK" }).click();
  await bobRow.waitFor({ state: "detached" });

  const told = bob.page.getByText(`You were removed from #${name} by ${handleWithoutSuffix(alice.handle)}`);
  await told.waitFor({ timeout: WAIT });
  await shot(bob.page, "kicked-told");
  // The channel is closed for Bob.
  await bob.page.locator('[data-testid="chat-view"]').waitFor({ state: "detached" });
});
