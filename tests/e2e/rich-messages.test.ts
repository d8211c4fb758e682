/**
 * Replies, reactions, edits and deletes between two people in real Chromium (issue "a board people
 * can live in"). They travel inside the encrypted, signed message: the server stores ciphertext only.
 * The rules a reader's client applies to forged ones (an edit by anyone but the author, unverified
 * reactions) are tested in tests/core/crypto/rich-message.test.ts.
 */
import { expect } from "bun:test";
import {
  createInDialog,
  expectMessage,
  messageRow,
  openChannel,
  send,
  sidebarChannel,
  signUp,
} from "./chat.ts";
import { browserTest, e2eServer, shot } from "./harness.ts";

const t = e2eServer();

browserTest("reply, react, edit and delete, seen by the other member", async () => {
  const alice = await signUp(t.url, "alice");
  const bob = await signUp(t.url, "bob");
  const room = `rich${Math.random().toString(36).slice(2, 7)}`;
  const dialog = await createInDialog(alice.page, room, "public");
  await sidebarChannel(alice.page, room).waitFor();
  if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
  await bob.page.reload();
  await openChannel(bob.page, room);
  await openChannel(alice.page, room);

  await send(alice.page, "lunch at noon?");
  await expectMessage(bob.page, alice.handle, "lunch at noon?");

  // Bob replies: his message quotes Alice's.
  const question = bob.page.locator(".chat-list .msg", { hasText: "lunch at noon?" }).first();
  await question.hover();
  await question.getByRole("button", { name: "Reply" }).click();
  await bob.page.getByTestId("compose-mode").filter({ hasText: "Replying to" }).waitFor();
  await send(bob.page, "yes, the usual place");
  for (const page of [alice.page, bob.page]) {
    const reply = page.locator(".chat-list .msg", { hasText: "yes, the usual place" });
    await reply.locator(".reply-quote", { hasText: "lunch at noon?" }).waitFor();
  }

  // Bob reacts 👍; Alice sees the count, and adds hers: 2.
  await question.hover();
  await question.getByRole("button", { name: "React" }).click();
  await question.getByRole("button", { name: "React 👍" }).click();
  const aliceQuestion = alice.page.locator(".chat-list .msg", { hasText: "lunch at noon?" }).first();
  await aliceQuestion.getByRole("button", { name: "👍 1" }).waitFor();
  await aliceQuestion.getByRole("button", { name: "👍 1" }).click();
  await question.getByRole("button", { name: "👍 2" }).waitFor();
  // Taking it back.
  await aliceQuestion.getByRole("button", { name: "👍 2" }).click();
  await question.getByRole("button", { name: "👍 1" }).waitFor();

  // A reply that gets a reaction keeps its text on one line (issue 28 defect 3: it was squeezed to
  // one character per line, on both sides).
  const aliceReply = alice.page.locator(".chat-list .msg", { hasText: "yes, the usual place" }).first();
  await aliceReply.hover();
  await aliceReply.getByRole("button", { name: "React" }).click();
  await aliceReply.getByRole("button", { name: "React 👍" }).click();
  for (const page of [alice.page, bob.page]) {
    const reply = page.locator(".chat-list .msg", { hasText: "yes, the usual place" }).first();
    await reply.getByRole("button", { name: "👍 1" }).waitFor();
    const box = await reply.locator(".text").boundingBox();
    const line = await reply
      .locator(".text")
      .evaluate((el) => Number.parseFloat(getComputedStyle(el).lineHeight));
    expect(box?.width ?? 0).toBeGreaterThan(150);
    expect(box?.height ?? 0).toBeLessThan(line * 1.6);
  }

  // Alice edits her message: both see the new text, marked (edited).
  await aliceQuestion.hover();
  await aliceQuestion.getByRole("button", { name: "Edit" }).click();
  await alice.page.getByTestId("compose-mode").filter({ hasText: "Editing" }).waitFor();
  const input = alice.page.getByRole("textbox", { name: "Message" });
  await input.fill("lunch at one?");
  await input.press("Enter");
  for (const page of [alice.page, bob.page]) {
    const row = page.locator(".chat-list .msg", { hasText: "lunch at one?" }).first();
    await row.locator(".edited").waitFor();
  }
  // Bob cannot edit Alice's message from the UI (no Edit button on it).
  expect(await question.getByRole("button", { name: "Edit" }).count()).toBe(0);

  // Alice deletes her message (asked first): both see it deleted.
  // The app's own dialog asks (not the browser's confirm()), opening on Cancel; Escape keeps it.
  let native = 0;
  alice.page.on("dialog", (d) => {
    native++;
    void d.dismiss();
  });
  const edited = alice.page.locator(".chat-list .msg", { hasText: "lunch at one?" }).first();
  await edited.hover();
  await edited.getByRole("button", { name: "Delete" }).click();
  const ask = alice.page.getByRole("dialog", { name: "Delete this message?" });
  await ask.waitFor();
  await alice.page.waitForFunction(() => document.activeElement?.textContent === "Cancel");
  await alice.page.keyboard.press("Escape");
  await ask.waitFor({ state: "detached" });
  expect(await edited.locator(".text").textContent()).toContain("lunch at one?");
  await edited.hover();
  await edited.getByRole("button", { name: "Delete" }).click();
  await ask.getByRole("button", { name: "Delete", exact: true }).click();
  for (const page of [alice.page, bob.page]) await page.locator(".chat-list .msg.deleted").first().waitFor();
  expect(await messageRow(bob.page, "lunch at one?").count()).toBe(0);
  expect(native).toBe(0);
  await shot(bob.page, "rich-messages");
});
