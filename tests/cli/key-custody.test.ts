/**
 * Key custody from a script's point of view (no terminal: stdin is a pipe or /dev/null): nothing
 * destroys a key without `--yes`; the encrypted key backup round trip (passphrase and recovery code)
 * onto a new device that then reads what was sent before; the key given as a whole wsync-keys.txt
 * or broken over lines; a registration left unconfirmed. Each backup open costs one Argon2id
 * derivation (~0.5 s), so the tests open as few as they can.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileStore } from "../../cli/file-store.ts";
import { WsyncClient } from "../../core/client/index.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { Cli, cleanupTempDirs, PASSWORD, registerCli, tempDir, uniqueHandle } from "./cli-harness.ts";

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

const PASSPHRASE = "staple orbit lantern meadow";
const mode = (path: string) => statSync(path).mode & 0o777;

/** The same account on a new device (its own config directory), signed in without a terminal. */
async function newDevice(handle: string) {
  const cli = new Cli(t.url);
  const r = await cli.run(["login", "--identifier", handle, "--password-stdin"], { stdin: `${PASSWORD}\n` });
  return { cli, login: r };
}

describe("nothing destroys a key without --yes", () => {
  test("keys new without a terminal refuses, names --yes and keeps the key; --yes --export replaces it", async () => {
    const u = await registerCli(t.url, "nina");
    const key = (await u.cli.ok(["keys", "export"])).trim();
    const before = JSON.parse(await u.cli.ok(["whoami", "--json"]));

    const refused = await u.cli.run(["keys", "new"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("wsync keys new --yes");
    expect(refused.stderr).toContain("every channel you are in is told your key changed");
    expect(refused.stderr).toContain("history from before is gone");
    expect(refused.stdout).toBe("");
    expect((await u.cli.ok(["keys", "export"])).trim()).toBe(key);
    expect(JSON.parse(await u.cli.ok(["whoami", "--json"])).publicKey).toBe(before.publicKey);

    // A backup holds the old key: replacing the key deletes it, and says so first.
    const pass = join(tempDir(), "passphrase");
    writeFileSync(pass, PASSPHRASE, { mode: 0o600 });
    await u.cli.ok(["keys", "backup", "--passphrase-file", pass]);
    const saved = join(tempDir(), "old-keys.txt");
    const replaced = await u.cli.run(["keys", "new", "--yes", "--export", saved]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toBe("New keys saved\n");
    expect(replaced.stderr).toContain("your key backup on the server holds the old key and is deleted");
    expect(replaced.stderr).toContain("was deleted: make a new one with `wsync keys backup`");
    expect(JSON.parse(await u.cli.ok(["keys", "backup", "--status", "--json"])).exists).toBe(false);
    // The old key was written first, in the wsync-keys.txt format, owner-only.
    expect(mode(saved)).toBe(0o600);
    expect(readFileSync(saved, "utf8")).toBe(`Public Key:\n${before.publicKey}\n\nPrivate Key:\n${key}\n`);
    const after = JSON.parse(await u.cli.ok(["whoami", "--json"]));
    expect(after.publicKey).not.toBe(before.publicKey);
    expect((await u.cli.ok(["keys", "export"])).trim()).not.toBe(key);
  });

  test("logout without a terminal refuses and keeps the session; it says when the key exists nowhere else", async () => {
    const u = await registerCli(t.url, "otto");
    const refused = await u.cli.run(["logout"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("wsync logout --yes");
    expect(refused.stderr).toContain("your private key (fingerprint");
    expect(refused.stderr).toContain("There is no key backup of this account on the server");
    expect(refused.stderr).toContain("never exported from this device");
    expect(JSON.parse(await u.cli.ok(["whoami", "--json"])).did).toBe(u.did);

    // Once exported, the warning says where the copy is instead.
    const png = join(tempDir(), "otto.png");
    await u.cli.ok(["keys", "export", "--qr", png]);
    expect(mode(png)).toBe(0o600);
    const again = await u.cli.run(["logout"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("You exported this key from this device");
    expect(again.stderr).not.toContain("never exported");

    const out = await u.cli.run(["logout", "--yes"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("Signed out\n");
    expect(readFileSync(u.cli.storeFile, "utf8")).not.toContain("privateKey");
    // The picture restores the key.
    const { cli } = await newDevice(u.handle);
    expect(await cli.ok(["keys", "import", "--qr", png])).toBe("Private key restored\n");
  });
});

// Each test runs several CLI processes that each derive an Argon2id key: seconds of CPU on a loaded
// machine, past bun's 5 s default per test (nothing here asserts a speed).
describe("the encrypted key backup", () => {
  test("backup (passphrase on stdin); a new device: wrong passphrase exit 3, the right one restores and reads what was sent before", async () => {
    const u = await registerCli(t.url, "petra");
    const id = (await u.cli.ok(["create", "archive", "--type", "invite"])).trim();
    await u.cli.ok(["send", id, "sent before the move"]);

    expect(await u.cli.ok(["keys", "backup", "--status"])).toBe(
      "There is no key backup of this account on the server.\n",
    );
    const weak = await u.cli.run(["keys", "backup"], { stdin: "too short\n" });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain("at least 12 characters");
    expect(await u.cli.ok(["keys", "backup"], { stdin: `${PASSPHRASE}\n` })).toBe("Key backup stored\n");
    const status = JSON.parse(await u.cli.ok(["keys", "backup", "--status", "--json"]));
    expect(Object.keys(status).sort()).toEqual(["exists", "kind", "updatedAt"]);
    expect(status).toMatchObject({ exists: true, kind: "passphrase" });
    expect(Date.parse(status.updatedAt)).toBeGreaterThan(Date.now() - 60_000);

    const { cli, login } = await newDevice(u.handle);
    expect(login.code).toBe(0);
    expect(login.stderr).toContain("wsync keys restore");
    expect(login.stderr).toContain("wsync keys new --yes");
    expect((await cli.run(["read", id])).code).toBe(3);

    const wrong = await cli.run(["keys", "restore"], { stdin: "not the passphrase at all\n" });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain("Wrong passphrase or recovery code");
    expect((await cli.run(["read", id])).code).toBe(3);

    const file = join(tempDir(), "passphrase");
    writeFileSync(file, `${PASSPHRASE}\n`, { mode: 0o600 });
    expect(await cli.ok(["keys", "restore", "--passphrase-file", file])).toBe(
      "Private key restored from the key backup\n",
    );
    const items = JSON.parse(await cli.ok(["read", id, "--json"])) as { text: string; verified: boolean }[];
    expect(items.find((i) => i.text === "sent before the move")?.verified).toBe(true);

    // With a backup, logout says the key can come back.
    const logout = await cli.run(["logout"]);
    expect(logout.code).toBe(2);
    expect(logout.stderr).toContain(
      "The server holds a key backup of this account (sealed under a passphrase",
    );
    expect(logout.stderr).not.toContain("never exported");
  }, 60_000);

  test("--recovery-code prints the code once and restores a new device; --delete needs --yes without a terminal", async () => {
    const u = await registerCli(t.url, "quinn");
    const made = await u.cli.run(["keys", "backup", "--recovery-code"]);
    expect(made.code).toBe(0);
    const code = made.stdout.trim();
    expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){5}$/);
    expect(made.stderr).toContain("shown only this once");
    expect(await u.cli.ok(["keys", "backup", "--status"])).toContain("sealed under a recovery code");

    const { cli } = await newDevice(u.handle);
    // Typed as a person might: lower case, spaces instead of dashes.
    expect(await cli.ok(["keys", "restore"], { stdin: `${code.toLowerCase().replaceAll("-", " ")}\n` })).toBe(
      "Private key restored from the key backup\n",
    );
    expect(JSON.parse(await cli.ok(["whoami", "--json"])).did).toBe(u.did);

    const refused = await u.cli.run(["keys", "backup", "--delete"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    expect(await u.cli.ok(["keys", "backup", "--delete", "--yes"])).toBe("Key backup deleted\n");
    const none = await cli.run(["keys", "restore"], { stdin: `${code}\n` });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain("No key backup for this account");
  }, 60_000);
});

describe("keys import", () => {
  test("takes a whole wsync-keys.txt (stdin or --file) and a key broken at 40 columns", async () => {
    const u = await registerCli(t.url, "rosa");
    const file = join(tempDir(), "wsync-keys.txt");
    await u.cli.ok(["keys", "export", "--file", file]);
    expect(mode(file)).toBe(0o600);
    const whole = readFileSync(file, "utf8");
    const key = (await u.cli.ok(["keys", "export"])).trim();
    expect(whole).toContain(`Private Key:\n${key}\n`);
    await u.cli.ok(["logout", "--yes"]);

    const { cli } = await newDevice(u.handle);
    expect(await cli.ok(["keys", "import", "--text"], { stdin: whole })).toBe("Private key restored\n");
    expect((await cli.ok(["keys", "export"])).trim()).toBe(key);
    await cli.ok(["logout", "--yes"]);

    await cli.ok(["login", "--identifier", u.handle, "--password-stdin"], { stdin: `${PASSWORD}\n` });
    const broken = `${key.match(/.{1,40}/g)?.join("\n")}\n`;
    expect(broken.split("\n").length).toBeGreaterThan(3);
    expect(await cli.ok(["keys", "import", "--text"], { stdin: broken })).toBe("Private key restored\n");
    await cli.ok(["logout", "--yes"]);

    await cli.ok(["login", "--identifier", u.handle, "--password-stdin"], { stdin: `${PASSWORD}\n` });
    const bad = await cli.run(["keys", "import", "--text"], {
      stdin: "this is not a key, not even base64!!\n",
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Invalid Private Key format");
    expect(await cli.ok(["keys", "import", "--file", file])).toBe("Private key restored\n");
    expect(JSON.parse(await cli.ok(["whoami", "--json"])).did).toBe(u.did);
  });
});

test("a registration that stopped before its keys were confirmed: commands exit 3; login without a terminal finishes it", async () => {
  const cli = new Cli(t.url);
  // `register` killed between making the keys and confirming them: the account has no public key.
  const client = new WsyncClient({
    baseUrl: t.url,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store: new FileStore(cli.storeFile),
  });
  const handle = uniqueHandle("sam");
  const keys = await client.register({ handle, email: `${handle}@example.com`, password: PASSWORD });

  const stuck = await cli.run(["whoami"]);
  expect(stuck.code).toBe(3);
  expect(stuck.stderr).toContain("registration is not finished");
  const login = await cli.run(["login", "--identifier", handle, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  expect(login.code).toBe(0);
  expect(login.stderr).toContain("Your private key is stored in");
  const me = JSON.parse(await cli.ok(["whoami", "--json"]));
  expect(me.publicKey).toBe(keys.publicKey);
});
