/**
 * Issue 30, CLI: `wsync dm`, and a bot that answers a direct message through `listen --json` and
 * `api` (its `dm` method), with the conversation in the stream. Bad arguments are exit 2.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type Cli, type CliUser, cleanupTempDirs, registerCli } from "./cli-harness.ts";

let t: TestServer;
let bot: CliUser;
let human: CliUser;
const procs: Subprocess[] = [];

beforeAll(async () => {
  t = await startTestServer();
  bot = await registerCli(t.url, "dmbot");
  human = await registerCli(t.url, "dmhuman");
});

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await t?.stop();
  cleanupTempDirs();
});

function start(cli: Cli, args: string[]) {
  const started = cli.start(args);
  procs.push(started.proc);
  return started;
}

const json = (line: string) => JSON.parse(line) as Record<string, unknown>;

describe("wsync dm", () => {
  test("a bot answers a direct message through listen --json and api", async () => {
    const listen = start(bot.cli, ["listen", "--json"]);
    await listen.err.waitFor((l) => l.startsWith("Listening to"), 20_000, "listen ready");
    const api = start(bot.cli, ["api"]);
    let nextId = 0;
    const request = async (method: string, params: Record<string, unknown>) => {
      const id = `r${++nextId}`;
      api.proc.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
      api.proc.stdin.flush();
      return json(await api.out.waitFor((l) => json(l).id === id, 20_000, `answer ${id}`));
    };

    // A stranger writes to the bot: one command opens the conversation and sends.
    const sent = json(await human.cli.ok(["dm", bot.handle, "ping", "please", "--json"]));
    const conversation = sent.conversation as Record<string, unknown>;
    expect(conversation).toMatchObject({ kind: "pair", with: [{ did: bot.did }], request: false });
    expect(sent.item).toMatchObject({ text: "ping please", verified: true });
    const channelId = conversation.channelId as string;

    // The bot's stream announces the conversation (a request: they share no channel), then the message.
    const opened = json(
      await listen.out.waitFor((l) => json(l).type === "conversation", 20_000, "conversation"),
    );
    expect(opened).toMatchObject({ channelId, kind: "pair", request: true, openedBy: { did: human.did } });
    const item = json(
      await listen.out.waitFor(
        (l) => json(l).type === "item" && json(l).text === "ping please",
        20_000,
        "the ping",
      ),
    );
    expect(item).toMatchObject({
      channelId,
      direct: true,
      channel: human.handle,
      verified: true,
      author: { did: human.did },
    });

    // It answers through api, by handle (dm) and by the channel id the stream gave (send).
    const byDm = await request("dm", { handle: (item.author as { handle: string }).handle, text: "pong" });
    expect(byDm).toMatchObject({ ok: true, result: { conversation: { channelId }, item: { text: "pong" } } });
    const bySend = await request("send", { channel: channelId, text: "pong again" });
    expect(bySend).toMatchObject({ ok: true, result: { text: "pong again" } });

    // The human reads both, verified, in the same conversation (`dm` without text prints it).
    const read = json(await human.cli.ok(["dm", bot.handle, "--json"]));
    expect((read.conversation as Record<string, unknown>).channelId).toBe(channelId);
    const texts = (read.items as { text: string | null; verified: boolean; author: { did: string } }[])
      .filter((i) => i.author.did === bot.did)
      .map((i) => [i.text, i.verified]);
    expect(texts).toEqual([
      ["pong", true],
      ["pong again", true],
    ]);
    // And the conversation is never among the channels.
    expect(await human.cli.ok(["channels", "--json"])).not.toContain(channelId);
  }, 90_000);

  test("bad arguments are refused with exit 2, before anything is sent", async () => {
    for (const args of [
      ["dm"],
      ["dm", "not a handle!", "hi"],
      ["dm", "a,b,c,d,e,f,g,h,i", "hi"],
      ["dm", bot.handle, "   "],
      ["dm", bot.handle, "hi", "--bogus"],
    ]) {
      const r = await human.cli.run(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr.startsWith("wsync: ")).toBe(true);
    }
    const unknown = await human.cli.run(["dm", "nobody-here-at-all", "hi"]);
    expect(unknown.code).toBe(4);
  }, 60_000);
});
