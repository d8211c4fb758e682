/**
 * `wsync keys backup` and the register menu refuse a recovery passphrase that is too easy to guess
 * offline, with the reason and the offline cost per guess (core/client/account/passphrase-strength.ts): on a
 * terminal at the prompt (before it is asked again), and from a script (stdin, --passphrase-file)
 * through the engine's own check. Nothing is stored for a refused passphrase.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "../../cli/program.ts";
import { type Io, io, terminalIo } from "../../cli/prompt.ts";
import { PassphraseStrengthText } from "../../core/client/account/passphrase-policy.ts";
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

const STRONG = "quiet violin harbor pepper glide";
const WEAK = "password123456";
const REFUSED = "The recovery passphrase is too easy to guess: one GPU would find it offline in";

interface Session {
  code: number;
  out: string;
  err: string;
  asked: string[];
  unused: string[];
}

/** `wsync ARGS` in this process as if on a terminal, answering its questions in order. */
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
    block: async (prompt) => next(prompt),
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

async function registered(name: string) {
  const home = tempDir("wsync-cfg-");
  const handle = uniqueHandle(name);
  const cli = new Cli(t.url, { configHome: home });
  await cli.ok(["register", "--handle", handle, "--email", `${handle}@example.com`, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  return { home, handle, cli };
}

const stored = async (cli: Cli) => JSON.parse(await cli.ok(["keys", "backup", "--status", "--json"])).exists;

test("on a terminal: the prompt states the offline cost, refuses a weak passphrase at once (exit 2) with the reason", async () => {
  const u = await registered("vera");
  const s = await onTerminal(u.home, ["keys", "backup"], [WEAK]);
  expect(s.code).toBe(2);
  expect(s.unused).toEqual([]);
  // Refused before it is asked a second time.
  expect(s.asked).toEqual(["Passphrase: "]);
  expect(s.err).toContain(PassphraseStrengthText.offlineCost);
  expect(s.err).toContain(REFUSED);
  expect(s.err).toContain(PassphraseStrengthText.rule);
  expect(s.err).toContain("This is similar to a commonly used password.");
  expect(await stored(u.cli)).toBe(false);
});

test("on a terminal: one built on the account's own handle is refused too", async () => {
  const u = await registered("ottilie");
  const s = await onTerminal(u.home, ["keys", "backup"], [`${u.handle}!!`]);
  expect(s.code).toBe(2);
  expect(s.err).toContain(REFUSED);
  expect(await stored(u.cli)).toBe(false);
});

test("on a terminal: a strong passphrase is said to be strong, asked again and stored", async () => {
  const u = await registered("wanda");
  const s = await onTerminal(u.home, ["keys", "backup"], [STRONG, STRONG]);
  if (s.code !== 0) throw new Error(`exit ${s.code}\n${s.err}`);
  expect(s.asked).toEqual(["Passphrase: ", "Passphrase again: "]);
  expect(s.err).toMatch(/Strong enough: one GPU would need .+ to guess it offline\.\n/);
  expect(s.out).toBe("Key backup stored\n");
  expect(await stored(u.cli)).toBe(true);
});

test("register's menu: a weak passphrase is explained and the menu comes back; a recovery code is taken", async () => {
  const home = tempDir("wsync-cfg-");
  const h = uniqueHandle("xenia");
  const s = await onTerminal(
    home,
    ["register", "--handle", h, "--email", `${h}@example.com`],
    ["1", "Summer2024Summer", "2", ""],
  );
  if (s.code !== 0) throw new Error(`exit ${s.code}\n${s.err}`);
  expect(s.unused).toEqual([]);
  expect(s.err).toContain(REFUSED);
  expect(s.err).toContain("Key backup stored on the server (sealed under a recovery code)");
  const status = JSON.parse(
    await new Cli(t.url, { configHome: home }).ok(["keys", "backup", "--status", "--json"]),
  );
  expect(status).toMatchObject({ exists: true, kind: "recovery-code" });
});

test("from a script: stdin and --passphrase-file are checked by the engine (exit 2, the reason, nothing stored)", async () => {
  const u = await registered("yara");
  const piped = await u.cli.run(["keys", "backup"], { stdin: `${WEAK}\n` });
  expect(piped.code).toBe(2);
  expect(piped.stderr).toContain(REFUSED);
  expect(piped.stdout).toBe("");
  const file = join(tempDir(), "passphrase");
  writeFileSync(file, "correct horse battery staple\n", { mode: 0o600 });
  const fromFile = await u.cli.run(["keys", "backup", "--passphrase-file", file]);
  expect(fromFile.code).toBe(2);
  expect(fromFile.stderr).toContain(REFUSED);
  expect(await stored(u.cli)).toBe(false);
  // A strong one goes through the same path.
  writeFileSync(file, `${STRONG}\n`, { mode: 0o600 });
  expect(await u.cli.ok(["keys", "backup", "--passphrase-file", file])).toBe("Key backup stored\n");
  expect(await stored(u.cli)).toBe(true);
});
