/**
 * Issue 29, bots: `wsync bot create|list|revoke`, a bot acting with WSYNC_BOT_TOKEN (or
 * --token-file) in the channels it was given and nowhere else, `api --listen` (answers and events in
 * one stream), `unread`/`markRead`, the typed client package with the example ping bot, and
 * `retryAfter` in `api` answers and `--json` errors.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { ChannelJson, ItemJson, MemberJson } from "../../cli/format.ts";
import type { ChannelInfo, Item, MemberInfo } from "../../packages/bot/index.ts";
import { ManualClock, NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import {
  Cli,
  type CliUser,
  cleanupTempDirs,
  LineReader,
  REPO_ROOT,
  registerCli,
  tempDir,
} from "./cli-harness.ts";

// The package's types are the CLI's JSON (checked by the typechecker, as part of the suite).
export const sameShapes: [
  (x: ItemJson) => Item,
  (x: MemberJson) => MemberInfo,
  (x: ChannelJson) => ChannelInfo,
] = [(x) => x, (x) => x, (x) => x];

let t: TestServer;
let owner: CliUser;
let friend: CliUser;
let token = "";
const botHome = tempDir("wsync-bot-");
const procs: Subprocess[] = [];

const json = (line: string) => JSON.parse(line) as Record<string, unknown>;

/** A long-running wsync of `home`'s device with standard input to write to. */
function start(home: string, args: string[], env: Record<string, string> = {}) {
  const started = new Cli(t.url, { configHome: home }).start(args, { env });
  procs.push(started.proc);
  return started;
}

const asBot = () => ({ env: { WSYNC_BOT_TOKEN: token, XDG_CONFIG_HOME: botHome } });

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  owner = await registerCli(t.url, "botowner");
  friend = await registerCli(t.url, "friend");
  await owner.cli.ok(["create", "g", "--type", "public"]);
  await owner.cli.ok(["create", "h", "--type", "secret"]);
  await owner.cli.ok(["create", "other", "--type", "public"]);
  const g = (await owner.cli.ok(["channels", "--json"])).trim();
  const gid = (JSON.parse(g) as { id: string; name: string }[]).find((c) => c.name === "g")?.id ?? "";
  await friend.cli.ok(["join", gid]);
});

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await t?.stop();
  cleanupTempDirs();
});

describe("bot accounts from the command line", () => {
  test("bot create prints the credential once (stdout only); extra arguments and no --channel are exit 2", async () => {
    const extra = await owner.cli.run(["bot", "create", "pingbot", "junk", "--channel", "#g"]);
    expect(extra.code).toBe(2);
    const none = await owner.cli.run(["bot", "create", "pingbot"]);
    expect(none.code).toBe(2);
    expect((await owner.cli.run(["bot", "list", "junk"])).code).toBe(2);
    const made = await owner.cli.run(["bot", "create", "pingbot", "--channel", "#g", "--channel", "#h"]);
    expect(made.code).toBe(0);
    token = made.stdout.trim();
    expect(token).toMatch(/^wsb_[a-z2-7]{16}_[a-z2-7]{52}\.[A-Za-z0-9_-]+$/);
    expect(made.stderr).toContain("shown only this once");
    expect(made.stderr).not.toContain(token.slice(21, 40));
    const list = JSON.parse(await owner.cli.ok(["bot", "list", "--json"])) as {
      handle: string;
      channels: { name: string }[];
      revokedAt: string | null;
    }[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ handle: "pingbot.test", revokedAt: null });
    expect(list[0]?.channels.map((c) => c.name)).toEqual(["#g", "#h"]);
  });

  test("the bot joins its channels (public and secret) and sends there; not elsewhere; no account commands", async () => {
    const sent = await owner.cli.run(["send", "#h", "hello from the bot"], asBot());
    expect(sent.code).toBe(0);
    expect(await owner.cli.ok(["read", "#h"])).toMatch(/pingbot\.test ✓ hello from the bot/);
    // From a file instead of the environment: the same bot, the same store.
    const file = join(botHome, "token");
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    expect(
      await owner.cli.ok(["--token-file", file, "send", "#g", "hi g"], { env: { XDG_CONFIG_HOME: botHome } }),
    ).toContain("chat.wsync.message");
    const channels = JSON.parse(await owner.cli.ok(["channels", "--json"], asBot())) as { name: string }[];
    expect(channels.map((c) => c.name).sort()).toEqual(["g", "h"]);
    const other = await owner.cli.run(["send", "#other", "x"], asBot());
    expect(other.code).toBe(4);
    const joined = await owner.cli.run(
      [
        "join",
        (await owner.cli.ok(["channels", "--json"])).match(
          /"id":"([a-z2-7]{16})","uri":"[^"]*","name":"other"/,
        )?.[1] ?? "",
        "--json",
      ],
      asBot(),
    );
    expect(joined.code).not.toBe(0);
    expect(json(joined.stderr.trim()).error).toMatchObject({
      message: "This bot token is not allowed in that channel",
    });
    for (const args of [
      ["keys", "backup", "--status"],
      ["bot", "list"],
      ["device", "link", "--yes"],
    ]) {
      const r = await owner.cli.run(args, asBot());
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
    }
  });

  test("api --listen: events and tagged answers on one stream; unread and markRead", async () => {
    const api = start(botHome, ["api", "--listen", "--no-self"], { WSYNC_BOT_TOKEN: token });
    await api.err.waitFor((l) => l.startsWith("Listening to 2 channel"), 30_000, "api --listen ready");
    let id = 0;
    const request = async (method: string, params: Record<string, unknown> = {}) => {
      const rid = `q${++id}`;
      api.proc.stdin.write(`${JSON.stringify({ id: rid, method, params })}\n`);
      api.proc.stdin.flush();
      return json(await api.out.waitFor((l) => json(l).id === rid, 20_000, `answer ${rid}`));
    };
    await request("markRead", { channel: "#g" });
    await friend.cli.ok(["send", "#g", "@pingbot are you there"]);
    await friend.cli.ok(["send", "#g", "second"]);
    const ev = json(await api.out.waitFor((l) => json(l).text === "second", 20_000, "the event"));
    expect(ev).toMatchObject({ type: "item", kind: "message", channel: "g" });
    const unread = await request("unread", { channel: "#g" });
    expect(unread).toMatchObject({ type: "response", ok: true });
    expect((unread.result as unknown[])[0]).toMatchObject({
      channel: "g",
      unread: 2,
      mentions: 1,
      complete: true,
    });
    const marked = await request("markRead", { channel: "#g" });
    expect(marked.result).toMatchObject({
      lastReadSeq: (unread.result as { lastSeq: number }[])[0]?.lastSeq,
    });
    expect(((await request("unread", { channel: "#g" })).result as { unread: number }[])[0]?.unread).toBe(0);
    api.proc.stdin.end();
    expect(await api.proc.exited).toBe(0);
  });

  test("the example bot (packages/bot) answers !ping with pong in each of its channels; revoking it stops it (exit 3)", async () => {
    const bot = Bun.spawn([process.execPath, "examples/ping-bot.ts"], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        WSYNC_BOT_TOKEN: token,
        WSYNC_SERVER: t.url,
        XDG_CONFIG_HOME: botHome,
        WSYNC_CMD: `${process.execPath} cli/main.ts`,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    procs.push(bot);
    const err = new LineReader(bot.stderr);
    await err.waitFor((l) => l.includes("is answering !ping"), 30_000, "the bot ready");
    const listen = start(owner.cli.configHome, ["listen", "--json"]);
    await listen.err.waitFor((l) => l.startsWith("Listening to"), 30_000, "owner listening");
    for (const channel of ["#g", "#h"]) {
      const ping = json(await owner.cli.ok(["send", channel, "!ping", "--json"]));
      const pong = json(
        await listen.out.waitFor(
          (l) =>
            json(l).text === "pong" &&
            (json(l).rich as { to?: { clientMsgId?: string } } | null)?.to?.clientMsgId === ping.clientMsgId,
          30_000,
          `pong in ${channel}`,
        ),
      );
      expect(pong).toMatchObject({
        author: { handle: "pingbot.test" },
        verified: true,
        rich: { type: "reply" },
      });
    }
    expect(await owner.cli.ok(["bot", "revoke", "pingbot"])).toContain("Revoked pingbot");
    expect(await bot.exited).toBe(3);
    const after = await owner.cli.run(["send", "#g", "x"], asBot());
    expect(after.code).toBe(3);
    const members = JSON.parse(await owner.cli.ok(["members", "#g", "--json"])) as { handle: string }[];
    expect(members.map((m) => m.handle)).not.toContain("pingbot.test");
    const list = JSON.parse(await owner.cli.ok(["bot", "list", "--json"])) as { revokedAt: string | null }[];
    expect(list[0]?.revokedAt).toEqual(expect.any(String));
  });
});

