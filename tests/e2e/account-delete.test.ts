/**
 * Self-service account deletion in the web (issue 34): from the info panel, asked twice, the second
 * time with the password; a wrong password changes nothing; the right one deletes the account through
 * the same route as `wsync account delete`, and the browser lands signed out on the login page.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { createInDialog, openChannel, signUp } from "./chat.ts";
import { browserTest, closeBrowser, PASSWORD, shot } from "./harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await closeBrowser();
  await t?.stop();
});

browserTest(
  "a person deletes their own account from the info panel, asked twice, with the password",
  async () => {
    const alice = await signUp(t.url, "alice");
    const page = alice.page;
    const room = `del${Math.random().toString(36).slice(2, 7)}`;
    const create = await createInDialog(page, room, "public");
    await create.waitFor({ state: "detached" });
    await openChannel(page, room);
    const did = await page.evaluate(
      () => (JSON.parse(localStorage.getItem("auth") ?? "{}") as { did: string }).did,
    );
    const account = async () => t.storage.accounts.byDid(did);
    const info = page.locator('[data-testid="info-panel"]');

    // First question: Cancel keeps everything.
    await info.getByRole("button", { name: "DELETE_ACCOUNT" }).click();
    const ask = page.getByRole("dialog", { name: "Delete your account?" });
    await ask.getByText("It cannot be undone").waitFor();
    await ask.getByRole("button", { name: "Cancel" }).click();
    await ask.waitFor({ state: "detached" });
    expect((await account())?.deletedAt ?? null).toBeNull();

    // Second time through: Continue, then a wrong password is refused and nothing changes.
    await info.getByRole("button", { name: "DELETE_ACCOUNT" }).click();
    await ask.getByRole("button", { name: "Continue" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete your account for good" });
    await confirm.getByLabel("Password").fill("not the password at all");
    await confirm.getByRole("button", { name: "Delete my account" }).click();
    await confirm.getByRole("alert").getByText("That is not this account's password").waitFor();
    expect((await account())?.deletedAt ?? null).toBeNull();
    await shot(page, "account-delete-wrong-password");

    // The right password: deleted on the server, and this browser is signed out.
    await confirm.getByLabel("Password").fill(PASSWORD);
    await confirm.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/login/);
    expect((await account())?.deletedAt).toBeGreaterThan(0);
    expect(await page.evaluate(() => localStorage.getItem("auth"))).toBeNull();
    // Signing in again is refused as an unknown account.
    const login = await fetch(`${t.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: alice.handle, password: PASSWORD }),
    });
    expect(login.status).toBe(401);
    expect(alice.errors).toEqual([]);
    await alice.context.close();
  },
);
