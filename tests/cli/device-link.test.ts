/**
 * Linking a device from the terminal (protocol §8 "Fresh devices", docs/device-linking.md): `wsync
 * device link` on a device signed in without the key, `wsync device add CODE` on one that holds it,
 * each a real CLI process (its own config directory) against a real server; and the question "Do the
 * digits match on the other device?" answered on a scripted terminal, in process.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "fast-png";
import { encodeQR } from "qr";
import { run } from "../../cli/program.ts";
import { type Io, io, terminalIo } from "../../cli/prompt.ts";
import {
  formatDeviceLinkCode,
  newDeviceLinkCode,
  newLinkEphemeral,
  toBase64Url,
} from "../../core/crypto/index.ts";
import { ok, startTestServer, type TestServer } from "../server/harness.ts";
import {
  Cli,
  type CliUser,
  cleanupTempDirs,
  LineReader,
  PASSWORD,
  registerCli,
  tempDir,
} from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
const savedEnv = { ...process.env };
const TEXT = /^[0-9a-z]{5}-[0-9a-z]{5}\.[A-Za-z0-9_-]{80,}$/;

beforeAll(async () => {
  t = await startTestServer();
  alice = await registerCli(t.url, "alice");
  await alice.cli.ok(["create", "den", "--type", "invite"]);
  await alice.cli.ok(["send", "#den", "written before the new device"]);
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

/** A second device of alice's: signed in with the password, without the key. */
async function newDevice(): Promise<Cli> {
  const cli = new Cli(t.url);
  const login = await cli.ok(["login", "--identifier", alice.handle, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  expect(login).toContain("Signed in as");
  return cli;
}

/** Exactly one line on stderr, `wsync: …`. */
function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("wsync: ");
  return lines[0] as string;
}

describe("device link and device add, two processes", () => {
  test("--json: the code, the same six digits on both, the key and history on the new device, which then sends", async () => {
    const cli = await newDevice();
    expect((await cli.run(["read", "#den"])).code).toBe(3);
    const proc = cli.spawn(["device", "link", "--json", "--yes"]);
    const out = new LineReader(proc.stdout);
    const first = JSON.parse(await out.waitFor((l) => l.startsWith("{"), 15_000, "the code"));
    expect(Object.keys(first).sort()).toEqual(["code", "expiresAt", "text", "type"]);
    expect(first.type).toBe("code");
    expect(first.text).toMatch(TEXT);
    expect(first.text.startsWith(`${first.code.slice(0, 5)}-${first.code.slice(5)}.`)).toBe(true);
    expect(Date.parse(first.expiresAt)).toBeGreaterThan(Date.now() + 9 * 60_000);

    const added = JSON.parse(await alice.cli.ok(["device", "add", first.text, "--yes", "--json"]));
    expect(added).toEqual({ code: first.code, confirmation: expect.stringMatching(/^\d{6}$/), sent: true });

    const confirmation = JSON.parse(await out.waitFor((l) => l.includes('"confirmation"'), 30_000));
    expect(confirmation).toEqual({ type: "confirmation", confirmation: added.confirmation });
    const linked = JSON.parse(await out.waitFor((l) => l.includes('"linked"'), 15_000));
    expect(linked).toEqual({ type: "linked", did: alice.did, handle: alice.handle });
    expect(await proc.exited).toBe(0);
    // Every stdout line was one JSON object.
    expect(out.lines.filter((l) => l.trim()).every((l) => l.startsWith("{"))).toBe(true);

    // The key is this device's now: history from before linking reads, and it sends as alice.
    const items = JSON.parse(await cli.ok(["read", "#den", "--json"])) as {
      text: string;
      verified: boolean;
    }[];
    expect(items.find((i) => i.text === "written before the new device")?.verified).toBe(true);
    await cli.ok(["send", "#den", "from the linked device"]);
    const back = JSON.parse(await alice.cli.ok(["read", "#den", "--json"])) as {
      text: string;
      verified: boolean;
    }[];
    expect(back.find((i) => i.text === "from the linked device")?.verified).toBe(true);
    // A device that holds the key has nothing to link.
    const again = await cli.run(["device", "link", "--yes"]);
    expect(again.code).toBe(2);
    expect(oneErrorLine(again.stderr)).toContain("already holds your private key");
  }, 90_000);

  test("human output: the code on stdout, a QR on stderr, the digits on both sides; --qr reads a picture of the code", async () => {
    const cli = await newDevice();
    const proc = cli.spawn(["device", "link", "--yes"]);
    const out = new LineReader(proc.stdout);
    const err = new LineReader(proc.stderr);
    const text = await out.waitFor((l) => TEXT.test(l), 15_000, "the code text");
    await err.waitFor((l) => l.startsWith("Waiting for the other device"), 15_000);
    expect(err.lines.join("\n")).toContain("wsync device add CODE");
    // The QR code in half blocks: its rows are all as wide.
    const qr = err.lines.filter((l) => /^[█▀▄ ]+$/.test(l) && l.length > 20);
    expect(qr.length).toBeGreaterThan(15);
    expect(new Set(qr.map((l) => l.length)).size).toBe(1);

    // The signed-in device reads the code from a picture of it (here: drawn as a PNG).
    const rows = encodeQR(text, "raw", { border: 4 });
    const scale = 6;
    const side = rows.length * scale;
    const data = new Uint8Array(side * side * 4);
    for (let y = 0; y < side; y++)
      for (let x = 0; x < side; x++) {
        const v = rows[Math.floor(y / scale)]?.[Math.floor(x / scale)] ? 0 : 255;
        data.set([v, v, v, 255], (y * side + x) * 4);
      }
    const png = join(tempDir(), "code.png");
    writeFileSync(png, encode({ width: side, height: side, data, channels: 4, depth: 8 }));
    const added = await alice.cli.run(["device", "add", "--qr", png, "--yes"]);
    expect(added.code).toBe(0);
    const digits = /^Confirmation: (\d{6})$/m.exec(added.stdout)?.[1];
    expect(digits).toMatch(/^\d{6}$/);
    expect(added.stdout).toContain("Sent: confirm the same digits on the new device");

    expect(await out.waitFor((l) => l.startsWith("Confirmation: "), 30_000)).toBe(`Confirmation: ${digits}`);
    await out.waitFor((l) => l.startsWith("Device linked"), 15_000);
    expect(await proc.exited).toBe(0);
    expect((await cli.run(["read", "#den"])).code).toBe(0);
  }, 90_000);

  test("refusals: no terminal without --yes (2), not a code (2), no device waiting (4), answered already (8), no session (3)", async () => {
    const cli = await newDevice();
    const link = await cli.run(["device", "link"]);
    expect(link.code).toBe(2);
    expect(oneErrorLine(link.stderr)).toContain("--yes");
    const add = await alice.cli.run(["device", "add", "abcde-fghjk.xyz"]);
    expect(add.code).toBe(2);
    expect(oneErrorLine(add.stderr)).toContain("--yes");
    const bad = await alice.cli.run(["device", "add", "not a code", "--yes"]);
    expect(bad.code).toBe(2);
    expect(oneErrorLine(bad.stderr)).toContain("not a device link code");
    // A well-formed code, with a real key, that no device opened.
    const eph = await newLinkEphemeral();
    const none = await alice.cli.run(["device", "add", `abcde-fghjk.${toBase64Url(eph.publicRaw)}`, "--yes"]);
    expect(none.code).toBe(4);
    expect(oneErrorLine(none.stderr)).toContain("No device is waiting with that code");
    // A slot another device already answered (filled, not yet fetched): exit 8, nothing sent twice.
    const token = (await ok(t.url, "login", { identifier: alice.handle, password: PASSWORD })).accessJwt;
    const mine = await newLinkEphemeral();
    const code = newDeviceLinkCode();
    await ok(t.url, "deviceLinkOpen", { code, ephemeralPublicKey: mine.publicKey }, token);
    const open = `${formatDeviceLinkCode(code)}.${toBase64Url(mine.publicRaw)}`;
    const first = JSON.parse(await alice.cli.ok(["device", "add", open, "--yes", "--json"]));
    expect(first).toMatchObject({ code, sent: true });
    const twice = await alice.cli.run(["device", "add", open, "--yes"]);
    expect(twice.code).toBe(8);
    // (The digits were shown before the server refused.)
    expect(twice.stderr.trimEnd().split("\n").at(-1)).toStartWith(
      "wsync: This device link was completed already",
    );
    const neither = await alice.cli.run(["device", "add", "--yes"]);
    expect(neither.code).toBe(2);
    const signedOut = await new Cli(t.url).run(["device", "link", "--yes"]);
    expect(signedOut.code).toBe(3);
  }, 60_000);
});

interface Session {
  code: number;
  out: string;
  err: string;
  asked: string[];
}

/**
 * `wsync ARGS` in this process on a scripted terminal; `answer` gives each question's answer. `s`
 * fills as the command runs (a caller may watch its output meanwhile).
 */
async function onTerminal(
  configHome: string,
  args: string[],
  answer: (prompt: string, s: Session) => Promise<string>,
  s: Session = { code: -1, out: "", err: "", asked: [] },
): Promise<Session> {
  const scripted: Io = {
    stdinIsTTY: () => true,
    stderrIsTTY: () => true,
    question: async (prompt) => {
      s.asked.push(prompt);
      return answer(prompt, s);
    },
    block: async () => {
      throw new Error("no block input here");
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
  try {
    s.code = await run(args);
  } finally {
    Object.assign(io, terminalIo);
  }
  return s;
}

describe("on a terminal: the question", () => {
  test("device add answered no sends nothing (exit 1); yes sends; device link answered no takes nothing", async () => {
    const cli = await newDevice();
    const proc = cli.spawn(["device", "link", "--json", "--yes"]);
    const out = new LineReader(proc.stdout);
    const { text } = JSON.parse(await out.waitFor((l) => l.startsWith("{"), 15_000, "the code"));

    const no = await onTerminal(alice.cli.configHome, ["device", "add", text], async () => "n");
    expect(no.code).toBe(1);
    expect(no.asked).toEqual(["Do the digits match on the other device? [y/N] "]);
    expect(no.out).toMatch(/^Confirmation: \d{6}\n$/);
    expect(no.err).toContain("Cancelled: the digits differ, so nothing was sent");
    // Nothing reached the new device: it is still waiting, and a second try (answered yes) links it.
    expect(out.lines.some((l) => l.includes('"confirmation"'))).toBe(false);
    const yes = await onTerminal(alice.cli.configHome, ["device", "add", text], async () => "y");
    expect(yes.code).toBe(0);
    await out.waitFor((l) => l.includes('"linked"'), 30_000);
    expect(await proc.exited).toBe(0);

    // The new device's side answered "no": the key is not taken.
    const third = await newDevice();
    const live: Session = { code: -1, out: "", err: "", asked: [] };
    const running = onTerminal(
      third.configHome,
      ["device", "link"],
      async (prompt, s) => {
        expect(prompt).toBe("Do the digits match on the other device? [y/N] ");
        expect(s.out).toMatch(/^Confirmation: \d{6}$/m);
        return "no";
      },
      live,
    );
    // The code shows on the terminal; the signed-in device sends to it.
    const deadline = Date.now() + 15_000;
    const shownCode = () => live.out.split("\n").find((l) => TEXT.test(l));
    while (!shownCode()) {
      if (Date.now() > deadline) throw new Error(`no code shown:\n${live.out}\n${live.err}`);
      await Bun.sleep(50);
    }
    const shown = shownCode() as string;
    expect(live.err).toMatch(/[█▀▄]{20,}/);
    await alice.cli.ok(["device", "add", shown, "--yes"]);
    const refused = await running;
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("nothing was taken from the other device");
    expect((await third.run(["read", "#den"])).code).toBe(3);
  }, 120_000);
});
