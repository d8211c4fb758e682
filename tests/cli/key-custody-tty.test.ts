/**
 * The key custody flows a person meets on a terminal, run in-process with a scripted terminal (the
 * CLI's `io`: answers to its questions, TTY flags, captured output) against a real server: register
 * offering a backup, login on a device without the key (restore from the backup, paste the key or a
 * file path, "I lost my key"), an unconfirmed registration shown again, and logout asking first.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { FileStore } from "../../cli/file-store.ts";
import { run } from "../../cli/program.ts";
import { type Io, io, terminalIo } from "../../cli/prompt.ts";
import { WsyncClient } from "../../core/client/index.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { Cli, cleanupTempDirs, PASSWORD, tempDir, uniqueHandle } from "./cli-harness.ts";

let t: TestServer;
const savedEnv = { ...process.env };

beforeAll(async () => {
  t = await startTestServer();
});
afterEach(() => {
  Object.assign(io, terminalIo);
  for (const k of ["XDG_CONFIG_HOME", "WSYNC_SERVER", "WSYNC_PASSWORD"]) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

const PASSPHRASE = "staple orbit lantern meadow";
const mode = (path: string) => statSync(path).mode & 0o777;

interface Session {
  code: number;
  out: string;
  err: string;
  /** Questions asked, in order. */
  asked: string[];
  /** Answers the command did not ask for. */
  unused: string[];
}

/**
 * Runs `wsync ARGS` in this process as if on a terminal, answering its questions in order. The
 * password comes from WSYNC_PASSWORD. A pasted block is one answer, fed to the command line by line.
 */
async function onTerminal(configHome: string, args: string[], answers: string[]): Promise<Session> {
  const queue = [...answers];
  const s: Session = { code: -1, out: "", err: "", asked: [], unused: queue };
  const next = (prompt: string) => {
    s.asked.push(prompt);
    s.err += prompt;
    const a = queue.shift();
    if (a === undefined) throw new Error(`unexpected question: ${prompt}`);
    return a;
  };
  const scripted: Io = {
    stdinIsTTY: () => true,
    stderrIsTTY: () => true,
    question: async (prompt) => next(prompt),
    block: async (prompt, done) => {
      const lines = next(prompt).split("\n");
      const got: string[] = [];
      for (const line of lines) {
        got.push(line);
        if (await done(got.join("\n"), line)) break;
      }
      return got.join("\n");
    },
    readStdin: async () => {
      throw new Error("standard input is the terminal");
    },
    out: (text) => {
      s.out += text;
    },
    err: (text) => {
      s.err += text;
    },
  };
  Object.assign(io, scripted);
  process.env.XDG_CONFIG_HOME = configHome;
  process.env.WSYNC_SERVER = t.url;
  process.env.WSYNC_PASSWORD = PASSWORD;
  try {
    s.code = await run(args);
  } finally {
    Object.assign(io, terminalIo);
  }
  return s;
}

const expectOk = (s: Session) => {
  if (s.code !== 0) throw new Error(`exit ${s.code}\nout: ${s.out}\nerr: ${s.err}`);
  expect(s.unused).toEqual([]);
};

let handle = "";
let firstHome = "";

test("register on a terminal shows the keys and offers a backup (not the login password; asked twice)", async () => {
  firstHome = tempDir("wsync-cfg-");
  const h = uniqueHandle("tess");
  const s = await onTerminal(
    firstHome,
    ["register", "--handle", h, "--email", `${h}@example.com`],
    // Show the key, refuse the login password as passphrase, then a passphrase twice.
    ["3", "1", PASSWORD, "1", PASSPHRASE, PASSPHRASE],
  );
  expectOk(s);
  handle = /^Registered (\S+) /.exec(s.out)?.[1] as string;
  expect(handle).toEndWith(".test");
  expect(s.err).toContain("fingerprint");
  expect(s.err).toContain("Private Key:\n");
  expect(s.err).toContain("must not be your login password");
  expect(s.asked.filter((q) => q.startsWith("Passphrase"))).toEqual([
    "Passphrase: ",
    "Passphrase: ",
    "Passphrase again: ",
  ]);
  expect(s.err).toContain("Key backup stored on the server (sealed under a passphrase)");
  const status = JSON.parse(
    await new Cli(t.url, { configHome: firstHome }).ok(["keys", "backup", "--status", "--json"]),
  );
  expect(status).toMatchObject({ exists: true, kind: "passphrase" });
});

test("login without the key, option 1: a wrong passphrase is said and asked again; the right one restores", async () => {
  const home = tempDir("wsync-cfg-");
  const s = await onTerminal(
    home,
    ["login", "--identifier", handle],
    ["1", "not the passphrase!", PASSPHRASE],
  );
  expectOk(s);
  expect(s.out).toBe(`Signed in as ${handle}\nPrivate key restored from the key backup\n`);
  expect(s.err).toContain("1) Restore it from your key backup (sealed under a passphrase, stored");
  expect(s.err).toContain("3) I lost my key: make new keys");
  expect(s.err).toContain("Wrong passphrase or recovery code");
  const mine = JSON.parse(await new Cli(t.url, { configHome: firstHome }).ok(["whoami", "--json"]));
  const here = JSON.parse(await new Cli(t.url, { configHome: home }).ok(["whoami", "--json"]));
  expect(here.publicKey).toBe(mine.publicKey);
});

