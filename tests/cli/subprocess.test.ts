/**
 * The CLI as a user runs it: `bun cli/main.ts ...` subprocesses against a real server, each device
 * with its own config directory. The tests share one server and run in order (later ones use the
 * accounts and channel the earlier ones made).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { startTestServer, type TestServer } from "../server/harness.ts";
import {
  Cli,
  type CliUser,
  cleanupTempDirs,
  closedPort,
  LineReader,
  PASSWORD,
  registerCli,
  uniqueHandle,
} from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
let channelId: string;
let link: string;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

const WHOAMI_KEYS = ["did", "email", "fingerprint", "handle", "publicKey", "server"];
const CHANNEL_KEYS = [
  "description",
  "id",
  "isMember",
  "lastActivity",
  "memberCount",
  "messageCount",
  "name",
  "role",
  "type",
  "uri",
];
const MEMBER_KEYS = ["did", "fingerprint", "handle", "isOwner", "online", "publicKey"];
const ITEM_KEYS = [
  "action",
  "author",
  "clientMsgId",
  "createdAt",
  "deleted",
  "epoch",
  "error",
  "file",
  "kind",
  "missing",
  "notes",
  "rich",
  "seq",
  "signedAt",
  "state",
  "text",
  "uri",
  "verified",
  "withheld",
];

const keysOf = (o: object) => Object.keys(o).sort();
const mode = (path: string) => statSync(path).mode & 0o777;

interface ItemJson {
  uri: string;
  seq: number;
  kind: string;
  author: { did: string; handle: string };
  text: string | null;
  verified: boolean;
  state: string;
  error: string | null;
}

describe("accounts", () => {
  test("register reads the password from standard input; the store is 0600 in a 0700 directory", async () => {
    alice = await registerCli(t.url, "alice");
    expect(alice.handle).toEndWith(".test");
    expect(mode(alice.cli.configDir)).toBe(0o700);
    expect(mode(alice.cli.storeFile)).toBe(0o600);
    const store = readFileSync(alice.cli.storeFile, "utf8");
    expect(store).toContain("privateKey");
    // The password is never written anywhere.
    expect(store).not.toContain(PASSWORD);
  });

  test("register takes WSYNC_PASSWORD; without a terminal or a password it exits 2 and says why", async () => {
    const cli = new Cli(t.url);
    const handle = uniqueHandle("bob");
    const out = await cli.ok(["register", "--handle", handle, "--email", `${handle}@example.com`], {
      env: { WSYNC_PASSWORD: PASSWORD },
    });
    const m = /^Registered (\S+) \((did:[^)]+)\)$/m.exec(out);
    expect(m).not.toBeNull();
    bob = {
      cli,
      handle: m?.[1] as string,
      did: m?.[2] as string,
      email: `${handle}@example.com`,
      password: PASSWORD,
    };

    const nobody = new Cli(t.url);
    const h2 = uniqueHandle("carol");
    const noPw = await nobody.run(["register", "--handle", h2, "--email", `${h2}@example.com`]);
    expect(noPw.code).toBe(2);
    expect(noPw.stderr).toContain("Password is required (no terminal to ask on)");
    const noHandle = await nobody.run(["register"], { env: { WSYNC_PASSWORD: PASSWORD } });
    expect(noHandle.code).toBe(2);
    expect(noHandle.stderr).toContain("Handle is required");
    const empty = await nobody.run(
      ["register", "--handle", h2, "--email", `${h2}@x.com`, "--password-stdin"],
      {
        stdin: "",
      },
    );
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("standard input was empty");
    // There is no flag for the password: it would show in `ps` and shell history.
    const flag = await nobody.run(["register", "--handle", h2, "--email", `${h2}@x.com`, "--password", "x"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option");
  });

  test("whoami --json has a stable shape; --server overrides WSYNC_SERVER", async () => {
    const me = JSON.parse(await alice.cli.ok(["whoami", "--json"]));
    expect(keysOf(me)).toEqual(WHOAMI_KEYS);
    expect(me).toMatchObject({ did: alice.did, handle: alice.handle, email: alice.email, server: t.url });
    expect(me.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(typeof me.publicKey).toBe("string");
    const human = await alice.cli.ok(["whoami"]);
    expect(human).toContain(alice.handle);
    expect(human).toContain(`fingerprint: ${me.fingerprint}`);
    const down = `http://127.0.0.1:${await closedPort()}`;
    const viaFlag = await alice.cli.ok(["--server", t.url, "whoami", "--json"], {
      env: { WSYNC_SERVER: down },
    });
    expect(JSON.parse(viaFlag).did).toBe(alice.did);
  });

  test("keys export, logout, login (stdin and WSYNC_PASSWORD) and keys import", async () => {
    const dave = await registerCli(t.url, "dave");
    const key = (await dave.cli.ok(["keys", "export"])).trim();
    expect(key).toMatch(/^[A-Za-z0-9+/]+=*$/);

    // Without a terminal, removing the key takes --yes (tests/cli/key-custody.test.ts).
    expect(await dave.cli.ok(["logout", "--yes"])).toBe("Signed out\n");
    const store = readFileSync(dave.cli.storeFile, "utf8");
    expect(store).not.toContain(key);
    expect(store).not.toContain("accessJwt");
    const gone = await dave.cli.run(["whoami"]);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toContain("Not signed in");

    const wrong = await dave.cli.run(["login", "--identifier", dave.handle, "--password-stdin"], {
      stdin: "not the password\n",
    });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain("Invalid credentials");

    const login = await dave.cli.run(["login", "--identifier", dave.handle, "--password-stdin"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(login.code).toBe(0);
    expect(login.stdout).toBe(`Signed in as ${dave.handle}\n`);
    expect(login.stderr).toContain("wsync keys import");
    // Signed in, but logout removed the private key: commands that need it say so.
    const noKey = await dave.cli.run(["whoami"]);
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toContain("keys import");

    // Someone else's key is refused.
    const other = (await alice.cli.ok(["keys", "export"])).trim();
    const refused = await dave.cli.run(["keys", "import", "--text"], { stdin: other });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("does not belong to your account");

    expect(await dave.cli.ok(["keys", "import", "--text"], { stdin: `${key}\n` })).toBe(
      "Private key restored\n",
    );
    expect((await dave.cli.ok(["keys", "export"])).trim()).toBe(key);
    expect(JSON.parse(await dave.cli.ok(["whoami", "--json"])).did).toBe(dave.did);

    // Logging in by e-mail with WSYNC_PASSWORD works as well.
    await dave.cli.ok(["logout", "--yes"]);
    const byEmail = await dave.cli.run(["login", "--identifier", dave.email], {
      env: { WSYNC_PASSWORD: PASSWORD },
    });
    expect(byEmail.code).toBe(0);
    expect(byEmail.stdout).toBe(`Signed in as ${dave.handle}\n`);
    expect(mode(dave.cli.storeFile)).toBe(0o600);
  });
});

describe("channels and messages", () => {
  test("create: a secret channel prints its link, a public one its id; channels --json", async () => {
    const secret = await alice.cli.run(["create", "backroom", "--type", "secret", "--description", "quiet"]);
    expect(secret.code).toBe(0);
    link = secret.stdout.trim();
    expect(link).toMatch(/\/sync\/join\/[a-z2-7]{16}#\S+$/);
    expect(secret.stderr).toContain("Share this link");
    channelId = /\/sync\/join\/([a-z2-7]{16})#/.exec(link)?.[1] as string;

    const pub = (await alice.cli.ok(["create", "lobby", "--type", "public"])).trim();
    expect(pub).toMatch(/^[a-z2-7]{16}$/);

    const channels = JSON.parse(await alice.cli.ok(["channels", "--json"])) as Record<string, unknown>[];
    for (const c of channels) expect(keysOf(c)).toEqual(CHANNEL_KEYS);
    expect(channels.find((c) => c.id === channelId)).toMatchObject({
      name: "backroom",
      type: "secret",
      description: "quiet",
      isMember: true,
      role: "owner",
      memberCount: 1,
    });
    expect(channels.find((c) => c.id === pub)).toMatchObject({ name: "lobby", type: "public" });
    const human = await alice.cli.ok(["channels"]);
    expect(human).toContain("@ #backroom");
    expect(human).toContain(channelId);
  });

  test("join by link from another config dir; send (argument and stdin); read (human and --json)", async () => {
    expect(await bob.cli.ok(["join", link])).toBe(`Joined #backroom (${channelId})\n`);
    const sent = (await alice.cli.ok(["send", channelId, "hello from alice"])).trim();
    expect(sent).toMatch(new RegExp(`^at://${alice.did}/`));
    await bob.cli.ok(["send", "#backroom", "-"], { stdin: "line one\nline two\n" });
    // Extra words are the message, joined as echo joins them.
    await bob.cli.ok(["send", "#backroom", "two", "words"]);

    for (const who of [alice, bob]) {
      const items = JSON.parse(await who.cli.ok(["read", channelId, "--json"])) as ItemJson[];
      for (const i of items) expect(keysOf(i)).toEqual(ITEM_KEYS);
      const messages = items.filter((i) => i.kind === "message");
      expect(messages.map((i) => [i.text, i.author.did, i.verified, i.state])).toEqual([
        ["hello from alice", alice.did, true, "success"],
        ["line one\nline two", bob.did, true, "success"],
        ["two words", bob.did, true, "success"],
      ]);
      expect(messages[0]?.uri).toBe(sent);
      expect(items.some((i) => i.kind === "notify" && i.author.did === bob.did)).toBe(true);
    }
    const human = await bob.cli.ok(["read", "#backroom"]);
    expect(human).toContain(`${alice.handle} ✓ hello from alice`);
    expect(human).toContain(`→ ${bob.handle} joined`);
    const last = await bob.cli.ok(["read", channelId, "--json", "--limit", "1"]);
    expect((JSON.parse(last) as ItemJson[]).map((i) => i.text)).toEqual(["two words"]);
  });

  test("tail --json prints one NDJSON line per new message and stops on Ctrl+C", async () => {
    const tail = bob.cli.spawn(["tail", channelId, "--json"]);
    try {
      const err = new LineReader(tail.stderr);
      const out = new LineReader(tail.stdout);
      await err.waitFor((l) => l.startsWith("Following"), 15_000, "tail to start following");
      await alice.cli.ok(["send", channelId, "live one"]);
      const line = await out.waitFor((l) => l.includes("live one"), 10_000, "the tailed message");
      const item = JSON.parse(line) as ItemJson;
      expect(keysOf(item)).toEqual(ITEM_KEYS);
      expect(item).toMatchObject({ kind: "message", text: "live one", verified: true, state: "success" });
      expect(item.author.did).toBe(alice.did);
      // Every stdout line is one JSON object.
      for (const l of out.lines) expect(() => JSON.parse(l)).not.toThrow();
      tail.kill("SIGINT");
      expect(await tail.exited).toBe(0);
    } finally {
      tail.kill("SIGKILL");
    }
  });

  test("members --json and the human list", async () => {
    const members = JSON.parse(await alice.cli.ok(["members", channelId, "--json"])) as Record<
      string,
      unknown
    >[];
    for (const m of members) expect(keysOf(m)).toEqual(MEMBER_KEYS);
    expect(members.map((m) => [m.handle, m.isOwner]).sort()).toEqual(
      [
        [alice.handle, true],
        [bob.handle, false],
      ].sort(),
    );
    const me = JSON.parse(await alice.cli.ok(["whoami", "--json"]));
    expect(members.find((m) => m.did === alice.did)?.fingerprint).toBe(me.fingerprint);
    const human = await bob.cli.ok(["members", "#backroom"]);
    expect(human).toContain(`${alice.handle} [OP]  ${me.fingerprint}`);
  });

  test("verify HANDLE prints both safety numbers, and each side sees the other's", async () => {
    const bobName = bob.handle.replace(/\.test$/, "");
    const a = await alice.cli.ok(["verify", bobName]);
    const b = await bob.cli.ok(["verify", alice.handle]);
    const number = /((?:\d{5} ){5}\d{5})/;
    const aMine = number.exec(/Your safety number:\s+(.*)/.exec(a)?.[1] ?? "")?.[1];
    const aTheirs = number.exec(new RegExp(`${bobName}'s safety number:\\s+(.*)`).exec(a)?.[1] ?? "")?.[1];
    const bMine = number.exec(/Your safety number:\s+(.*)/.exec(b)?.[1] ?? "")?.[1];
    const bTheirs = number.exec(/'s safety number:\s+(.*)/.exec(b)?.[1] ?? "")?.[1];
    expect(aMine).toBeDefined();
    expect(aTheirs).toBeDefined();
    expect(aMine).not.toBe(aTheirs);
    expect(bMine).toBe(aTheirs as string);
    expect(bTheirs).toBe(aMine as string);
    // The combined number is the same on both sides (ordered by did, not by who asks).
    const together = (out: string) => /Together: (.*)/.exec(out)?.[1];
    const ordered = alice.did < bob.did ? `${aMine} ${aTheirs}` : `${aTheirs} ${aMine}`;
    expect(together(a)).toBe(ordered);
    expect(together(b)).toBe(ordered);
    const nobody = await alice.cli.run(["verify", "nobody-here"]);
    expect(nobody.code).toBe(4);
  });
});

describe("errors", () => {
  test("exit codes: usage 2, auth 3, not found 4, network 5, conflict 8; one `wsync:` line each", async () => {
    const cases: [string, Promise<{ code: number; stderr: string }>, number, string][] = [
      ["unknown channel id", alice.cli.run(["read", "aaaaaaaaaaaaaaaa"]), 4, "not found"],
      ["unknown #name", alice.cli.run(["read", "#no-such-channel"]), 4, "not in a channel named"],
      ["not a channel reference", alice.cli.run(["read", "nope"]), 2, "Not a channel id"],
      ["bad --type", alice.cli.run(["create", "x", "--type", "bogus"]), 2, "--type must be one of"],
      ["missing --type", alice.cli.run(["create", "x"]), 2, "required option"],
      ["bad --limit", alice.cli.run(["read", channelId, "--limit", "0"]), 2, "--limit must be 1 to 10000"],
      ["empty message", alice.cli.run(["send", channelId, "-"], { stdin: "\n" }), 2, "empty"],
      // The root command has an action (the screen), so commander reports extra arguments here.
      ["unknown command", alice.cli.run(["frobnicate"]), 2, "frobnicate"],
      ["unknown option", alice.cli.run(["read", channelId, "--nope"]), 2, "unknown option"],
      [
        "bad server URL",
        alice.cli.run(["whoami"], { env: { WSYNC_SERVER: "ftp://x" } }),
        2,
        "Not a server URL",
      ],
      ["not signed in", new Cli(t.url).run(["channels"]), 3, "Not signed in"],
      ["join of no channel reference", alice.cli.run(["join", "not a link"]), 2, "Invalid channel"],
      ["kick by a non-owner", alice.cli.run(["kick", "nope", "x"]), 2, "Not a channel id"],
      ["topic cannot be set", alice.cli.run(["topic", channelId, "new", "topic"]), 2, "no way to change it"],
      [
        "a taken handle",
        new Cli(t.url).run(
          [
            "register",
            "--handle",
            alice.handle.split(".")[0] as string,
            "--email",
            "t@x.com",
            "--password-stdin",
          ],
          {
            stdin: PASSWORD,
          },
        ),
        8,
        "Handle is already taken",
      ],
      // No terminal: the screen refuses in one line with what to use instead (no Ink stack trace).
      ["the screen without a terminal", alice.cli.run([]), 2, "needs a terminal"],
    ];
    const results = await Promise.all(cases.map((c) => c[1]));
    // Every error is exactly one line on standard error, starting with `wsync: `.
    for (const r of results) expect(r.stderr).toMatch(/^wsync: [^\n]+\n$/);
    results.forEach((r, i) => {
      const [what, , code, message] = cases[i] as (typeof cases)[number];
      expect({
        what,
        code: r.code,
        hasMessage: r.stderr.toLowerCase().includes(message.toLowerCase()),
      }).toEqual({ what, code, hasMessage: true });
    });
  });

  test("a server that is down exits 5, signed in or not", async () => {
    const port = await closedPort();
    const down = `http://127.0.0.1:${port}`;
    const h = uniqueHandle("erin");
    const reg = await new Cli(down).run(
      ["register", "--handle", h, "--email", `${h}@x.com`, "--password-stdin"],
      {
        stdin: PASSWORD,
      },
    );
    expect(reg.code).toBe(5);
    expect(reg.stderr).toContain("Cannot reach the server");
    // alice's signed-in store, pointed at a server that is not there.
    const cli = new Cli(down);
    mkdirSync(cli.configDir, { recursive: true, mode: 0o700 });
    copyFileSync(alice.cli.storeFile, cli.storeFile);
    for (const args of [["whoami"], ["read", channelId], ["send", channelId, "hi"]]) {
      const r = await cli.run(args);
      expect({ args, code: r.code }).toEqual({ args, code: 5 });
      expect(r.stderr).toContain("Cannot reach the server");
    }
  });

  test("--help on every command exits 0", async () => {
    const commands = [
      [],
      ["serve"],
      ["register"],
      ["login"],
      ["logout"],
      ["whoami"],
      ["keys"],
      ["keys", "export"],
      ["keys", "import"],
      ["keys", "new"],
      ["keys", "backup"],
      ["keys", "restore"],
      ["channels"],
      ["create"],
      ["join"],
      ["leave"],
      ["invite"],
      ["link"],
      ["link", "show"],
      ["link", "rotate"],
      ["members"],
      ["send"],
      ["read"],
      ["tail"],
      ["verify"],
      ["kick"],
      ["topic"],
      ["listen"],
      ["api"],
    ];
    const cli = new Cli(t.url);
    const results = await Promise.all(commands.map((c) => cli.run([...c, "--help"])));
    results.forEach((r, i) => {
      const name = ["wsync", ...(commands[i] as string[])].join(" ");
      expect({ name, code: r.code, usage: r.stdout.includes(`Usage: ${name}`) }).toEqual({
        name,
        code: 0,
        usage: true,
      });
    });
    const version = await cli.run(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