describe("retryAfter", () => {
  test("a rate-limited request says how long to wait: in api answers and in a --json command's error line", async () => {
    // 30 messages at once (WSYNC_RATE_LIMIT_SCALE scales every limit), and a server clock that does
    // not move, so no bucket refills while the test runs. The channel bucket (6 at this scale) is
    // spent by create and each process's socket join: it must not be the one that runs out first.
    const slow = await startTestServer({ clock: new ManualClock(), env: { WSYNC_RATE_LIMIT_SCALE: "0.1" } });
    try {
      const user = await registerCli(slow.url, "hasty");
      await user.cli.ok(["create", "slow", "--type", "public"]);
      const input = Array.from({ length: 31 }, (_, i) => `m${i}`)
        .map((text, i) => JSON.stringify({ id: i, method: "send", params: { channel: "#slow", text } }))
        .join("\n");
      const out = (await user.cli.ok(["api"], { stdin: `${input}\n` })).trim().split("\n").map(json);
      // The first answers are sent; once the bucket is empty (30, or fewer if the client had to retry
      // one over HTTP), the refusal says how long to wait.
      expect(out[0]).toMatchObject({ id: 0, ok: true });
      const refused = out.find((a) => a.ok === false) as
        | { id: number; error: { code: number; message: string; retryAfter: unknown } }
        | undefined;
      expect(refused?.error.code).toBe(1);
      expect(refused?.error.message).toMatch(/^Too many message writes: try again in \d+ s$/);
      expect(refused?.error.retryAfter).toBeGreaterThan(0);
      const cmd = await user.cli.run(["send", "#slow", "c", "--json"]);
      expect(cmd.code).toBe(1);
      expect(cmd.stdout).toBe("");
      const line = json(cmd.stderr.trim());
      expect((line.error as { code: number }).code).toBe(1);
      expect((line.error as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
      expect((line.error as { message: string }).message).toMatch(/try again in \d+ s/);
      // Without --json the human line is unchanged. (A cold process joins the channel's socket
      // first, which counts as a channel write: whichever limit it meets first answers.)
      const human = await user.cli.run(["send", "#slow", "d"]);
      expect(human.stderr).toMatch(/^wsync: Too many (message|channel) writes: try again in \d+ s\n$/);
    } finally {
      await slow.stop();
    }
  });
});