test("login without the key, option 2: a bad paste is said; a whole pasted wsync-keys.txt or a PNG path restores", async () => {
  const first = new Cli(t.url, { configHome: firstHome });
  const keysTxt = join(tempDir(), "wsync-keys.txt");
  const png = join(tempDir(), "key.png");
  await first.ok(["keys", "export", "--file", keysTxt]);
  await first.ok(["keys", "export", "--qr", png]);

  const home = tempDir("wsync-cfg-");
  const s = await onTerminal(
    home,
    ["login", "--identifier", handle],
    ["2", "this is not a key!!\n", "2", readFileSync(keysTxt, "utf8")],
  );
  expectOk(s);
  expect(s.err).toContain("Invalid Private Key format");
  expect(s.out).toBe(`Signed in as ${handle}\nPrivate key restored\n`);

  const other = tempDir("wsync-cfg-");
  const p = await onTerminal(other, ["login", "--identifier", handle], ["2", png]);
  expectOk(p);
  expect(p.out).toContain("Private key restored\n");
});

test("logout on a terminal offers an export and asks; 'no' changes nothing, 'yes' removes the key", async () => {
  const home = tempDir("wsync-cfg-");
  const cli = new Cli(t.url, { configHome: home });
  await cli.ok(["login", "--identifier", handle, "--password-stdin"], { stdin: `${PASSWORD}\n` });
  await cli.ok(["keys", "restore"], { stdin: `${PASSPHRASE}\n` });

  const png = join(tempDir(), "before-logout.png");
  const no = await onTerminal(home, ["logout"], [png, "n"]);
  expect(no.code).toBe(1);
  expect(no.unused).toEqual([]);
  expect(no.err).toContain("Signing out removes from this device");
  expect(no.err).toContain("Cancelled: nothing was changed");
  expect(mode(png)).toBe(0o600);
  expect(JSON.parse(await cli.ok(["whoami", "--json"])).handle).toBe(handle);

  const yes = await onTerminal(home, ["logout"], ["", "y"]);
  expectOk(yes);
  expect(yes.out).toBe("Signed out\n");
  expect(readFileSync(cli.storeFile, "utf8")).not.toContain("privateKey");
});

test("login without the key, option 3: says history is gone and channels are told, asks, then offers a backup", async () => {
  const owner = new Cli(t.url);
  const h = uniqueHandle("uma");
  await owner.ok(["register", "--handle", h, "--email", `${h}@example.com`, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  const before = JSON.parse(await owner.ok(["whoami", "--json"]));

  const home = tempDir("wsync-cfg-");
  // "3" then no: back to the menu; "4": not now. Then again: "3", yes, and no backup for now.
  const declined = await onTerminal(home, ["login", "--identifier", h], ["3", "n", "4"]);
  expectOk(declined);
  expect(declined.err).toContain("history from before is gone");
  expect(declined.err).toContain("every channel you are in is told your key changed");
  expect(declined.err).toContain("wsync keys restore");
  expect(JSON.parse(await owner.ok(["whoami", "--json"])).publicKey).toBe(before.publicKey);

  const made = await onTerminal(home, ["login", "--identifier", h], ["3", "y", "4"]);
  expectOk(made);
  expect(made.out).toContain("New keys saved\n");
  expect(made.err).toContain("Your private key exists only on this device");
  const after = JSON.parse(await new Cli(t.url, { configHome: home }).ok(["whoami", "--json"]));
  expect(after.publicKey).not.toBe(before.publicKey);
});

test("an unconfirmed registration at login on a terminal: the keys are shown again; a recovery-code backup confirms them", async () => {
  const home = tempDir("wsync-cfg-");
  const cli = new Cli(t.url, { configHome: home });
  const client = new WsyncClient({
    baseUrl: t.url,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as never,
    store: new FileStore(cli.storeFile),
  });
  const h = uniqueHandle("vera");
  const keys = await client.register({ handle: h, email: `${h}@example.com`, password: PASSWORD });

  const s = await onTerminal(home, ["login", "--identifier", h], ["2", ""]);
  expectOk(s);
  expect(s.err).toContain("Your registration was not finished");
  expect(s.err).toContain(keys.publicKey);
  const code = s.out.split("\n")[1] as string;
  expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){5}$/);
  expect(s.asked.at(-1)).toContain("written it down");
  expect(s.err).toContain("Registration finished");
  expect(JSON.parse(await cli.ok(["whoami", "--json"])).publicKey).toBe(keys.publicKey);
  expect(JSON.parse(await cli.ok(["keys", "backup", "--status", "--json"]))).toMatchObject({
    exists: true,
    kind: "recovery-code",
  });
});

test("keys backup on a terminal: two different passphrases are refused (exit 2) and nothing is stored", async () => {
  const home = tempDir("wsync-cfg-");
  const h = uniqueHandle("wil");
  const cli = new Cli(t.url, { configHome: home });
  await cli.ok(["register", "--handle", h, "--email", `${h}@example.com`, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  const s = await onTerminal(home, ["keys", "backup"], [PASSPHRASE, `${PASSPHRASE}!`]);
  expect(s.code).toBe(2);
  expect(s.err).toContain("The passphrases do not match");
  expect(JSON.parse(await cli.ok(["keys", "backup", "--status", "--json"])).exists).toBe(false);
});
