/**
 * Issue 28 defect 1 (critical), in real Chromium: X, Y and Z share a public channel and all post; Z
 * signs in on a new browser and picks "I lost my key: make new keys". Everyone keeps talking: Z's
 * client makes its own key-change commit (protocol §8), X and Y see the key-change warning row
 * ("compare safety numbers"), no check fails, and nobody's sends end ✗.
 */
import { expect } from "bun:test";
import { createInDialog, expectMessage, openChannel, send, signUp, WAIT } from "./chat.ts";
import { browserTest, e2eServer, newProfile, PASSWORD, saveKeysAndEnter, shot } from "./harness.ts";

const t = e2eServer();

browserTest(
  "one member's 'I lost my key' keeps the channel going: a warning row for the others, everyone talks",
  async () => {
    const x = await signUp(t.url, "xia");
    const y = await signUp(t.url, "yan");
    const z = await signUp(t.url, "zed");
    const room = `reset${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(x.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    for (const p of [y.page, z.page]) {
      await p.reload();
      await openChannel(p, room);
    }
    await openChannel(x.page, room);
    await send(x.page, "x says hi");
    await send(y.page, "y says hi");
    await send(z.page, "z says hi");
    for (const p of [x.page, y.page]) await expectMessage(p, z.handle, "z says hi");
    await z.context.close();

    // Z on a new browser, without the key: "I lost my key: make new keys".
    const fresh = await newProfile();
    fresh.page.setDefaultTimeout(WAIT);
    await fresh.page.goto(`${t.url}/login`);
    await fresh.page.fill('input[name="identifier"]', z.handle);
    await fresh.page.fill('input[name="password"]', PASSWORD);
    await fresh.page.click('button[type="submit"]');
    await fresh.page.getByText("Private Key Validation").waitFor();
    await fresh.page.getByRole("button", { name: "I lost my key: make new keys" }).click();
    await fresh.page.getByRole("button", { name: "Make new keys" }).click();
    await fresh.page.getByText("Your New Encryption Keys").waitFor();
    await saveKeysAndEnter(fresh.page);
    await fresh.page.locator('[data-testid="board"]').waitFor();
    await openChannel(fresh.page, room);

    // Everyone keeps talking, in any order.
    await send(x.page, "x after the reset");
    await send(fresh.page, "z with new keys");
    await send(y.page, "y after the reset");
    for (const p of [x.page, y.page]) await expectMessage(p, z.handle, "z with new keys");
    await expectMessage(fresh.page, x.handle, "x after the reset");
    await expectMessage(fresh.page, y.handle, "y after the reset");
    await expectMessage(x.page, y.handle, "y after the reset");

    // X and Y see the key-change warning row; no check failed and nothing is ✗.
    for (const p of [x.page, y.page]) {
      await p.getByText("key changed: compare safety numbers", { exact: false }).first().waitFor();
      expect(await p.getByText("does not verify", { exact: false }).count()).toBe(0);
      expect(await p.locator(".chat-list .msg.failed").count()).toBe(0);
    }
    expect(await fresh.page.locator(".chat-list .msg.failed").count()).toBe(0);
    await shot(x.page, "key-reset-x");
    await fresh.context.close();
  },
  180_000,
);
