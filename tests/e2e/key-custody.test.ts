/**
 * Real Chromium, key custody (issue 11, docs/decisions/key-custody.md): secrets that earlier versions
 * kept in localStorage move to the vault on first load; nothing a script can read holds a private key
 * or a token; stored keys refuse to export.
 */
import { expect } from "bun:test";
import { toBase64Url } from "../../core/crypto/index.ts";
import { Cli } from "../cli/cli-harness.ts";
import { ok } from "../server/harness.ts";
import { createChannel, person, seal } from "../server/people.ts";
import { createInDialog, expectMessage, openChannel, send, signUp as signUpAt, WAIT } from "./chat.ts";
import {
  browserTest,
  e2eServer,
  leaksSecrets,
  newProfile,
  PASSWORD,
  pageSecrets,
  registerInBrowser,
  saveKeysAndEnter,
  uniqueHandle,
} from "./harness.ts";

const t = e2eServer();

browserTest(
  "an earlier version's localStorage (private key, epoch keys, bearer session) moves to the vault and the cookie, then is deleted; the channel still reads",
  async () => {
    const alice = await person(t.url, "legacy");
    const room = `old${Math.random().toString(36).slice(2, 7)}`;
    const created = await createChannel(t.url, alice, "public", room);
    const epoch = { epochId: created.epochId, epochNumber: 1, epochKey: created.epochKey };
    await ok(
      t.url,
      "send",
      await seal(alice, created.channel, epoch, "written before the upgrade"),
      alice.token,
    );

    // What a v1-era browser held: every secret in localStorage.
    const legacy: Record<string, string> = {
      auth: JSON.stringify(alice.session),
      token: alice.session.accessJwt,
      privateKey: alice.privateKey,
      publicKey: alice.publicKey,
      [`wsync-epochs:${created.channel.id}`]: JSON.stringify([
        {
          epochId: created.epochId,
          epochNumber: 1,
          symmetricKeyJwk: { kty: "oct", k: toBase64Url(created.epochKey), alg: "A256GCM" },
          createdAt: Date.now(),
        },
      ]),
    };
    const { page, context, errors } = await newProfile();
    page.setDefaultTimeout(WAIT);
    // Any page of the origin will do to write its storage; then the board loads with it.
    await page.goto(`${t.url}/login`);
    await page.evaluate((e: Record<string, string>) => {
      for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
    }, legacy);
    await page.goto(`${t.url}/sync`);
    await page.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await openChannel(page, room);
    await expectMessage(page, alice.name, "written before the upgrade");

    const secrets = await pageSecrets(page);
    expect(leaksSecrets(secrets, alice.privateKey)).toEqual([]);
    expect(secrets.local.privateKey).toBeUndefined();
    expect(secrets.local.token).toBeUndefined();
    expect(Object.keys(secrets.local).filter((k) => k.startsWith("wsync-epochs:"))).toEqual([]);
    expect(JSON.parse(secrets.local.auth ?? "{}")).toEqual({
      did: alice.session.did,
      handle: alice.session.handle,
      email: alice.session.email,
      publicKey: alice.publicKey,
      session: "cookie",
    });
    expect(secrets.vault.publicKey).toBe(alice.publicKey);
    expect(secrets.vault.identityExport).toBe("refused: InvalidAccessError / refused: InvalidAccessError");
    expect(secrets.vault.epochKeys).toBeGreaterThanOrEqual(1);
    expect(new Set(secrets.vault.epochExports)).toEqual(new Set(["refused: InvalidAccessError"]));
    // A second tab of the same profile shares the cookie: both stay signed in (one refresh at a time).
    const second = await context.newPage();
    await second.goto(`${t.url}/sync`);
    await second.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await page.reload();
    await page.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await openChannel(page, room);
    await expectMessage(page, alice.name, "written before the upgrade");
    expect(errors).toEqual([]);
    await context.close();
    // The old bearer refresh token was spent on the exchange: presenting it again is a replay, which
    // ends the session (reuse detection), so this comes last,
    // with the browser already closed (its pages leave for "/" when their session ends).
    const replay = await fetch(`${t.url}/api/auth/refresh`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.session.refreshJwt}` },
    });
    expect(replay.status).toBe(401);
  },
  120_000,
);

const BACKUP_PASSPHRASE = "lantern orbit meadow staple 42";

/** Signs in on a fresh profile up to the Private Key Validation modal. */
async function signInWithoutKey(handle: string) {
  const p = await newProfile();
  p.page.setDefaultTimeout(WAIT);
  await p.page.goto(`${t.url}/login`);
  await p.page.fill('input[name="identifier"]', handle);
  await p.page.fill('input[name="password"]', PASSWORD);
  await p.page.click('button[type="submit"]');
  await p.page.getByText("Private Key Validation").waitFor({ timeout: WAIT });
  return p;
}

browserTest(
  "register with a backup; a cleared profile restores with the passphrase and reads what came before; a second profile and the CLI send as the same user at once",
  async () => {
    const handle = uniqueHandle("bea");
    const first = await newProfile();
    first.page.setDefaultTimeout(WAIT);
    const keys = await registerInBrowser(first.page, t.url, handle);
    // Opt in to the backup in the keys modal, with a recovery passphrase typed twice.
    await first.page.locator('input[name="backupOptIn"]').check();
    await first.page.locator('input[name="backupPassphrase"]').fill(BACKUP_PASSPHRASE);
    await first.page.locator('input[name="backupPassphraseRepeat"]').fill(BACKUP_PASSPHRASE);
    await saveKeysAndEnter(first.page);
    const token = (await ok(t.url, "login", { identifier: handle, password: PASSWORD })).accessJwt;
    const stored = await ok(t.url, "keyBackupGet", undefined, token);
    // The server holds only the sealed blob: no key, no passphrase.
    const blob = JSON.stringify(stored.backup);
    expect(blob).not.toContain(keys.privateKey);
    expect(blob).not.toContain(BACKUP_PASSPHRASE);
    expect(stored.backup).toMatchObject({ v: 1, kind: "passphrase", publicKey: keys.publicKey });

    const room = `bk${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(first.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    await openChannel(first.page, room);
    await send(first.page, "written on the first device");
    expect(first.errors).toEqual([]);
    await first.context.close();

    // A cleared profile: the backup comes first among the ways back.
    const second = await signInWithoutKey(handle);
    await second.page.getByRole("tab", { name: "Backup passphrase" }).click();
    const secret = second.page.locator('input[name="backupSecret"]');
    await secret.fill("not the passphrase at all");
    await second.page.getByRole("button", { name: "Restore from backup" }).click();
    await second.page.getByText("Wrong passphrase or recovery code (or the backup was altered)").waitFor();
    await secret.fill(BACKUP_PASSPHRASE);
    await second.page.getByRole("button", { name: "Restore from backup" }).click();
    await second.page.waitForURL("**/sync", { timeout: WAIT });
    await second.page.locator('[data-testid="board"]').waitFor();
    await openChannel(second.page, room);
    await expectMessage(second.page, handle, "written on the first device");
    const secrets = await pageSecrets(second.page);
    expect(secrets.vault.publicKey).toBe(keys.publicKey);
    expect(secrets.vault.identityExport).toBe("refused: InvalidAccessError / refused: InvalidAccessError");
    expect(leaksSecrets(secrets, keys.privateKey)).toEqual([]);

    // The CLI as the same user, restored from the same backup, sending while the browser does.
    const cli = new Cli(t.url);
    await cli.ok(["login", "--identifier", handle, "--password-stdin"], { stdin: `${PASSWORD}\n` });
    await cli.ok(["keys", "restore"], { stdin: `${BACKUP_PASSPHRASE}\n` });
    const channelId = (await ok(t.url, "getChannels", {}, token)).channels.find((c) => c.value.name === room)
      ?.id as string;
    await Promise.all([
      cli.ok(["send", channelId, "from the terminal"]),
      send(second.page, "from the second browser"),
    ]);
    await expectMessage(second.page, handle, "from the terminal");
    const read = JSON.parse(await cli.ok(["read", channelId, "--json"])) as {
      text: string;
      verified: boolean;
    }[];
    for (const text of ["written on the first device", "from the second browser", "from the terminal"]) {
      expect({ text, verified: read.find((i) => i.text === text)?.verified }).toEqual({
        text,
        verified: true,
      });
    }
    expect(second.errors).toEqual([]);
    await second.context.close();
  },
  180_000,
);

browserTest(
  "'I lost my key': said plainly first, then new keys; the server tells the channel the key changed and the new key is the account's",
  async () => {
    const alice = await signUpAt(t.url, "lia");
    const bob = await person(t.url, "ben");
    const room = `lk${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    await openChannel(alice.page, room);
    const channel = (await ok(t.url, "getChannels", {}, bob.token)).channels.find(
      (c) => c.value.name === room,
    );
    await ok(t.url, "joinChannel", { channelUri: channel?.uri as string }, bob.token);
    await send(alice.page, "before the key was lost");
    // The newest epoch is the one her old key signed (her client rotated for bob).
    const before = (await ok(t.url, "getEpochInfo", { channelUri: channel?.uri as string }, bob.token))
      .epochInfo;
    expect(
      before.commit?.members.some(
        (m) =>
          m.did === before.commit?.creatorDid &&
          String((m as { handle?: string }).handle).startsWith(`${alice.handle}.`),
      ),
    ).toBe(true);
    await alice.context.close();

    const fresh = await signInWithoutKey(alice.handle);
    await fresh.page.getByRole("button", { name: "I lost my key: make new keys" }).click();
    // What it costs is said before anything happens.
    await fresh.page.getByText("Your history from before is gone", { exact: false }).waitFor();
    await fresh.page
      .getByText("Every channel you are in will be told that your key changed", { exact: false })
      .waitFor();
    await fresh.page.getByRole("button", { name: "Make new keys" }).click();
    await fresh.page.getByText("Your New Encryption Keys").waitFor();
    const newPublic = await fresh.page.inputValue('[data-testid="public-key"]');
    expect(newPublic).not.toBe(alice.keys.publicKey);
    await saveKeysAndEnter(fresh.page);
    // The server announced the change to the channel (the other member's view of it).
    const aliceDid = (await ok(t.url, "login", { identifier: alice.handle, password: PASSWORD })).did;
    const records = (
      await ok(t.url, "getMessages", { channelUri: channel?.uri as string, limit: 50 }, bob.token)
    ).records;
    expect(
      records.some(
        (r) => "action" in r.value && r.value.action === "key-changed" && r.value.subject.did === aliceDid,
      ),
    ).toBe(true);
    const keysNow = await ok(t.url, "getKeys", { dids: [aliceDid] }, bob.token);
    expect(keysNow.keys[0]?.publicKey).toBe(newPublic);
    // Her board opens with the new keys, and she talks again in the channel whose newest epoch her
    // old key signed: the fresh device checks that commit under the replaced key (the signed member
    // list names it) and makes a key-change epoch, with no warning.
    await fresh.page.locator('[data-testid="board"]').waitFor();
    await openChannel(fresh.page, room);
    await send(fresh.page, "after the new keys");
    expect(await fresh.page.getByText("does not verify", { exact: false }).count()).toBe(0);
    const epoch = await ok(t.url, "getEpochInfo", { channelUri: channel?.uri as string }, bob.token);
    expect(epoch.epochInfo.epochNumber).toBe(before.epochNumber + 1);
    expect(epoch.epochInfo.commit?.members.find((m) => m.did === aliceDid)?.fp).toBe(
      (await ok(t.url, "getKeys", { dids: [aliceDid] }, bob.token)).keys[0]?.fingerprint as string,
    );
    expect(fresh.errors).toEqual([]);
    await fresh.context.close();
  },
  180_000,
);
